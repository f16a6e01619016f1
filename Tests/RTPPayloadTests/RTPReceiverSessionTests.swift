import FormatConv
import Foundation
import MediaCore
import RTPPayload
import Testing

/// Drives a receiver session with datagrams at given times (ms) from given
/// endpoints, collecting what it hands out.
struct ReceiverDriver {
    var session: RTPReceiverSession<String>
    var samples: [CompressedSample] = []
    var losses: [RTPLossEvent] = []
    var rtcp: [[UInt8]] = []
    var ended = false
    var now = ms(0)

    init(
        _ configuration: RTPReceiverSession<String>.Configuration,
        rtcpEndpoint: (@Sendable (String) -> String)? = nil
    ) {
        session = RTPReceiverSession(configuration: configuration, rtcpEndpoint: rtcpEndpoint)
    }

    mutating func take(_ events: [RTPReceiverSession<String>.Event]) {
        for event in events {
            switch event {
            case .sample(let sample): samples.append(sample)
            case .loss(let loss): losses.append(loss)
            case .rtcp(let datagram, _): rtcp.append(datagram)
            case .streamEnded: ended = true
            }
        }
    }

    /// Moves the clock to `time`, polling at every deadline on the way.
    mutating func advance(to time: MediaTime) {
        while let deadline = session.nextDeadline, deadline <= time {
            now = max(now, deadline)
            take(session.poll(at: now))
            if session.nextDeadline.map({ $0 <= now }) ?? false {
                now = now + MediaTime(value: 1, timescale: 1_000_000)
            }
        }
        now = max(now, time)
        take(session.poll(at: now))
    }

    mutating func rtp(_ datagram: [UInt8], from endpoint: String = "sender:5004", at time: MediaTime) {
        advance(to: time)
        take(session.receiveRTP(datagram, from: endpoint, at: now))
    }

    mutating func rtcp(_ datagram: [UInt8], from endpoint: String = "sender:5005", at time: MediaTime) {
        advance(to: time)
        take(session.receiveRTCP(datagram, from: endpoint, at: now))
    }
}

/// The packets of `samples` as one sender would send them.
func senderPackets(
    _ samples: [CompressedSample], ssrc: UInt32 = 0xAAAA_0001, sequence: UInt16 = 40_000, payloadType: UInt8 = 96
) throws -> [[[UInt8]]] {
    var packetizer = RTPPacketizer(
        configuration: RTPPacketizer.Configuration(
            codec: .h264, payloadType: payloadType, ssrc: ssrc, initialSequenceNumber: sequence))
    return try samples.map { try packetizer.packetize($0) }
}

func datas(_ samples: [CompressedSample]) -> [[UInt8]] { samples.map(\.data) }

/// Peers that are not the stream's sender. Each test states the naive
/// behaviour it guards against, and fails when the check is switched off
/// (tried: no SSRC and address lock after acceptance, any BYE accepted, no
/// probation, no RFC 3550 A.1 restart).
struct RTPReceiverSessionHostilePeerTests {
    static func configuration(payloadType: UInt8? = 96) -> RTPReceiverSession<String>.Configuration {
        .init(codec: .h264, payloadType: payloadType, ssrc: 0x7777, jitterBufferDelay: ms(50))
    }

    /// Guards: a jitter buffer that jumps to a stranger's sequence numbers
    /// and then refuses the real packets as late (issue 23: 87 of 300
    /// frames). A third party on another address sends four datagrams with
    /// random SSRCs and sequence numbers, and four with the stream's own
    /// SSRC (learned by sniffing) but random sequence numbers.
    @Test func thirdPartyMidStreamDoesNotDisturbTheStream() throws {
        let samples = try multiPacketStream(frames: 60, gop: 30)
        var driver = ReceiverDriver(Self.configuration())
        var random = SeededRandomNumberGenerator(seed: 23)
        for (index, packets) in try senderPackets(samples).enumerated() {
            for packet in packets { driver.rtp(packet, at: ms(Int64(index) * 40)) }
            if index == 20 || index == 21 {
                for stranger in 0..<4 {
                    let ssrc = index == 20 ? UInt32(truncatingIfNeeded: random.next()) : 0xAAAA_0001
                    let packet = handPacket(
                        sequenceNumber: UInt16(truncatingIfNeeded: random.next()),
                        timestamp: UInt32(truncatingIfNeeded: random.next()), ssrc: ssrc,
                        payload: [0x65, 0x88, 0x80, UInt8(stranger)])
                    driver.rtp(packet, from: "stranger:40000", at: ms(Int64(index) * 40 + 5))
                }
            }
        }
        driver.advance(to: ms(5000))
        #expect(datas(driver.samples) == datas(samples))
        #expect(driver.losses.isEmpty)
        #expect(driver.session.statistics.packetsIgnored.otherSource == 8)
        #expect(driver.session.statistics.sourceChanges == 0)
    }

