// The WHEP server as a ladder's sink: every viewer the layer its estimate allows.
import FormatConv
import MediaCore
import MediaIO
import WebRTC

/// A ``WHEPServer`` fed by a ``LivePipeline`` with a ladder: each frame's layers go to
/// `WHEPServer.send(layers:bitRates:)`, so each viewer gets the layer its own estimate allows, changed at
/// keyframes; a viewer's keyframe request (one that joined, a PLI, a change of layer waiting) becomes a
/// keyframe request to the pipeline, which forces one in every layer. Turn the server's probing on
/// (`WHEPServer.Configuration.congestionControl`'s `probing`) so that a viewer on a lower layer can move up.
public final class WHEPLadderSink: LiveLadderSink, LiveAudienceSink {
    /// The server the layers go to.
    public let server: WHEPServer
    /// The ladder sent.
    public let ladder: LiveLadder
    private let bitRates: [Int]

    /// Sends `ladder`'s layers through `server`.
    public init(server: WHEPServer, ladder: LiveLadder) {
        self.server = server
        self.ladder = ladder
        bitRates = ladder.layers.map(\.bitRate)
    }

    /// Sends one frame's layers to the viewers; the keyframe requests that came meanwhile.
    public func sendLive(layers samples: [CompressedSample]) throws(MediaError) -> StreamFeedback {
        guard samples.count == bitRates.count else {
            throw .invalidArgument("\(samples.count) samples for a ladder of \(bitRates.count) layers")
        }
        try server.poll(timeoutMilliseconds: 0)
        server.send(layers: samples, bitRates: bitRates)
        return StreamFeedback(keyframeRequests: server.takeKeyframeRequest() ? 1 : 0)
    }

    /// One encode for every viewer (``WHEPServer/sendLive(_:)``).
    public func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        try server.sendLive(sample)
    }

    /// Serves HTTP, ICE, DTLS and RTCP for up to `seconds`; keyframe requests only (the layers keep their rates).
    public func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        try server.poll(timeoutMilliseconds: Int32(clamping: Int((max(0, seconds) * 1000).rounded(.up))))
        return StreamFeedback(keyframeRequests: server.takeKeyframeRequest() ? 1 : 0)
    }

    /// Ends the media (`WHEPServer.endStream()`).
    public func finishLive() throws(MediaError) { server.endStream() }

    /// The server's viewers with SRTP keys in place.
    public var audienceCount: Int { server.connectedViewerCount }
    /// Drops the keyframe requests of the viewers that joined: the first frame is a keyframe.
    public func audienceWillStart() { server.audienceWillStart() }
}
