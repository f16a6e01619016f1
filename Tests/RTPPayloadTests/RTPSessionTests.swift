import FormatConv
import MediaCore
import RTPPayload
import TestSupport
import Testing

/// The sender and receiver sessions over a simulated lossy network on a
/// fake clock: with NACK every access unit arrives byte for byte; without,
/// losses cost frames until the next keyframe.
struct RTPSessionRoundTripTests {
    struct Case: Sendable, CustomStringConvertible {
        var loss: Double
        var reorder: Double = 0
        var jitter: Int64 = 0
        var rtx: Bool
        var seed: UInt64
        /// One-way delay (ms) and the jitter buffer's delay (ms).
        var delay: Int64 = 10
        var buffer: Int64 = 100
        var description: String {
            "loss \(loss * 100) % reorder \(reorder * 100) % jitter \(jitter) ms \(rtx ? "RTX" : "original") seed \(seed)"
                + " delay \(delay) ms buffer \(buffer) ms"
        }
    }

    static let cases: [Case] = [
        Case(loss: 0.01, rtx: true, seed: 1),
        Case(loss: 0.03, rtx: true, seed: 2),
        Case(loss: 0.05, rtx: true, seed: 3),
        Case(loss: 0.01, rtx: false, seed: 4),
        Case(loss: 0.03, rtx: false, seed: 5),
        Case(loss: 0.05, rtx: false, seed: 6),
        Case(loss: 0.03, reorder: 0.03, jitter: 8, rtx: true, seed: 7),
        Case(loss: 0.05, reorder: 0.05, jitter: 15, rtx: false, seed: 8),
        // Loopback-like: 1 ms each way, a 50 ms jitter buffer, NACK repeated
        // every 5 ms.
        Case(loss: 0.05, rtx: true, seed: 10, delay: 1, buffer: 50),
        Case(loss: 0.05, reorder: 0.02, jitter: 2, rtx: false, seed: 11, delay: 1, buffer: 50),
    ]

    static let frames = 250

    static func link(_ c: Case, nack: Bool) -> SessionLink {
        let packetizer = RTPPacketizer.Configuration(
            codec: .h264, payloadType: 96, ssrc: 0x1111_2222, initialSequenceNumber: 65_000,
            timestampOffset: 0xFFFF_0000)
        return SessionLink(
            sender: RTPSenderSession.Configuration(
                packetizer: packetizer,
                retransmission: c.rtx ? RTPRetransmission(payloadType: 97, ssrc: 0x3333_4444) : nil),
            receiver: RTPReceiverSession<String>.Configuration(
                codec: .h264, payloadType: 96, ssrc: 0x5555_6666, jitterBufferDelay: ms(c.buffer),
                nack: nack ? .init(retryInterval: ms(c.buffer >= 100 ? 20 : 5)) : nil,
                retransmission: c.rtx ? RTPRetransmission(payloadType: 97) : nil),
            forward: {
                var path = SimulatedPath(
                    seed: c.seed, loss: c.loss, reorder: c.reorder, delay: c.delay, jitter: c.jitter)
                path.intactPrefix = 2  // the first SR and the first RTP packet
                return path
            }(),
            backward: SimulatedPath(seed: c.seed &+ 100, loss: c.loss, delay: c.delay, jitter: c.jitter))
    }