    /// Guards: a receiver that locks onto whatever arrives first (issue 23:
    /// 0 of 90 frames after random datagrams). Random bytes, half of them
    /// with a valid RTP version, from five addresses, then the stream.
    @Test func randomDatagramsBeforeTheStream() throws {
        let samples = try multiPacketStream(frames: 40, gop: 20)
        var driver = ReceiverDriver(Self.configuration(payloadType: nil))
        var random = SeededRandomNumberGenerator(seed: 99)
        for index in 0..<200 {
            var bytes = (0..<(1 + Int(random.next() % 60))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if index % 2 == 0 && bytes.count > 0 { bytes[0] = 0x80 | (bytes[0] & 0x3F) }
            driver.rtp(bytes, from: "noise:\(index % 5)", at: ms(Int64(index)))
        }
        for (index, packets) in try senderPackets(samples).enumerated() {
            for packet in packets { driver.rtp(packet, at: ms(300 + Int64(index) * 40)) }
        }
        driver.advance(to: ms(10_000))
        #expect(datas(driver.samples) == datas(samples))
        let ignored = driver.session.statistics.packetsIgnored
        #expect(ignored.malformed + ignored.otherSource + ignored.otherPayloadType == 200)
        #expect(driver.session.acceptedSource?.ssrc == 0xAAAA_0001)
    }

    /// Guards: packets of another payload type or SSRC taken as the
    /// stream's (issue 23). From the sender's own address, interleaved
    /// with the stream: a second payload type on the stream's SSRC and a
    /// second SSRC in sequence of its own. The payload type is learned from
    /// the first source accepted.
    @Test func otherPayloadTypeAndSSRCAreIgnored() throws {
        let samples = try multiPacketStream(frames: 40, gop: 20)
        let stream = try senderPackets(samples)
        let otherType = try senderPackets(samples, sequence: 7, payloadType: 100).flatMap { $0 }
        let otherSSRC = try senderPackets(samples, ssrc: 0xBBBB_0002, sequence: 9).flatMap { $0 }
        var driver = ReceiverDriver(Self.configuration(payloadType: nil))
        var extra = 0
        for (index, packets) in stream.enumerated() {
            for packet in packets {
                driver.rtp(packet, at: ms(Int64(index) * 40))
                driver.rtp(otherType[extra], at: ms(Int64(index) * 40))
                driver.rtp(otherSSRC[extra], at: ms(Int64(index) * 40))
                extra += 1
            }
        }
        driver.advance(to: ms(10_000))
        #expect(datas(driver.samples) == datas(samples))
        #expect(driver.losses.isEmpty)
        // The first packet of the other type arrived before the stream was
        // accepted: it started a candidate of its own (counted as another
        // source); every later one is refused for its type.
        let ignored = driver.session.statistics.packetsIgnored
        #expect(ignored.otherPayloadType + ignored.otherSource == 2 * extra)
        #expect(ignored.otherSource >= extra)
        #expect(driver.session.statistics.sourceChanges == 0)
    }

    /// Guards: a sender that restarts (new SSRC, sequence numbers behind the
    /// old ones) refused for good, every packet "late" (issue 23). Same
    /// address, new SSRC: accepted after probation.
    @Test func senderRestartWithNewSSRCIsReacquired() throws {
        let first = try multiPacketStream(frames: 30, gop: 30)
        let second = try multiPacketStream(frames: 30, gop: 30)
        var driver = ReceiverDriver(Self.configuration())
        let before = try senderPackets(first, sequence: 40_000)
        let lastSequence = 40_000 + before.joined().count
        for (index, packets) in before.enumerated() {
            for packet in packets { driver.rtp(packet, at: ms(Int64(index) * 40)) }
        }
        let after = try senderPackets(second, ssrc: 0xCCCC_0003, sequence: UInt16(lastSequence - 1000))
        for (index, packets) in after.enumerated() {
            for packet in packets { driver.rtp(packet, at: ms(1500 + Int64(index) * 40)) }
        }
        driver.advance(to: ms(10_000))
        #expect(datas(driver.samples) == datas(first) + datas(second))
        #expect(driver.session.statistics.sourceChanges == 1)
        #expect(driver.session.acceptedSource?.ssrc == 0xCCCC_0003)
    }

    /// The same SSRC jumping far behind (a sender that restarted without a
    /// new SSRC): RFC 3550 A.1 refuses the first packet and accepts the
    /// jump when the next follows it, and the first is taken too.
    @Test func senderRestartWithSameSSRCIsReacquired() throws {
        let first = try multiPacketStream(frames: 20, gop: 20)
        let second = try multiPacketStream(frames: 20, gop: 20)
        var driver = ReceiverDriver(Self.configuration())
        for (index, packets) in try senderPackets(first, sequence: 30_000).enumerated() {
            for packet in packets { driver.rtp(packet, at: ms(Int64(index) * 40)) }
        }
        for (index, packets) in try senderPackets(second, sequence: 20_000).enumerated() {
            for packet in packets { driver.rtp(packet, at: ms(1000 + Int64(index) * 40)) }
        }
        driver.advance(to: ms(10_000))
        #expect(datas(driver.samples) == datas(first) + datas(second))
        #expect(driver.session.statistics.packetsIgnored.badSequence == 0)
        #expect(driver.session.statistics.sourceChanges == 1)
    }

    /// A new source on another address replaces the locked one only after
    /// the locked one has been silent for the source timeout; before that
    /// it is ignored (a stranger in sequence cannot take a live stream).
    @Test func newSourceOnAnotherAddressWaitsForSilence() throws {
        let first = try multiPacketStream(frames: 20, gop: 20)
        let intruder = try multiPacketStream(frames: 5, gop: 5)
        let second = try multiPacketStream(frames: 20, gop: 20)
        var driver = ReceiverDriver(Self.configuration())
        let intruderPackets = try senderPackets(intruder, ssrc: 0xDDDD_0004, sequence: 5).flatMap { $0 }
        var intruding = 0
        for (index, packets) in try senderPackets(first).enumerated() {
            for packet in packets {
                driver.rtp(packet, at: ms(Int64(index) * 40))
                if intruding < intruderPackets.count {
                    driver.rtp(intruderPackets[intruding], from: "stranger:1", at: ms(Int64(index) * 40 + 1))
                    intruding += 1
                }
            }
        }
        #expect(driver.session.acceptedSource?.ssrc == 0xAAAA_0001)
        // Silent for 2 s (the source timeout), then another address.
        for (index, packets) in try senderPackets(second, ssrc: 0xEEEE_0005, sequence: 1).enumerated() {
            for packet in packets { driver.rtp(packet, from: "moved:5004", at: ms(3000 + Int64(index) * 40)) }
        }
        driver.advance(to: ms(10_000))
        #expect(datas(driver.samples) == datas(first) + datas(second))
        #expect(driver.session.acceptedSource?.ssrc == 0xEEEE_0005)
        #expect(driver.session.statistics.sourceChanges == 1)
    }

    /// Guards: any BYE from any port ending the session (issue 23). A BYE
    /// for another SSRC from the sender's RTCP address, and one for the
    /// stream's SSRC from another address, are ignored; the sender's own
    /// ends the stream, after every frame.
    @Test func goodbyeOnlyFromTheStreamsSource() throws {
        let samples = try multiPacketStream(frames: 30, gop: 15)
        var sender = RTPSenderSession(
            configuration: .init(packetizer: .init(codec: .h264, ssrc: 0xAAAA_0001, initialSequenceNumber: 1)))
        var driver = ReceiverDriver(Self.configuration())
        for event in sender.poll(at: ms(0)) {
            if case .rtcp(let datagram) = event { driver.rtcp(datagram, at: ms(0)) }
        }
        for (index, sample) in samples.enumerated() {
            let now = ms(Int64(index) * 40)
            for event in try sender.send(sample, at: now) {
                switch event {
                case .rtp(let datagram): driver.rtp(datagram, at: now)
                case .rtcp(let datagram): driver.rtcp(datagram, at: now)
                default: break
                }
            }
            if index == 10 {
                driver.rtcp(RTCPPacket.goodbye(ssrcs: [0x1234_5678], reason: nil).bytes, at: now + ms(1))
                driver.rtcp(
                    RTCPPacket.goodbye(ssrcs: [0xAAAA_0001], reason: "spoofed").bytes, from: "stranger:5005",
                    at: now + ms(2))
            }
        }
        #expect(!driver.ended)
        #expect(driver.session.statistics.packetsIgnored.refusedGoodbye == 2)
        for event in sender.finish(at: ms(1300), reason: "done") {
            if case .rtcp(let datagram) = event { driver.rtcp(datagram, at: ms(1300)) }
        }
        driver.advance(to: ms(1400))
        #expect(driver.ended)
        #expect(datas(driver.samples) == datas(samples))
        // After the end, nothing more is taken.
        driver.rtp(try senderPackets(samples)[0][0], at: ms(1500))
        #expect(driver.session.statistics.packetsIgnored.afterEnd == 1)
    }
}

extension RTPReceiverSessionHostilePeerTests {
    /// Guards: a peer that knows the SSRC and sends a sender report before
    /// the real sender claiming its RTCP address, then a BYE. With the RTCP
    /// address derived from the RTP one (port + 1), neither counts, and
    /// feedback goes to the real sender.
    @Test func spoofedSenderReportCannotClaimTheRTCPAddress() throws {
        let samples = try multiPacketStream(frames: 20, gop: 10)
        var driver = ReceiverDriver(
            Self.configuration(), rtcpEndpoint: { rtp in rtp.replacingOccurrences(of: ":5004", with: ":5005") })
        let spoof = RTCPPacket.senderReport(
            ssrc: 0xAAAA_0001, ntpTimestamp: 1 << 32, rtpTimestamp: 0, packetCount: 0, octetCount: 0, reports: [])
        driver.rtcp(spoof.bytes, from: "stranger:5005", at: ms(0))
        for (index, packets) in try senderPackets(samples).enumerated() {
            for packet in packets { driver.rtp(packet, at: ms(1 + Int64(index) * 40)) }
            if index == 5 {
                driver.rtcp(spoof.bytes, from: "stranger:5005", at: ms(1 + Int64(index) * 40))
                driver.rtcp(
                    RTCPPacket.goodbye(ssrcs: [0xAAAA_0001], reason: nil).bytes, from: "stranger:5005",
                    at: ms(2 + Int64(index) * 40))
            }
        }
        #expect(!driver.ended)
        #expect(driver.session.acceptedSource?.rtcpEndpoint == "sender:5005")
        driver.rtcp(RTCPPacket.goodbye(ssrcs: [0xAAAA_0001], reason: nil).bytes, from: "sender:5005", at: ms(900))
        driver.advance(to: ms(1000))
        #expect(driver.ended)
        #expect(datas(driver.samples) == datas(samples))
        #expect(driver.session.statistics.packetsIgnored.refusedGoodbye == 1)
    }
}

struct RTPReceiverSessionTests {
    /// RFC 3550 A.8 by hand for a known arrival schedule (90 kHz; 40 ms
    /// per frame = 3600 units). Sequence 2 is lost, so 3 and 4 wait in the
    /// jitter buffer (50 ms): the jitter counts their arrival, not their
    /// release.
    ///
    /// | seq | timestamp | arrival | arrival × 90 | transit | D    |
    /// | 0   | 0         | 0 ms    | 0            | 0       | —    |
    /// | 1   | 3600      | 40 ms   | 3600         | 0       | 0    |
    /// | 3   | 10800     | 120 ms  | 10800        | 0       | 0    |
    /// | 4   | 14400     | 175 ms  | 15750        | 1350    | 1350 |
    ///
    /// J = 0, 0, then 0 + (1350 − 0) / 16 = 84.375: 84 in the report. At
    /// release, sequence 3 would have left at 170 ms (transit 4500) instead.
    @Test func reportJitterIsMeasuredAtArrival() throws {
        var configuration = RTPReceiverSessionHostilePeerTests.configuration()
        configuration.nack = nil
        var driver = ReceiverDriver(configuration)
        let schedule: [(UInt16, UInt32, Int64)] = [(0, 0, 0), (1, 3600, 40), (3, 10_800, 120), (4, 14_400, 175)]
        for (sequence, timestamp, arrival) in schedule {
            driver.rtp(
                handPacket(
                    sequenceNumber: sequence, timestamp: timestamp, marker: true, ssrc: 0xAAAA_0001,
                    payload: HandMadeH264.pSlice()), at: ms(arrival))
        }
        #expect(driver.session.bufferedPacketCount == 0)
        driver.advance(to: ms(1100))
        let reports = try driver.rtcp.flatMap { try RTCPPacket.parseCompound($0) }.compactMap { packet in
            if case .receiverReport(_, let blocks) = packet { blocks.first } else { nil }
        }
        #expect(reports.last?.jitter == 84)
        #expect(reports.last?.cumulativeLost == 1)
        #expect(reports.last?.extendedHighestSequenceNumber == 4)
        #expect(driver.session.statistics.jitter == 84.0 / 90_000)
        #expect(driver.session.statistics.packetsLost == 1)
        #expect(driver.losses == [RTPLossEvent(firstSequenceNumber: 2, count: 1)])
    }

