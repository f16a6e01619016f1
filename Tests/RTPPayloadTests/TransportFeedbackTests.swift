// Transport-wide congestion control on the wire: the header extension element,
// the RTPFB FMT 15 feedback and REMB formats, the receiver's feedback and the
// sender's matching.
import FormatConv
import MediaCore
import RTPPayload
import Testing

struct TransportFeedbackTests {
    static let mediaSSRC: UInt32 = 0xAAAA_0001

    /// RFC 8285 4.2: the one-byte form is the profile 0xBEDE, a length of one 32-bit word, then ID (4 bits),
    /// L = length − 1 (4 bits), the 2 data bytes, and one zero padding byte.
    @Test func stampingWritesTheOneByteForm() throws {
        let packet = handPacket(sequenceNumber: 7, timestamp: 9, ssrc: 0x1234, payload: [0x65, 0xAA])
        let stamped = try TransportWideSequenceNumber.stamping(packet, extensionID: 5, sequenceNumber: 0x0102)
        #expect(stamped[0] == 0x90)
        #expect(Array(stamped[12..<20]) == [0xBE, 0xDE, 0x00, 0x01, 0x51, 0x01, 0x02, 0x00])
        #expect(Array(stamped[20...]) == [0x65, 0xAA])
        // A second stamp replaces the element and keeps the others.
        var (header, _) = try RTPHeader.parse(stamped)
        try header.setExtensionElement(id: 2, data: [0, 0, 0])
        let both = header.packet(payload: [0x65])
        let again = try TransportWideSequenceNumber.stamping(both, extensionID: 5, sequenceNumber: 0xFFFF)
        let read = try RTPHeader.parse(again).0
        #expect(read.transportSequenceNumber(extensionID: 5) == 0xFFFF)
        #expect(read.extensionElement(id: 2) == [0, 0, 0])
        // A foreign profile cannot take elements: a clear error.
        let foreign = RTPHeader(
            payloadType: 96, sequenceNumber: 1, timestamp: 0, ssrc: 1, headerExtension: (0xABCD, []))
        #expect(throws: MediaError.self) {
            try TransportWideSequenceNumber.stamping(foreign.packet(payload: [1]), extensionID: 5, sequenceNumber: 1)
        }
    }

    /// Every status kind, a run, and a delta that needs two bytes, read back as written; malformed bodies are
    /// errors, never traps.
    @Test func feedbackRoundTripAndMalformedInput() throws {
        var statuses: [RTCPTransportFeedback.PacketStatus] = [.received(delta: 4), .notReceived, .received(delta: -3)]
        statuses += Array(repeating: .notReceived, count: 20)
        statuses += (0..<16).map { .received(delta: Int16($0 * 10)) }
        statuses.append(.received(delta: 1000))
        let feedback = RTCPTransportFeedback(
            senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 65_530, referenceTime: 0xFF_FFFF, feedbackPacketCount: 9,
            packets: statuses)
        let datagram = RTCPPacket.compound([.receiverReport(ssrc: 1, reports: []), feedback.rtcpPacket])
        let parsed = try RTCPPacket.parseCompound(datagram)
        #expect(try parsed[1].transportFeedback() == feedback)
        #expect(try parsed[0].transportFeedback() == nil)
        let body = feedback.body
        for length in [0, 15, 17, 18, 20] {
            #expect(throws: MediaError.self) { _ = try RTCPTransportFeedback(body: Array(body.prefix(length))) }
        }
        // A two-bit vector chunk with the reserved symbol 11.
        var reserved = Array(body.prefix(16))
        reserved[10] = 0
        reserved[11] = 1
        reserved += [0xF0, 0x00, 0, 0]
        #expect(throws: MediaError.self) { _ = try RTCPTransportFeedback(body: reserved) }
        // More than three bytes after the deltas.
        #expect(throws: MediaError.self) { _ = try RTCPTransportFeedback(body: body + [0, 0, 0, 0]) }
    }

    /// draft-alvestrand-rmcat-remb-03 2.2: the bit rate is mantissa × 2^exponent. Exponent 3, mantissa 0x1234
    /// reads as 37 280 b/s; 1.5 Mb/s is written as exponent 3, mantissa 0x2DC6C, the bytes aiortc writes for it
    /// (`pack_remb_fci(1500000, [0x5EED])` → 52454d42 01 0edc6c 00005eed).
    @Test func rembWireFormat() throws {
        let hand: [UInt8] = [
            0x8F, 206, 0, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0x52, 0x45, 0x4D, 0x42, 1, 0x0C, 0x12, 0x34, 0, 0, 0x5E, 0xED,
        ]
        let read = try RTCPPacket.parseCompound(hand)[0].receiverEstimatedMaximumBitrate()
        #expect(read == RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 1, bitrate: 37_280, ssrcs: [0x5EED]))
        let remb = RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 1, bitrate: 1_500_000, ssrcs: [0x5EED])
        #expect(Array(remb.body[8...]) == [0x52, 0x45, 0x4D, 0x42, 0x01, 0x0E, 0xDC, 0x6C, 0x00, 0x00, 0x5E, 0xED])
        let packet = try RTCPPacket.parseCompound(RTCPPacket.compound([remb.rtcpPacket]))[0]
        #expect(try packet.receiverEstimatedMaximumBitrate() == remb)
        #expect(throws: MediaError.self) {
            try RTCPReceiverEstimatedMaximumBitrate(body: Array(remb.body.prefix(16)) + [0, 0])
        }
    }

    /// Sequence numbers across the wrap, a loss, a reordered packet and one that comes after the feedback that
    /// reported it lost.
    @Test func generatorReportsLossReorderingAndWrap() throws {
        var generator = TransportFeedbackGenerator()
        // 65534 at 100 ms, 65535 lost, 0 at 102 ms, 2 at 103 ms, 1 at 104 ms (reordered).
        for (number, time) in [(65_534, 100), (0, 102), (2, 103), (1, 104)] as [(UInt16, Int64)] {
            generator.record(sequenceNumber: number, arrival: ms(time))
        }
        let first = generator.makeFeedback(senderSSRC: 1, mediaSSRC: 2)
        #expect(first.count == 1)
        #expect(first[0].baseSequenceNumber == 65_534)
        // 100 ms is 1 × 64 ms + 36 ms: reference 1, first delta 144 ticks of 250 µs.
        #expect(first[0].referenceTime == 1)
        // 65534 at 400 ticks, 0 at 408, 1 at 416, 2 at 412 (in sequence order: 1 before 2).
        #expect(
            first[0].packets == [
                .received(delta: 144), .notReceived, .received(delta: 8), .received(delta: 8), .received(delta: -4),
            ])
        #expect(first[0].feedbackPacketCount == 0)
        // 65535 arrives late: the next feedback starts again from it.
        generator.record(sequenceNumber: 65_535, arrival: ms(110))
        generator.record(sequenceNumber: 3, arrival: ms(111))
        let second = generator.makeFeedback(senderSSRC: 1, mediaSSRC: 2)
        #expect(second.map(\.baseSequenceNumber) == [65_535])
        #expect(second[0].packets.count == 5)
        #expect(second[0].feedbackPacketCount == 1)
        #expect(second[0].arrivalTimes == [110_000, 102_000, 104_000, 103_000, 111_000])
        #expect(generator.makeFeedback(senderSSRC: 1, mediaSSRC: 2).isEmpty)
    }

    /// A sender that jumps far ahead gets at most ``TransportFeedbackGenerator/maximumTracked`` statuses per round:
    /// 2048 numbers in 6 packets of at most 400, ending at the highest number received.
    @Test func generatorBoundsTheFeedbackOfAJump() {
        var generator = TransportFeedbackGenerator()
        generator.record(sequenceNumber: 0, arrival: ms(0))
        generator.record(sequenceNumber: 30_000, arrival: ms(1))
        let feedback = generator.makeFeedback(senderSSRC: 1, mediaSSRC: 2)
        #expect(feedback.map(\.packets.count) == [400, 400, 400, 400, 400, 48])
        #expect(feedback.first.map { Int($0.baseSequenceNumber) } == 30_000 - 2047)
        #expect(feedback.last?.packets.last == .received(delta: 4))
        #expect(feedback.flatMap(\.packets).filter { $0 != .notReceived }.count == 1)
    }

    /// Every packet the sender sends carries the next transport-wide number (media, RTX, padding, the tail probe);
    /// feedback is matched to send times and sizes, each packet reported once.
    @Test func senderStampsEveryPacketAndMatchesFeedback() throws {
        let rtx = RTPRetransmission(payloadType: 97, ssrc: 0xBBBB_0001)
        var sender = RTPSenderSession(
            configuration: .init(
                packetizer: .init(codec: .h264, ssrc: Self.mediaSSRC, maximumPayloadSize: 100), retransmission: rtx,
                transportSequenceNumberExtensionID: 3))
        let samples = try HandMadeH264.stream(frames: 2, gop: 2, sliceSize: 250)
        var sent: [[UInt8]] = []
        sent += RTPSenderSessionTests.rtp(try sender.send(samples[0], at: ms(0)))
        sent += RTPSenderSessionTests.rtp(try sender.send(samples[1], at: ms(40)))
        let firstMedia = try RTPHeader.parse(sent[0]).0.sequenceNumber
        let nack = RTCPPacket.compound([
            .receiverReport(ssrc: 9, reports: []),
            .genericNACK(senderSSRC: 9, mediaSSRC: Self.mediaSSRC, sequenceNumbers: [firstMedia]),
        ])
        let retransmitted = RTPSenderSessionTests.rtp(sender.receiveRTCP(nack, at: ms(50)))
        #expect(retransmitted.count == 1)
        let padding = RTPSenderSessionTests.rtp(sender.sendPadding(bytes: 300, at: ms(60)))
        #expect(padding.count == 2)
        let all = sent + retransmitted + padding
        let numbers = try all.map { try RTPHeader.parse($0).0.transportSequenceNumber(extensionID: 3) }
        #expect(numbers == (0..<all.count).map { UInt16($0) })
        let paddingHeaders = try padding.map { try RTPHeader.parse($0) }
        #expect(paddingHeaders.map(\.0.ssrc) == [0xBBBB_0001, 0xBBBB_0001])
        #expect(paddingHeaders.map(\.0.paddingLength) == [255, 45])
        #expect(paddingHeaders.map(\.1.count) == [0, 0])
        #expect(sender.statistics.paddingPacketsSent == 2)
        #expect(sender.statistics.paddingBytesSent == 300)

        // The receiver got every packet but number 1, 2 ms apart from 10 ms on.
        var generator = TransportFeedbackGenerator()
        for index in 0..<all.count where index != 1 {
            generator.record(sequenceNumber: UInt16(index), arrival: ms(10 + 2 * Int64(index)))
        }
        let feedback = generator.makeFeedback(senderSSRC: 9, mediaSSRC: Self.mediaSSRC)
        let events = sender.receiveRTCP(
            RTCPPacket.compound([.receiverReport(ssrc: 9, reports: [])] + feedback.map(\.rtcpPacket)), at: ms(70))
        let reports = events.compactMap { event -> RTPTransportFeedbackReport? in
            if case .congestionFeedback(.transport(let report)) = event { report } else { nil }
        }
        #expect(reports.count == 1)
        let packets = reports[0].packets
        #expect(packets.map(\.sequenceNumber) == (0..<Int64(all.count)).map { $0 })
        #expect(packets.map(\.size) == all.map(\.count))
        #expect(packets[1].arrivalTime == nil)
        #expect((packets[2].arrivalTime! - packets[0].arrivalTime!).converted(toTimescale: 1_000_000).value == 4000)
        #expect(packets.last!.sendTime.converted(toTimescale: 1000).value == 60)
        #expect(packets.last!.kind == .padding)
        #expect(packets[sent.count].kind == .retransmission)
        #expect(sender.statistics.transportFeedbackCount == 1)
        // The same feedback again reports nothing new.
        let repeated = sender.receiveRTCP(RTCPPacket.compound(feedback.map(\.rtcpPacket)), at: ms(80))
        #expect(
            repeated == [
                .congestionFeedback(.transport(.init(receivedAt: ms(80), feedbackPacketCount: 0, packets: [])))
            ])
        // REMB for this stream.
        let remb = RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 9, bitrate: 500_000, ssrcs: [Self.mediaSSRC])
        #expect(
            sender.receiveRTCP(RTCPPacket.compound([remb.rtcpPacket]), at: ms(90)) == [
                .congestionFeedback(.receiverEstimatedMaximumBitrate(500_000, ssrcs: [Self.mediaSSRC]))
            ])
        #expect(sender.statistics.rembCount == 1)
        #expect(sender.statistics.receiverEstimatedMaximumBitrate == 500_000)
    }

    /// The receiver session records the stream's transport-wide numbers (media and RTX padding) and sends feedback
    /// on its RTCP path every 50 ms while there is something to report; padding on the media SSRC damages nothing.
    @Test func receiverSendsFeedbackEveryInterval() throws {
        var sender = RTPSenderSession(
            configuration: .init(
                packetizer: .init(codec: .h264, ssrc: Self.mediaSSRC), transportSequenceNumberExtensionID: 4))
        var configuration = RTPReceiverConfiguration(codec: .h264, payloadType: 96, ssrc: 77)
        configuration.transportFeedback = .init(extensionID: 4)
        var receiver = RTPReceiverSession<String>(configuration: configuration)
        let samples = try HandMadeH264.stream(frames: 6, gop: 3)
        var feedback: [RTCPTransportFeedback] = []
        var frames = 0
        func take(_ events: [RTPReceiverSession<String>.Event]) throws {
            for event in events {
                switch event {
                case .rtcp(let datagram, _):
                    feedback += try RTCPPacket.parseCompound(datagram).compactMap { try $0.transportFeedback() }
                case .sample: frames += 1
                default: break
                }
            }
        }
        for (index, sample) in samples.enumerated() {
            let now = ms(Int64(index) * 40)
            for packet in RTPSenderSessionTests.rtp(try sender.send(sample, at: now)) {
                try take(receiver.receiveRTP(packet, from: "a", at: now))
            }
            for packet in RTPSenderSessionTests.rtp(sender.sendPadding(bytes: 100, at: now)) {
                try take(receiver.receiveRTP(packet, from: "a", at: now + ms(1)))
            }
        }
        try take(receiver.poll(at: ms(400)))
        try take(receiver.finish(at: ms(400)))
        #expect(frames == 6)
        #expect(receiver.statistics.paddingPacketsReceived == 6)
        #expect(receiver.statistics.accessUnitsDropped == 0)
        // Feedback at 0 ms (after the source was accepted), then at most one per 50 ms.
        #expect(receiver.statistics.transportFeedbackCount == feedback.count)
        let reported = feedback.flatMap { fb in
            fb.packets.enumerated().map { (fb.baseSequenceNumber &+ UInt16($0.offset), $0.element) }
        }
        let received = Set(reported.filter { $0.1 != .notReceived }.map(\.0))
        #expect(received == Set((0..<UInt16(sender.nextTransportSequenceNumber!)).map { $0 }))
        #expect(feedback.map(\.feedbackPacketCount) == (0..<feedback.count).map { UInt8($0) })
        #expect(feedback.allSatisfy { $0.senderSSRC == 77 && $0.mediaSSRC == Self.mediaSSRC })
    }
}
