import FormatConv
import MediaCore
import RTPPayload
import Testing

struct RTPSenderSessionTests {
    static let ssrc: UInt32 = 0xAAAA_0001

    static func sender(
        retransmission: RTPRetransmission? = nil, packets: Int = 1024, bytes: Int = 2 << 20,
        rateController: LossBasedRateController? = nil
    ) -> RTPSenderSession {
        RTPSenderSession(
            configuration: .init(
                packetizer: .init(codec: .h264, ssrc: ssrc, initialSequenceNumber: 65_530),
                retransmission: retransmission, historyPacketLimit: packets, historyByteLimit: bytes,
                rateController: rateController))
    }

    static func rtp(_ events: [RTPSenderEvent]) -> [[UInt8]] {
        events.compactMap { if case .rtp(let datagram) = $0 { datagram } else { nil } }
    }

    static func nack(_ numbers: [UInt16]) -> [UInt8] {
        RTCPPacket.compound([
            .receiverReport(ssrc: 9, reports: []),
            .genericNACK(senderSSRC: 9, mediaSSRC: ssrc, sequenceNumbers: numbers),
        ])
    }

    /// RFC 4585 6.2.1: PID + BLP pairs, checked byte for byte, and back.
    @Test func genericNACKWireFormat() throws {
        let packet = RTCPPacket.genericNACK(
            senderSSRC: 1, mediaSSRC: 2, sequenceNumbers: [100, 101, 116, 117, 65_535, 0])
        // 100 covers 101 (bit 0) and 116 (bit 15); 117 alone; 65535 covers 0
        // across the wrap (bit 0).
        let expected: [UInt8] = [
            0x81, 205, 0, 5, 0, 0, 0, 1, 0, 0, 0, 2, 0, 100, 0x80, 0x01, 0, 117, 0, 0, 0xFF, 0xFF, 0, 1,
        ]
        #expect(packet.bytes == expected)
        #expect(
            RTCPPacket.isRTCP(expected) && !RTCPPacket.isRTCP(handPacket(sequenceNumber: 1, timestamp: 0, payload: [1]))
        )
        #expect(try RTCPPacket.parseCompound(expected) == [packet])
    }

    /// NACK answered from the history: RTX carries the OSN and the original
    /// payload on its own SSRC, payload type and sequence numbers; without
    /// RTX the original packet goes again. Counted as retransmissions.
    @Test(arguments: [true, false])
    func nackIsAnsweredFromTheHistory(rtx: Bool) throws {
        var sender = Self.sender(
            retransmission: rtx ? RTPRetransmission(payloadType: 97, ssrc: 0xBBBB, initialSequenceNumber: 500) : nil)
        let samples = try multiPacketStream(frames: 5, gop: 5)
        var sent: [[UInt8]] = []
        for (index, sample) in samples.enumerated() {
            sent += Self.rtp(try sender.send(sample, at: ms(Int64(index) * 40)))
        }
        let wanted = [sent[3], sent[5]].map { UInt16($0[2]) << 8 | UInt16($0[3]) }
        let answer = Self.rtp(sender.receiveRTCP(Self.nack(wanted), at: ms(300)))
        #expect(answer.count == 2)
        for (index, datagram) in answer.enumerated() {
            let (header, range) = try RTPHeader.parse(datagram)
            let (original, originalRange) = try RTPHeader.parse([sent[3], sent[5]][index])
            if rtx {
                #expect(header.ssrc == 0xBBBB && header.payloadType == 97)
                #expect(header.sequenceNumber == 500 + UInt16(index))
                #expect(header.timestamp == original.timestamp && header.marker == original.marker)
                let payload = Array(datagram[range])
                #expect(UInt16(payload[0]) << 8 | UInt16(payload[1]) == original.sequenceNumber)
                #expect(Array(payload[2...]) == Array([sent[3], sent[5]][index][originalRange]))
            } else {
                #expect(datagram == [sent[3], sent[5]][index])
            }
        }
        // A repeat within the minimum interval (10 ms) is not answered.
        #expect(Self.rtp(sender.receiveRTCP(Self.nack(wanted), at: ms(305))).isEmpty)
        #expect(Self.rtp(sender.receiveRTCP(Self.nack(wanted), at: ms(320))).count == 2)
        let statistics = sender.statistics
        #expect(statistics.nackCount == 3 && statistics.retransmittedPacketsSent == 4)
        #expect(statistics.packetsSent == sent.count + 4)
        #expect(statistics.framesSent == 5)
    }

    /// Once a reception report gives a round-trip time (60 ms here), a NACK that arrives less than half of it
    /// after the packet's retransmission is not answered, though the 10 ms minimum has passed: it was sent before
    /// the copy left.
    @Test func aNACKWithinHalfARoundTripIsNotAnswered() throws {
        var sender = Self.sender()
        let samples = try multiPacketStream(frames: 5, gop: 5)
        var sent: [[UInt8]] = []
        for (index, sample) in samples.enumerated() {
            sent += Self.rtp(try sender.send(sample, at: ms(Int64(index) * 40)))
        }
        // LSR 0.24 s in NTP short format (15728/65536 s), arriving at 0.3 s (19660/65536 s) with no delay since:
        // 3932/65536 s, 60.0 ms.
        let report = RTCPPacket.compound([
            .receiverReport(ssrc: 9, reports: [RTCPReportBlock(ssrc: Self.ssrc, lastSenderReport: 15_728)])
        ])
        _ = sender.receiveRTCP(report, at: ms(300))
        let roundTrip = try #require(sender.roundTripTime)
        #expect(abs(roundTrip.seconds - 0.060) < 0.000_1)
        let wanted = [UInt16(sent[3][2]) << 8 | UInt16(sent[3][3])]
        #expect(Self.rtp(sender.receiveRTCP(Self.nack(wanted), at: ms(400))) == [sent[3]])
        #expect(Self.rtp(sender.receiveRTCP(Self.nack(wanted), at: ms(420))).isEmpty)
        #expect(Self.rtp(sender.receiveRTCP(Self.nack(wanted), at: ms(431))) == [sent[3]])
        #expect(sender.statistics.retransmittedPacketsSent == 2)
    }

    /// The history holds at most its packet and byte limits; a NACK for a
    /// packet that left it is counted, not answered.
    @Test func historyIsBoundedInPacketsAndBytes() throws {
        let samples = try multiPacketStream(frames: 100, gop: 25)
        for (packets, bytes) in [(16, 1 << 20), (1024, 10_000)] {
            var sender = Self.sender(packets: packets, bytes: bytes)
            var sent: [[UInt8]] = []
            for (index, sample) in samples.enumerated() {
                sent += Self.rtp(try sender.send(sample, at: ms(Int64(index) * 40)))
                #expect(sender.historyUsage.packets <= packets && sender.historyUsage.bytes <= bytes)
            }
            let first = UInt16(sent[0][2]) << 8 | UInt16(sent[0][3])
            let last = UInt16(sent[sent.count - 1][2]) << 8 | UInt16(sent[sent.count - 1][3])
            let answer = Self.rtp(sender.receiveRTCP(Self.nack([first, last]), at: ms(5000)))
            #expect(answer == [sent[sent.count - 1]], "\(packets) packets, \(bytes) bytes")
            #expect(sender.statistics.nackedPacketsUnavailable == 1)
        }
    }

    /// A storm of PLIs and FIRs: one keyframe request at once, one more when
    /// the interval (500 ms) has passed; a FIR repeated with the same
    /// command sequence number counts once.
    @Test func keyframeRequestsAreRateLimited() {
        var sender = Self.sender()
        var requests = 0
        func count(_ events: [RTPSenderEvent]) {
            requests += events.filter { $0 == .keyframeRequested }.count
        }
        for step in 0..<10 {
            count(
                sender.receiveRTCP(
                    RTCPPacket.pictureLossIndication(senderSSRC: 9, mediaSSRC: Self.ssrc).bytes,
                    at: ms(Int64(step) * 10)))
            count(
                sender.receiveRTCP(
                    RTCPPacket.fullIntraRequest(senderSSRC: 9, requests: [.init(ssrc: Self.ssrc, sequenceNumber: 1)])
                        .bytes,
                    at: ms(Int64(step) * 10 + 5)))
        }
        // For another SSRC: ignored.
        count(sender.receiveRTCP(RTCPPacket.pictureLossIndication(senderSSRC: 9, mediaSSRC: 1).bytes, at: ms(200)))
        #expect(requests == 1)
        #expect(sender.nextDeadline! <= ms(500))
        count(sender.poll(at: ms(499)))
        #expect(requests == 1)
        count(sender.poll(at: ms(500)))
        #expect(requests == 2)
        #expect(sender.statistics.pliCount == 10 && sender.statistics.firCount == 1)
        #expect(sender.statistics.keyframeRequestsForwarded == 2)
    }

    /// Receiver reports drive the loss-based rate at most once per 500 ms,
    /// however many arrive; every change is kept in a bounded history.
    @Test func reportFloodMovesTheRateOncePerInterval() {
        var sender = Self.sender(
            rateController: LossBasedRateController(initial: 1_000_000, minimum: 100_000, maximum: 2_000_000))
        var changes: [Int] = []
        for step in 0..<10_000 {
            let block = RTCPReportBlock(ssrc: Self.ssrc, fractionLost: step % 2 == 0 ? 0 : 128)
            for event in sender.receiveRTCP(
                RTCPPacket.receiverReport(ssrc: 9, reports: [block]).bytes,
                at: MediaTime(value: Int64(step), timescale: 10_000))
            {
                if case .targetBitRate(let rate) = event { changes.append(rate) }
            }
        }
        // 10 000 reports over 1 s: updates at 0 and 500 ms.
        #expect(changes.count == 2)
        #expect(sender.statistics.targetBitrate == changes.last)
        #expect(sender.statistics.targetBitrateChanges.recent == changes)
        #expect(sender.remoteStatistics.reportsReceived == 10_000)
    }

    /// Sender reports every interval, and a last one with the BYE.
    @Test func senderReportsAndGoodbye() throws {
        var sender = Self.sender()
        var reports: [RTCPPacket] = []
        func collect(_ events: [RTPSenderEvent]) throws {
            for case .rtcp(let datagram) in events { reports += try RTCPPacket.parseCompound(datagram) }
        }
        try collect(sender.poll(at: ms(0)))
        let sample = try multiPacketStream(frames: 1, gop: 1)[0]
        try collect(try sender.send(sample, at: ms(100)))
        try collect(sender.poll(at: ms(999)))
        try collect(sender.poll(at: ms(1000)))
        try collect(sender.finish(at: ms(1100), reason: "bye"))
        #expect(sender.finish(at: ms(1200)).isEmpty && sender.poll(at: ms(5000)).isEmpty)
        let srs = reports.compactMap { packet -> (UInt32, UInt32, UInt32)? in
            if case .senderReport(_, _, let rtp, let packets, let octets, _) = packet {
                (rtp, packets, octets)
            } else {
                nil
            }
        }
        #expect(srs.count == 3)
        // The RTP clock runs from the last sample's timestamp: 900 ms later, 81 000 units on.
        let timestamp = RTPPacketizer(configuration: sender.configuration.packetizer).rtpTimestamp(of: sample)
        #expect(srs[1].0 == timestamp &+ 81_000)
        // The counts leave out retransmissions (the tail probe at finish is one).
        #expect(srs[2].1 == UInt32(sender.statistics.packetsSent - sender.statistics.retransmittedPacketsSent))
        #expect(srs[2].2 == UInt32(sender.statistics.bytesSent - sender.statistics.retransmittedBytesSent))
        #expect(reports.contains(.goodbye(ssrcs: [Self.ssrc], reason: "bye")))
    }
}
