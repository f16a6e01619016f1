import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// MediaIO's receiver for `tcp://HOST:PORT`: it connects on its first
/// `next()`, again while the server is not listening yet, tells the codec
/// from the bytes when it is not given, and a stop request ends the tries.
struct MediaStreamReceiverTCPTests {
    /// FFmpeg starts listening a second after the receiver's first try; the
    /// receiver, given no codec, hands out HEVC access units that decode (by
    /// FFmpeg) to the frames of the file sent.
    @Test func connectsOnceTheServerListensAndTellsHEVC() throws {
        let sent = try Sent(codec: "hevc")
        let port = try freePort(.tcp)
        let peer = try Peer(
            "sh",
            [
                "-c", "sleep 1; exec ffmpeg \"$@\"", "ffmpeg", "-nostdin", "-v", "error", "-i", sent.encoded, "-c",
                "copy",
            ]
                + ["-f", "hevc", "tcp://127.0.0.1:\(port)?listen=1"])
        defer { peer.stop() }
        let receiver = try MediaStreamReceiver(url: "tcp://127.0.0.1:\(port)", idleTimeout: 20)
        var dropped = 0
        receiver.nalUnitsDropped = { count, _ in dropped += count }
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var bytes: [UInt8] = []
        var samples = 0
        while let event = try receiver.next() {
            guard case .sample(let sample) = event else { continue }
            #expect(sample.formatDescription.codec == .hevc)
            bytes += try writer.write(sample)
            samples += 1
        }
        #expect(samples == 30, "\(receiver.endNote ?? "")")
        #expect(dropped == 0)
        #expect(receiver.endNote == "the server closed the connection")
        let output = sent.directory.path("received.hevc")
        try Data(bytes).write(to: URL(fileURLWithPath: output))
        #expect(try referenceHashes(output) == sent.hashes)
    }

    /// Nobody listens: the tries end with the error after `idleTimeout`, or
    /// with the end of the stream (no error) when a stop is requested.
    @Test func refusedTriesEndWithTheTimeoutOrAStop() throws {
        let port = try freePort(.tcp)
        let refused = try MediaStreamReceiver(url: "tcp://127.0.0.1:\(port)", idleTimeout: 0.3)
        #expect(throws: MediaError.self) { _ = try refused.next() }

        let stopped = try MediaStreamReceiver(url: "tcp://127.0.0.1:\(port)", idleTimeout: 60)
        stopped.stopRequested = StopRequestTests.stop(after: 0.3)
        let started = Date()
        #expect(try stopped.next() == nil)
        #expect(Date().timeIntervalSince(started) < 30)
    }
}