    /// A loss the NACK cannot repair (the sender never answers): NACKs until
    /// the jitter buffer's delay passed, then a loss event and a PLI, and
    /// PLIs at most every 500 ms until a keyframe.
    @Test func unrepairedLossGivesUpAtTheDeadlineAndAsksForAKeyframe() throws {
        let samples = try multiPacketStream(frames: 30, gop: 100)
        var driver = ReceiverDriver(RTPReceiverSessionHostilePeerTests.configuration())
        let packets = try senderPackets(samples).flatMap { $0 }
        var sent = 0
        for (index, packet) in packets.enumerated() where index != 20 {
            driver.rtp(packet, at: ms(Int64(index) * 10))
            sent += 1
        }
        driver.advance(to: ms(Int64(packets.count) * 10 + 2000))
        let feedback = try driver.rtcp.flatMap { try RTCPPacket.parseCompound($0) }
        let nacks = feedback.compactMap { packet in
            if case .genericNACK(_, let media, let numbers) = packet, media == 0xAAAA_0001 { numbers } else { nil }
        }
        let lost = UInt16(40_000 + 20)
        // Asked at +10 ms, then every 20 ms until the 50 ms deadline: 10, 30.
        #expect(nacks == [[lost], [lost]])
        #expect(driver.losses == [RTPLossEvent(firstSequenceNumber: lost, count: 1)])
        let plis = feedback.filter { if case .pictureLossIndication = $0 { true } else { false } }
        #expect(plis.count == driver.session.statistics.pliCount)
        #expect(plis.count >= 2)
        #expect(driver.session.statistics.nackCount == 2 && driver.session.statistics.nackRequests == 2)
        #expect(driver.session.trackedMissingPacketCount == 0)
    }