    @Test(arguments: cases)
    func nackDeliversEveryAccessUnitByteForByte(_ c: Case) throws {
        let samples = try multiPacketStream(frames: Self.frames, gop: 50)
        var repaired = Self.link(c, nack: true)
        repaired.run(samples)
        var unrepaired = Self.link(c, nack: false)
        unrepaired.run(samples)
        let dropped = repaired.forward.faults.statistics.dropped
        print(
            "\(c): with NACK \(repaired.received.count) of \(samples.count) frames "
                + "(\(dropped) datagrams dropped, \(repaired.sender.statistics.retransmittedPacketsSent) "
                + "retransmitted, \(repaired.receiver.statistics.nackCount) NACKs); without NACK "
                + "\(unrepaired.received.count) of \(samples.count)")
        // The BYE itself travels the lossy path: the harness finishes a
        // receiver that did not hear it.
        #expect(repaired.ended || repaired.finishedByTimeout, "\(c)")
        #expect(repaired.received.count == samples.count, "\(c)")
        #expect(
            zip(repaired.received, samples).allSatisfy { $0.data == $1.data },
            "\(c): first difference at sample \(firstDifference(repaired.received, samples) ?? -1)")
        #expect(repaired.losses.isEmpty, "\(c)")
        #expect(repaired.receiver.statistics.packetsLost == 0, "\(c)")
        #expect(repaired.sender.statistics.retransmittedPacketsSent > 0, "\(c)")
        #expect(repaired.receiver.statistics.packetsRepaired > 0, "\(c)")
        #expect(unrepaired.received.count < samples.count, "\(c)")
        #expect(!unrepaired.losses.isEmpty && unrepaired.receiver.statistics.pliCount > 0, "\(c)")
        #expect(unrepaired.receiver.statistics.nackCount == 0, "\(c)")
        // What the receiver got is a prefix-free subset of what was sent, in order.
        var position = 0
        for sample in unrepaired.received {
            while position < samples.count && samples[position].data != sample.data { position += 1 }
            #expect(position < samples.count, "\(c): a sample that was never sent")
        }
        // RTX goes on its own SSRC and payload type with the OSN; the
        // original retransmission reuses the media SSRC and type.
        let retransmissions = repaired.forward.sent.filter { !isRTCP($0) }.compactMap { try? RTPHeader.parse($0).0 }
            .filter { $0.ssrc != 0x1111_2222 }
        if c.rtx {
            // The tail probe at finish goes as the original packet.
            #expect(retransmissions.count == repaired.sender.statistics.retransmittedPacketsSent - 1)
            #expect(retransmissions.allSatisfy { $0.ssrc == 0x3333_4444 && $0.payloadType == 97 })
            #expect(repaired.receiver.statistics.retransmittedPacketsReceived > 0)
        } else {
            #expect(retransmissions.isEmpty)
        }
        let sent = repaired.sender.statistics
        #expect(sent.framesSent == samples.count)
        // NACKs travel the lossy backward path: some may not arrive.
        #expect(sent.nackCount > 0 && sent.nackCount <= repaired.receiver.statistics.nackCount)
        #expect(sent.packetsSent == repaired.forward.sent.filter { !isRTCP($0) }.count)
    }

    /// Forty seeds at 3 % loss both ways with 0–10 ms (or 0–2 ms on the
    /// loopback-like path) of jitter, half with RTX: every run delivers
    /// every access unit.
    @Test func seededSweepAtThreePercent() throws {
        let samples = try multiPacketStream(frames: 150, gop: 50)
        var failures: [String] = []
        var dropped = 0
        for seed in UInt64(1000)..<UInt64(1040) {
            let c =
                seed % 4 < 2
                ? Case(loss: 0.03, jitter: 10, rtx: seed % 2 == 0, seed: seed)
                : Case(loss: 0.03, jitter: 2, rtx: seed % 2 == 0, seed: seed, delay: 1, buffer: 50)
            var link = Self.link(c, nack: true)
            link.run(samples)
            dropped += link.forward.faults.statistics.dropped + link.backward.faults.statistics.dropped
            if link.received.count != samples.count || firstDifference(link.received, samples) != nil {
                failures.append("\(c): \(link.received.count) of \(samples.count)")
            }
        }
        print("40 seeded runs at 3 % loss: \(dropped) datagrams dropped, \(failures.count) runs short")
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Streams from x264 and x265 (B-frames, several slices) through the
    /// sessions at 3 % loss with RTX: every access unit byte for byte, with
    /// its pts and keyframe flag.
    @Test(arguments: [CodecType.h264, .hevc])
    func encodedStreamsThroughTheSessions(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stream = try RTPTestStreams.encode(codec, frames: 60, gop: 30, bframes: 2, slices: 2, in: directory)
        let c = Case(loss: 0.03, jitter: 5, rtx: true, seed: 21)
        var link = Self.link(c, nack: true)
        link.sender = RTPSenderSession(
            configuration: .init(
                packetizer: .init(codec: codec, ssrc: 0x1111_2222, maximumPayloadSize: 600),
                retransmission: RTPRetransmission(payloadType: 97, ssrc: 0x3333_4444)))
        link.receiver = RTPReceiverSession(
            configuration: .init(
                codec: codec, payloadType: 96, jitterBufferDelay: ms(100),
                retransmission: RTPRetransmission(payloadType: 97)))
        link.run(stream.samples)
        #expect(link.received.count == stream.samples.count, "\(codec)")
        #expect(firstDifference(link.received, stream.samples) == nil, "\(codec)")
        #expect(link.received.map(\.pts) == stream.samples.map(\.pts), "\(codec)")
        #expect(link.received.map(\.isKeyframe) == stream.samples.map(\.isKeyframe), "\(codec)")
        #expect(link.forward.faults.statistics.dropped > 0 && link.losses.isEmpty, "\(codec)")
    }

    /// A sender report, then a receiver report that echoes it: the
    /// round-trip time is the paths' delays (10 ms each way) and the
    /// receiver's hold time is taken out by DLSR.
    @Test func roundTripTimeFromReports() throws {
        let samples = try multiPacketStream(frames: 100, gop: 25)
        var link = Self.link(Case(loss: 0, rtx: false, seed: 9), nack: true)
        link.run(samples)
        let remote = link.sender.remoteStatistics
        #expect(remote.roundTripTimeMeasurements > 0)
        // NTP short format (1/65536 s) rounds each term: within 0.1 ms.
        #expect(abs((remote.roundTripTime ?? 0) - 0.020) < 0.000_1)
        #expect(remote.packetsLost == 0 && remote.fractionLost == 0)
        #expect(link.ended)
        #expect(link.received.count == samples.count && firstDifference(link.received, samples) == nil)
        #expect(link.receiver.statistics.framesReceived == samples.count)
        #expect(link.receiver.statistics.packetsReceived == link.sender.statistics.packetsSent)
    }
}

/// The index of the first sample whose bytes differ, if any.
func firstDifference(_ got: [CompressedSample], _ expected: [CompressedSample]) -> Int? {
    zip(got, expected).enumerated().first { $0.element.0.data != $0.element.1.data }?.offset
}
