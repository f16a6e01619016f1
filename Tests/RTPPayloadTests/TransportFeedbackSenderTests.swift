// RTPSenderSession's transport-cc edges: send times updated by a pacer, REMB for
// other streams, malformed feedback, numbers it never sent.
import FormatConv
import MediaCore
import RTPPayload
import Testing

struct TransportFeedbackSenderTests {
    static let ssrc: UInt32 = 0xAAAA_0001

    static func sender() -> RTPSenderSession {
        RTPSenderSession(
            configuration: .init(
                packetizer: .init(codec: .h264, ssrc: ssrc), transportSequenceNumberExtensionID: 3,
                transportHistoryCapacity: 16))
    }

    static func reports(_ events: [RTPSenderEvent]) -> [RTPTransportFeedbackReport] {
        events.compactMap { if case .congestionFeedback(.transport(let report)) = $0 { report } else { nil } }
    }

    /// A pacer that sends a packet later than the session made it records the later time, and the feedback carries
    /// it; a datagram without this session's number is refused.
    @Test func recordSendTimeMovesThePacketsSendTime() throws {
        var sender = Self.sender()
        let packets = RTPSenderSessionTests.rtp(sender.sendPadding(bytes: 10, at: ms(0)))
        #expect(sender.nextTransportSequenceNumber == 1)
        let recorded = sender.recordSendTime(of: packets[0], at: ms(25))
        let foreign = sender.recordSendTime(of: handPacket(sequenceNumber: 1, timestamp: 0, payload: [1]), at: ms(30))
        #expect(recorded && !foreign)
        let feedback = RTCPTransportFeedback(
            senderSSRC: 9, mediaSSRC: Self.ssrc, baseSequenceNumber: 0, referenceTime: 0, feedbackPacketCount: 0,
            packets: [.received(delta: 8)])
        let report = try #require(
            Self.reports(sender.receiveRTCP(RTCPPacket.compound([feedback.rtcpPacket]), at: ms(40))).first)
        #expect(report.packets.map(\.sendTime) == [ms(25)])
        #expect(report.packets.map(\.arrivalTime) == [MediaTime(value: 2000, timescale: 1_000_000)])
    }

    /// Statuses for numbers never sent or already forgotten (the history keeps 16) are counted as unmatched; a
    /// feedback that does not parse is counted as malformed; a REMB for other SSRCs is not this stream's.
    @Test func unmatchedMalformedAndForeignFeedbackIsCounted() throws {
        var sender = Self.sender()
        for index in 0..<20 { _ = sender.sendPadding(bytes: 1, at: ms(Int64(index))) }
        let feedback = RTCPTransportFeedback(
            senderSSRC: 9, mediaSSRC: Self.ssrc, baseSequenceNumber: 2, referenceTime: 0, feedbackPacketCount: 0,
            packets: Array(repeating: .notReceived, count: 20))
        let report = try #require(
            Self.reports(sender.receiveRTCP(RTCPPacket.compound([feedback.rtcpPacket]), at: ms(30))).first)
        // Numbers 4…19 are in the history; 2 and 3 were forgotten, 20 and 21 never sent.
        #expect(report.packets.map(\.sequenceNumber) == Array(4...19))
        #expect(sender.statistics.transportFeedbackPacketsUnmatched == 4)
        let truncated = RTCPPacket.other(packetType: 205, count: 15, body: Array(feedback.body.prefix(16)))
        #expect(Self.reports(sender.receiveRTCP(RTCPPacket.compound([truncated]), at: ms(31))).isEmpty)
        #expect(sender.statistics.malformedFeedbackCount == 1)
        let foreign = RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 9, bitrate: 1000, ssrcs: [0x1234])
        #expect(sender.receiveRTCP(RTCPPacket.compound([foreign.rtcpPacket]), at: ms(32)).isEmpty)
        #expect(sender.statistics.rembCount == 0)
        #expect(sender.statistics.receiverEstimatedMaximumBitrate == nil)
    }

    /// Past 65 535 the wire's 16-bit numbers wrap; feedback across the wrap matches the extended numbers.
    @Test func feedbackAcrossTheWrapMatches() throws {
        var sender = Self.sender()
        for _ in 0..<65_538 { _ = sender.sendPadding(bytes: 1, at: ms(1)) }
        #expect(sender.nextTransportSequenceNumber == 65_538)
        let feedback = RTCPTransportFeedback(
            senderSSRC: 9, mediaSSRC: Self.ssrc, baseSequenceNumber: 65_534, referenceTime: 0, feedbackPacketCount: 0,
            packets: [.received(delta: 1), .notReceived, .received(delta: 2), .received(delta: 3)])
        let report = try #require(
            Self.reports(sender.receiveRTCP(RTCPPacket.compound([feedback.rtcpPacket]), at: ms(2))).first)
        #expect(report.packets.map(\.sequenceNumber) == [65_534, 65_535, 65_536, 65_537])
        #expect(report.packets.map { $0.arrivalTime != nil } == [true, false, true, true])
    }
}
