import MediaCore
import RTPPayload
import Testing

/// RTCP layouts (RFC 3550 6.4–6.6, RFC 4585 6.3.1, RFC 5104 4.3.1) written
/// out by hand.
struct RTCPTests {
    static let block: [UInt8] = [
        0x00, 0x00, 0x00, 0x0B,  // SSRC 11
        0x40, 0xFF, 0xFF, 0xFE,  // fraction 64/256, cumulative lost -2
        0x00, 0x01, 0x00, 0x05,  // extended highest: 1 cycle, seq 5
        0x00, 0x00, 0x00, 0x20,  // jitter 32
        0x12, 0x34, 0x56, 0x78,  // LSR
        0x00, 0x01, 0x00, 0x00,  // DLSR: 1 s
    ]

    @Test func receiverReport() throws {
        let bytes: [UInt8] = [0x81, 201, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01] + Self.block
        let packets = try RTCPPacket.parseCompound(bytes)
        let block = RTCPReportBlock(
            ssrc: 11, fractionLost: 64, cumulativeLost: -2, extendedHighestSequenceNumber: 0x1_0005, jitter: 32,
            lastSenderReport: 0x1234_5678, delaySinceLastSenderReport: 0x1_0000)
        #expect(packets == [.receiverReport(ssrc: 1, reports: [block])])
        #expect(RTCPPacket.receiverReport(ssrc: 1, reports: [block]).bytes == bytes)
        // RTT = arrival − LSR − DLSR: arrival 0x1236_5678 in 1/65536 s is 1 s after DLSR.
        let arrival = UInt64(0x1236_5678) << 16
        #expect(block.roundTripTime(arrivalNTP: arrival) == MediaTime(value: 1, timescale: 1))
    }

    @Test func senderReportSDESByeCompound() throws {
        let sr: [UInt8] = [
            0x80, 200, 0x00, 0x06, 0x00, 0x00, 0x00, 0x02,  // SSRC 2
            0x00, 0x00, 0x00, 0x03, 0x80, 0x00, 0x00, 0x00,  // NTP 3.5 s
            0x00, 0x00, 0x01, 0x00,  // RTP 256
            0x00, 0x00, 0x00, 0x0A, 0x00, 0x00, 0x10, 0x00,  // 10 packets, 4096 octets
        ]
        let sdes: [UInt8] = [
            0x81, 202, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02,  // chunk for SSRC 2
            0x01, 0x05, 0x61, 0x40, 0x68, 0x6F, 0x73, 0x00,  // CNAME "a@hos", null item
        ]
        let bye: [UInt8] = [0x81, 203, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x02, 0x6F, 0x6B, 0x00]
        let compound = sr + sdes + bye
        let packets: [RTCPPacket] = [
            .senderReport(
                ssrc: 2, ntpTimestamp: 3 << 32 | 0x8000_0000, rtpTimestamp: 256, packetCount: 10, octetCount: 4096,
                reports: []),
            .sourceDescription([.init(ssrc: 2, cname: "a@hos")]),
            .goodbye(ssrcs: [2], reason: "ok"),
        ]
        #expect(try RTCPPacket.parseCompound(compound) == packets)
        #expect(RTCPPacket.compound(packets) == compound)
        #expect(ntpTimestamp(MediaTime(value: 7, timescale: 2)) == 3 << 32 | 0x8000_0000)
    }

    @Test func pictureLossAndFullIntraRequest() throws {
        let pli: [UInt8] = [0x81, 206, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 9]
        let fir: [UInt8] = [0x84, 206, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0x05, 0, 0, 0]
        #expect(try RTCPPacket.parseCompound(pli) == [.pictureLossIndication(senderSSRC: 1, mediaSSRC: 9)])
        #expect(RTCPPacket.pictureLossIndication(senderSSRC: 1, mediaSSRC: 9).bytes == pli)
        let request = RTCPPacket.fullIntraRequest(senderSSRC: 1, requests: [.init(ssrc: 9, sequenceNumber: 5)])
        #expect(try RTCPPacket.parseCompound(fir) == [request])
        #expect(request.bytes == fir)
        #expect(request.requestsKeyframe(of: 9) && !request.requestsKeyframe(of: 1))
        #expect(try RTCPPacket.parseCompound(pli)[0].requestsKeyframe(of: 9))
    }

