import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import TestSupport
import Testing

/// Feedback is kept in the sender until it is taken: a picture loss
/// indication that arrives while the sender paces reaches the next take
/// exactly once, and nothing is left for the take after it.
struct StreamFeedbackTests {
    static func samples() throws -> [CompressedSample] {
        var properties = CompressionProperties()
        properties.preset = "ultrafast"
        properties.realTime = true
        let session = try CompressionSession(
            width: 160, height: 96, codec: .h264, encoder: .software, properties: properties)
        return try encodeClip(session, count: 4)
    }

    /// A PLI for `sender`'s stream, sent to its report socket.
    static func requestKeyframe(of sender: RTPStreamSender, from peer: UDPSocket) throws {
        let datagram = RTCPPacket.compound([
            .receiverReport(ssrc: 0xFEED, reports: []),
            .pictureLossIndication(senderSSRC: 0xFEED, mediaSSRC: sender.ssrc),
        ])
        try peer.send(datagram, to: sender.localAddresses.rtcp)
    }

    /// A bound RTP/RTCP port pair for the stream to go to (never read) and
    /// a sender to it.
    static func stream() throws -> (RTPStreamReceiver, RTPStreamSender) {
        let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port, configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED)))
        return (receiver, sender)
    }

    @Test func aKeyframeRequestWhilePacingReachesTheNextSendOnce() throws {
        let samples = try Self.samples()
        let (receiver, sender) = try Self.stream()
        let peer = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        #expect(try sender.send(samples[0]) == StreamFeedback())
        try Self.requestKeyframe(of: sender, from: peer)
        try sender.pace(for: 0.2)  // the request arrives while pacing
        #expect(try sender.send(samples[1]) == StreamFeedback(keyframeRequested: true))
        #expect(sender.takeFeedback() == StreamFeedback())
        #expect(try sender.send(samples[2]) == StreamFeedback())
        _ = receiver
    }

    @Test func aKeyframeRequestWhileWaitingAsyncIsTakenOnce() async throws {
        let samples = try Self.samples()
        let (receiver, sender) = try Self.stream()
        let peer = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        #expect(try sender.send(samples[0]) == StreamFeedback())
        try Self.requestKeyframe(of: sender, from: peer)
        try await sender.wait(until: .now + .milliseconds(200))
        #expect(sender.takeFeedback() == StreamFeedback(keyframeRequested: true))
        #expect(sender.takeFeedback() == StreamFeedback())
        try await sender.close(lingering: .milliseconds(20))
        _ = receiver
    }

    @Test func aMediaStreamSenderHandsTheRequestToItsNextTake() async throws {
        let samples = try Self.samples()
        let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))
        let sender = try MediaStreamSender(
            url: "rtp://127.0.0.1:\(receiver.port)",
            rtp: .init(configuration: { _ in .init(packetizer: .init(codec: .h264, ssrc: 0x5EED)) }))
        #expect(try await sender.send(paced: samples[0]) == StreamFeedback())
        let rtp = try #require(sender.rtpSender)
        let peer = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        try Self.requestKeyframe(of: rtp, from: peer)
        // Due 0.2 s after the first sample: the request arrives meanwhile.
        let first = samples[0].dts.isValid ? samples[0].dts : samples[0].pts
        let due = first + MediaTime(value: 200, timescale: 1000)
        #expect(try await sender.waitUntilDue(due) == StreamFeedback(keyframeRequested: true))
        #expect(try sender.send(samples[1]) == StreamFeedback())
        _ = receiver
    }
}

extension StreamFeedback {
    init(keyframeRequested: Bool) {
        self.init()
        self.keyframeRequested = keyframeRequested
    }
}