    /// With a known round-trip time (100 ms), a NACK is repeated only after
    /// 1.25 × that; with FIR configured, the keyframe request is a FIR with
    /// a command sequence number that grows per request.
    @Test func roundTripAwareRepeatsAndFullIntraRequests() throws {
        var configuration = RTPReceiverSessionHostilePeerTests.configuration()
        configuration.jitterBufferDelay = ms(400)
        configuration.keyframeRequest = .fullIntraRequest
        var driver = ReceiverDriver(configuration)
        driver.session.roundTripTime = ms(100)
        let packets = try senderPackets(try multiPacketStream(frames: 10, gop: 100)).flatMap { $0 }
        for (index, packet) in packets.enumerated() where index != 5 {
            driver.rtp(packet, at: ms(Int64(index)))
        }
        driver.advance(to: ms(2000))
        let feedback = try driver.rtcp.flatMap { try RTCPPacket.parseCompound($0) }
        let nacks = feedback.filter { if case .genericNACK = $0 { true } else { false } }
        // Gap seen at 6 ms: asked at 16, 141, 266, 391 ms; given up at 406 ms.
        #expect(nacks.count == 4)
        let firs = feedback.compactMap { packet in
            if case .fullIntraRequest(_, let requests) = packet { requests } else { nil }
        }
        #expect(!firs.isEmpty && driver.session.statistics.pliCount == 0)
        #expect(firs.map { $0.map(\.sequenceNumber) } == (1...firs.count).map { [UInt8($0)] })
        #expect(firs.allSatisfy { $0.map(\.ssrc) == [0xAAAA_0001] })
        #expect(driver.session.statistics.firCount == firs.count)
    }

