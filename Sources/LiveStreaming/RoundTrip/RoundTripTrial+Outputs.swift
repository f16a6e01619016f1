// The trial with its stream also saved as Annex-B and served to browsers.
import DecodeSession
import FormatConv
import MediaCore
import MediaIO
import WebStreaming

extension RoundTripTrial {
    /// Runs the trial (``run(onEncoded:onDecoded:)``) with every access
    /// unit encoded also written as Annex-B to `streamPath` (parameter sets
    /// before each keyframe) and sent to the clients of `web` (the page
    /// server `codecs demo --http` starts). With a server, the trial starts
    /// when its first WebSocket client connects, or returns nil when
    /// ``Configuration/stopRequested`` says so first; the server is polled
    /// before each access unit and left open for its owner to close.
    public func run(
        savingStreamTo streamPath: String?, serving web: WebStreamServer?,
        onDecoded: (@Sendable (DecodedFrame) -> Void)? = nil
    ) throws(MediaError) -> Report? {
        if let web {
            while web.clientCount == 0 {
                if configuration.stopRequested() { return nil }
                try web.poll(timeoutMilliseconds: 50)
            }
        }
        var saved: (writer: AnnexBWriter, file: FileByteSink, bytes: [UInt8])? = nil
        if let streamPath {
            saved = (AnnexBWriter(policy: .beforeEveryKeyframe), try FileByteSink(path: streamPath), [])
        }
        defer { try? saved?.file.close() }
        let report = try run(
            onEncoded: { sample throws(MediaError) in
                if let web {
                    try? web.poll(timeoutMilliseconds: 0)
                    web.send(sample)
                }
                if var copy = saved {
                    saved = nil
                    copy.bytes.removeAll(keepingCapacity: true)
                    try copy.writer.write(sample, into: &copy.bytes)
                    try copy.file.write(copy.bytes)
                    saved = copy
                }
            }, onDecoded: onDecoded)
        try saved?.file.close()
        return report
    }
}
