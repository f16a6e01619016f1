// One packetization per access unit for many sender sessions (RTPSharedPacketizer): what each session sends is what
// a session alike that packetizes for itself sends, byte for byte, NACK answers and sender reports included.
import FormatConv
import MediaCore
import RTPPayload
import Testing

struct RTPSharedPacketizerTests {
    /// Three streams of one source with their own payload types, SSRCs, first sequence numbers and timestamp
    /// offsets (one with transport-wide sequence numbers, one with RTX).
    static let configurations: [RTPSenderSession.Configuration] = [
        .init(
            packetizer: .init(
                codec: .h264, payloadType: 96, ssrc: 0x1111_0001, initialSequenceNumber: 65_530,
                timestampOffset: 0xFFFF_FF00, maximumPayloadSize: 1100)),
        .init(
            packetizer: .init(
                codec: .h264, payloadType: 102, ssrc: 0x2222_0002, initialSequenceNumber: 7,
                timestampOffset: 12_345, maximumPayloadSize: 1100),
            retransmission: RTPRetransmission(payloadType: 103, ssrc: 0x2222_0003, initialSequenceNumber: 900)),
        .init(
            packetizer: .init(
                codec: .h264, payloadType: 127, ssrc: 0x3333_0004, initialSequenceNumber: 40_000,
                timestampOffset: 1, maximumPayloadSize: 1100),
            transportSequenceNumberExtensionID: 3),
    ]

    static func nack(_ numbers: [UInt16], ssrc: UInt32) -> [UInt8] {
        RTCPPacket.compound([
            .receiverReport(ssrc: 9, reports: []),
            .genericNACK(senderSSRC: 9, mediaSSRC: ssrc, sequenceNumbers: numbers),
        ])
    }

    /// Every access unit is packetized once for the three sessions, each session takes every frame from it, and
    /// each sends exactly the datagrams of a session with its configuration that packetizes for itself: media,
    /// sender reports, and the answers to a NACK for its third and sixth packets.
    @Test func sessionsSharingOnePacketizationSendWhatTheirOwnPacketizersWould() throws {
        let samples = try multiPacketStream(frames: 12, gop: 6)
        var sharing = RTPSharedPacketizer()
        var shared = Self.configurations.map { RTPSenderSession(configuration: $0) }
        var own = Self.configurations.map { RTPSenderSession(configuration: $0) }
        var sharedEvents = Array(repeating: [RTPSenderEvent](), count: shared.count)
        var ownEvents = sharedEvents
        for (index, sample) in samples.enumerated() {
            sharing.startAccessUnit()
            for stream in shared.indices {
                sharedEvents[stream] += try shared[stream].send(sample, sharing: &sharing, at: ms(Int64(index) * 33))
                ownEvents[stream] += try own[stream].send(sample, at: ms(Int64(index) * 33))
            }
        }
        #expect(sharing.accessUnitsPacketized == samples.count)
        #expect(sharing.accessUnitsTaken == samples.count * shared.count)
        #expect(shared.map(\.statistics.framesTakenShared) == Array(repeating: samples.count, count: shared.count))
        #expect(own.map(\.statistics.framesTakenShared) == Array(repeating: 0, count: shared.count))
        for stream in shared.indices {
            #expect(sharedEvents[stream] == ownEvents[stream])
            #expect(shared[stream].statistics == own[stream].statistics.with { $0.framesTakenShared = samples.count })
            let media = sharedEvents[stream].compactMap { if case .rtp(let packet) = $0 { packet } else { nil } }
            #expect(media.count > samples.count)
            let wanted = [media[2], media[5]].map { UInt16($0[2]) << 8 | UInt16($0[3]) }
            let request = Self.nack(wanted, ssrc: shared[stream].ssrc)
            #expect(shared[stream].receiveRTCP(request, at: ms(500)) == own[stream].receiveRTCP(request, at: ms(500)))
        }
    }

    /// A stream whose payloads depend on its own history (parameter sets at an interval; HEVC with decoding order
    /// numbers) packetizes for itself: nothing is packetized or taken through the shared packetizer.
    @Test func streamsWithTheirOwnPacketHistoryPacketizeThemselves() throws {
        let interval = RTPPacketizer.Configuration(
            codec: .h264, ssrc: 5, parameterSets: .interval(MediaTime(value: 1, timescale: 1)))
        let don = RTPPacketizer.Configuration(codec: .hevc, ssrc: 6, maximumDONDifference: 2)
        #expect(!RTPSharedPacketizer.shares(interval) && !RTPSharedPacketizer.shares(don))
        #expect(RTPSharedPacketizer.shares(.init(codec: .hevc, ssrc: 7)))
        let samples = try multiPacketStream(frames: 4, gop: 4)
        var sharing = RTPSharedPacketizer()
        var shared = RTPSenderSession(configuration: .init(packetizer: interval))
        var own = RTPSenderSession(configuration: .init(packetizer: interval))
        for (index, sample) in samples.enumerated() {
            sharing.startAccessUnit()
            let events = try shared.send(sample, sharing: &sharing, at: ms(Int64(index) * 33))
            #expect(events == (try own.send(sample, at: ms(Int64(index) * 33))))
        }
        #expect(sharing.accessUnitsPacketized == 0 && sharing.accessUnitsTaken == 0)
        #expect(shared.statistics.framesTakenShared == 0 && shared.statistics.framesSent == samples.count)
    }
}

extension RTPOutboundStreamStatistics {
    /// A copy changed by `change`.
    fileprivate func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }
}