    /// `timestampOrigin` turns a sample's pts back into its RTP timestamp:
    /// the sender's timestamps start just below the 32-bit wrap, and every
    /// sample's origin + pts (modulo 2³²) is the timestamp the packetizer
    /// gave it.
    @Test func timestampOriginGivesBackTheRTPTimestamps() throws {
        let samples = try multiPacketStream(frames: 20, gop: 10)
        var packetizer = RTPPacketizer(
            configuration: .init(codec: .h264, ssrc: 0xAAAA_0001, timestampOffset: 0xFFFF_F000))
        let expected = samples.map { packetizer.rtpTimestamp(of: $0) }
        let packets = try samples.flatMap { try packetizer.packetize($0) }
        #expect(expected.first == 0xFFFF_F000 && expected.last! < 0x1_0000)  // across the wrap
        var driver = ReceiverDriver(.init(codec: .h264, payloadType: 96, jitterBufferDelay: ms(50)))
        #expect(driver.session.timestampOrigin == nil)
        for (index, packet) in packets.enumerated() { driver.rtp(packet, at: ms(Int64(index))) }
        driver.advance(to: ms(1000))
        let origin = try #require(driver.session.timestampOrigin)
        #expect(origin == 0xFFFF_F000)
        #expect(driver.samples.count == samples.count)
        let rebuilt = driver.samples.map {
            origin &+ UInt32(truncatingIfNeeded: $0.pts.converted(toTimescale: 90_000).value)
        }
        #expect(rebuilt == expected)
    }