    @Test func malformedCompoundPackets() {
        for bytes: [UInt8] in [
            [0x81, 201, 0x00, 0x07, 0, 0, 0, 1],  // length past the end
            [0x41, 201, 0x00, 0x00],  // version 1
            [0x81, 201, 0x00, 0x00],  // RR with one block but no body
            [0x80, 201],
        ] {
            #expect(throws: MediaError.self) { try RTCPPacket.parseCompound(bytes) }
        }
    }

    @Test func receiverStatisticsFollowRFC3550() {
        var stats = RTPReceiverStatistics(ssrc: 11)
        // 65534, 65535, (0 lost), 1, 1 again (duplicate), 2; timestamps 1800
        // (20 ms) apart; the duplicate 1 ms after its original, packet 2 10 ms late.
        let arrivals: [(UInt16, UInt32, Int64)] = [
            (65_534, 0, 0), (65_535, 1800, 20), (1, 5400, 60), (1, 5400, 61), (2, 7200, 90),
        ]
        for (sequence, timestamp, milliseconds) in arrivals {
            stats.record(
                sequenceNumber: sequence, timestamp: timestamp, arrival: MediaTime(value: milliseconds, timescale: 1000)
            )
        }
        // Expected: 65534 … 65538 (extended) = 5; received 5 (the duplicate counts).
        #expect(stats.expected == 5 && stats.received == 5 && stats.cumulativeLost == 0)
        #expect(stats.extendedHighestSequenceNumber == 65_538)
        // Jitter by hand (A.8, in 90 kHz units, J += (|D| − J)/16 with J×16 kept):
        // transit = arrival × 90 − timestamp: 0, 0, 0, 90, 900; D = 0, 0, 90, 810.
        var j: Int64 = 0
        for d: Int64 in [0, 0, 90, 810] { j += d - ((j + 8) >> 4) }
        #expect(Int64(stats.jitter) == j >> 4)
        stats.recordSenderReport(ntpTimestamp: 0x0001_2345_6789_0000, arrival: MediaTime(value: 0, timescale: 1))
        let block = stats.makeReportBlock(at: MediaTime(value: 1, timescale: 2))
        #expect(block.extendedHighestSequenceNumber == 0x1_0002)
        #expect(block.fractionLost == 0 && block.cumulativeLost == 0)
        #expect(block.lastSenderReport == 0x2345_6789 && block.delaySinceLastSenderReport == 0x8000)
        // 3 more packets expected (3, 4, 5), only 5 arrives: 2 of 3 lost.
        stats.record(sequenceNumber: 5, timestamp: 12_600, arrival: MediaTime(value: 150, timescale: 1000))
        let next = stats.makeReportBlock(at: MediaTime(value: 1, timescale: 1))
        #expect(next.fractionLost == UInt8((2 << 8) / 3) && next.cumulativeLost == 2)
    }

    @Test func keyframeRequestLimiter() {
        var limiter = KeyframeRequestLimiter(minimumInterval: MediaTime(value: 500, timescale: 1000))
        func at(_ ms: Int64) -> MediaTime { MediaTime(value: ms, timescale: 1000) }
        var results: [Bool] = []
        results.append(limiter.request(at: at(0)))
        results.append(limiter.request(at: at(100)))
        results.append(limiter.request(at: at(200)))
        #expect(limiter.isPending)
        results.append(limiter.poll(at: at(400)))
        results.append(limiter.poll(at: at(500)))
        #expect(!limiter.isPending)
        results.append(limiter.request(at: at(600)))
        limiter.keyframeReceived()
        results.append(limiter.poll(at: at(2000)))
        results.append(limiter.request(at: at(2000)))
        #expect(results == [true, false, false, false, true, false, false, true])
        #expect(limiter.sent == 3 && limiter.suppressed == 2)
    }
}