    @Test func manualClockMovesOnlyWhenTold() {
        let clock = RTPManualClock()
        #expect(clock.now == .zero)
        clock.advance(by: ms(20))
        clock.set(ms(50))
        #expect(clock.now == ms(50))
        let monotonic = RTPMonotonicClock()
        let first = monotonic.now
        #expect(monotonic.now >= first)
    }

    /// Histories keep the newest entries and count them all.
    @Test func lossHistoryIsBounded() throws {
        var configuration = RTPReceiverSessionHostilePeerTests.configuration()
        configuration.nack = nil
        configuration.historyCapacity = 4
        var driver = ReceiverDriver(configuration)
        let packets = try senderPackets(try multiPacketStream(frames: 60, gop: 5)).flatMap { $0 }
        for (index, packet) in packets.enumerated() where index % 10 != 5 {
            driver.rtp(packet, at: ms(Int64(index) * 10))
        }
        driver.take(driver.session.finish(at: ms(100_000)))
        let losses = driver.session.statistics.losses
        let expected = (0..<packets.count).filter { $0 % 10 == 5 }.count
        #expect(losses.total == expected && driver.losses.count == expected)
        #expect(losses.recent == Array(driver.losses.suffix(4)))
        #expect(driver.session.statistics.drops.recent.count == 4)
        #expect(driver.session.statistics.drops.total == driver.session.statistics.accessUnitsDropped)
    }

    @Test func eventHistoryKeepsTheNewest() {
        var history = RTPEventHistory<Int>(capacity: 3)
        for value in 1...10 { history.append(value) }
        #expect(history.recent == [8, 9, 10] && history.total == 10 && history.last == 10)
    }

    @Test func sequenceUnwrapperCrossesTheWrap() {
        var unwrapper = RTPSequenceUnwrapper()
        #expect(unwrapper.unwrap(65_534) == 65_534 + 65_536)
        #expect(unwrapper.unwrap(65_535) == 65_535 + 65_536)
        #expect(unwrapper.unwrap(0) == 2 * 65_536)
        #expect(unwrapper.unwrap(65_530) == 65_530 + 65_536)  // a little behind stays behind
        #expect(unwrapper.unwrap(5) == 2 * 65_536 + 5)
        #expect(unwrapper.highest == Int64(2 * 65_536 + 5))
    }
}

/// The start of a stream reordered while its source is on probation.
struct RTPReceiverSessionProbationTests {
    /// Guards: the packet that completes probation taken as the newest, so
    /// that a packet ahead of it (the stream's first, arriving second) is
    /// dropped as "behind by 65 535" and the first GOP is lost. The first
    /// `order.count` packets arrive in `order`, the rest in sequence.
    @Test(arguments: [[1, 0], [2, 1, 0], [1, 2, 0], [0, 2, 1]])
    func reorderedStartKeepsEveryPacket(order: [Int]) throws {
        let samples = try multiPacketStream(frames: 30, gop: 10)
        let packets = try senderPackets(samples).flatMap { $0 }
        var driver = ReceiverDriver(.init(codec: .h264, payloadType: 96, jitterBufferDelay: ms(50)))
        let arrival = order + Array(order.count..<packets.count)
        for (index, packet) in arrival.enumerated() { driver.rtp(packets[packet], at: ms(Int64(index))) }
        driver.advance(to: ms(5000))
        let everySample = datas(driver.samples) == datas(samples)
        #expect(everySample, "\(driver.samples.count) of \(samples.count) samples")
        #expect(driver.losses.isEmpty)
        #expect(driver.session.statistics.packetsIgnored.otherSource == 0)
    }
}
