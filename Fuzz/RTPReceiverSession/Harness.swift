import FormatConv
import MediaCore
import RTPPayload

/// A receiver session on a fake clock, with what it handed out so far, and
/// the invariants checked after every call.
private struct Run {
    var session: RTPReceiverSession<UInt8>
    var samples: [CompressedSample] = []
    var losses = 0
    var ended = false
    var feedback: [[UInt8]] = []
    let codec: CodecType

    init(_ configuration: RTPReceiverConfiguration, rtcpEndpoint: (@Sendable (UInt8) -> UInt8)?) {
        session = RTPReceiverSession(configuration: configuration, rtcpEndpoint: rtcpEndpoint)
        codec = configuration.codec
    }

    mutating func take(_ events: [RTPReceiverSession<UInt8>.Event]) {
        for event in events {
            switch event {
            case .sample(let sample):
                guard !ended else { fatalError("a sample after the stream ended") }
                guard let ranges = try? LengthPrefixed.nalUnitRanges(in: sample.data, lengthSize: 4, codec: codec),
                    !ranges.isEmpty
                else { fatalError("the receiver handed out a malformed sample") }
                samples.append(sample)
            case .loss(let loss):
                guard loss.count > 0 else { fatalError("a loss event of \(loss.count) packets") }
                losses += 1
            case .rtcp(let datagram, _):
                guard (try? RTCPPacket.parseCompound(datagram)) != nil else { fatalError("unparsable RTCP out") }
                feedback.append(datagram)
            case .streamEnded:
                guard !ended else { fatalError("the stream ended twice") }
                ended = true
            }
        }
        check()
    }

    /// Serves every deadline up to `now`; after a poll the next deadline
    /// lies in the future (an I/O loop never spins).
    mutating func advance(to now: MediaTime) {
        while let deadline = session.nextDeadline, deadline <= now {
            take(session.poll(at: deadline))
            if let next = session.nextDeadline, next <= deadline {
                fatalError("poll(at: \(deadline)) left the deadline at \(next)")
            }
        }
        take(session.poll(at: now))
    }

    func check() {
        let s = session.statistics
        let configuration = session.configuration
        guard session.bufferedPacketCount <= configuration.jitterBufferCapacity,
            session.trackedMissingPacketCount <= (configuration.nack?.maximumTracked ?? 0),
            s.framesReceived == samples.count, s.losses.total == losses,
            s.losses.recent.count <= configuration.historyCapacity,
            s.drops.recent.count <= configuration.historyCapacity,
            s.packetsLost >= 0, s.packetsIgnored.total >= 0
        else { fatalError("receiver session state out of bounds: \(s)") }
    }
}

/// libFuzzer entry. The first byte picks the codec (bit 0), the mode
/// (bit 1), NACK (bit 2), RTX (bit 3), a configured payload type (bit 4)
/// MIN_SEQUENTIAL 1 or 2 (bit 5) and an RTCP address derived from the RTP
/// one (bit 6: address ^ 1).
///
/// Raw mode (bit 1 set): the rest is a list of datagrams, each a byte whose
/// bit 7 says RTCP and whose low 2 bits name one of four source addresses,
/// a byte of milliseconds to wait first, a 16-bit length and the bytes.
///
/// Stream mode: the rest is an Annex-B stream (the fixtures are seeds); its
/// access units go through an `RTPSenderSession` and a fault injector seeded
/// from the input (none when bit 7 is set), the receiver's RTCP back to the
/// sender, and stray datagrams from a second address in between. Without
/// faults every access unit must come out as it went in.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTPReceiverSession(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let selector = data[0]
    let codec: CodecType = selector & 1 == 0 ? .h264 : .hevc
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let pairedRTCP: @Sendable (UInt8) -> UInt8 = { $0 ^ 1 }
    // Inputs of even length run with transport-cc: numbers stamped, padding probes sent, feedback every 50 ms.
    let transportCC = size % 2 == 0
    var configuration = RTPReceiverConfiguration(
        codec: codec, payloadType: selector & 0x10 != 0 ? 96 : nil, ssrc: 0x7777,
        jitterBufferDelay: MediaTime(value: 30, timescale: 1000), jitterBufferCapacity: 64,
        jitterBufferByteLimit: 256 << 10, nack: selector & 4 != 0 ? .init(maximumTracked: 32) : nil,
        retransmission: selector & 8 != 0 ? RTPRetransmission(payloadType: 97) : nil,
        minimumSequential: selector & 0x20 != 0 ? 1 : 2, historyCapacity: 8)
    if transportCC { configuration.transportFeedback = .init(extensionID: 5) }
    var run = Run(configuration, rtcpEndpoint: selector & 0x40 != 0 ? pairedRTCP : nil)
    var now = MediaTime(value: 0, timescale: 1000)
    if selector & 2 != 0 {
        var offset = 0
        while offset + 4 <= bytes.count {
            let kind = bytes[offset]
            now = now + MediaTime(value: Int64(bytes[offset + 1]), timescale: 1000)
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let end = min(bytes.count, offset + 4 + length)
            let datagram = Array(bytes[(offset + 4)..<end])
            run.advance(to: now)
            if kind & 0x80 != 0 {
                run.take(run.session.receiveRTCP(datagram, from: kind & 3, at: now))
            } else {
                run.take(run.session.receiveRTP(datagram, from: kind & 3, at: now))
            }
            offset = end
        }
        run.advance(to: now + MediaTime(value: 5, timescale: 1))
        run.take(run.session.finish(at: now + MediaTime(value: 5, timescale: 1)))
        return 0
    }
    var assembler = AccessUnitAssembler(codec: codec)
    let units = (assembler.append(bytes) + assembler.finish()).compactMap {
        if case .sample(let sample) = $0 { sample } else { nil }
    }
    var sender = RTPSenderSession(
        configuration: .init(
            packetizer: .init(
                codec: codec, ssrc: 0x1234, initialSequenceNumber: 65_500, maximumPayloadSize: 64 + size % 1200),
            retransmission: selector & 8 != 0 ? RTPRetransmission(payloadType: 97, ssrc: 0x5678) : nil,
            transportSequenceNumberExtensionID: transportCC ? 5 : nil))
    var seed: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3 }
    let clean = selector & 0x80 != 0
    var faults = PacketFaultInjector(
        seed: seed, dropProbability: clean ? 0 : 0.05, duplicateProbability: clean ? 0 : 0.05,
        reorderProbability: clean ? 0 : 0.05, truncateProbability: clean ? 0 : 0.02, reorderDistance: 2)
    var allSent = true
    var stray = seed
    func deliver(_ events: [RTPSenderEvent], at now: MediaTime, run: inout Run, faults: inout PacketFaultInjector) {
        for event in events {
            switch event {
            case .rtp(let datagram):
                for damaged in faults.process(datagram) { run.take(run.session.receiveRTP(damaged, from: 0, at: now)) }
            case .rtcp(let datagram):
                run.take(run.session.receiveRTCP(datagram, from: 1, at: now))
            default:
                break
            }
        }
    }
    for (index, unit) in units.enumerated() {
        now = MediaTime(value: Int64(index) * 20, timescale: 1000)
        run.advance(to: now)
        // Samples with NAL unit types RTP reserves are refused; skip them.
        guard let events = try? sender.send(unit, at: now) else {
            allSent = false
            continue
        }
        deliver(events, at: now, run: &run, faults: &faults)
        if transportCC && index % 5 == 2 {
            deliver(sender.sendPadding(bytes: 300, at: now), at: now, run: &run, faults: &faults)
        }
        if !clean && index % 7 == 3 {
            // A stranger from another address: random header fields.
            stray = stray &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let header = RTPHeader(
                payloadType: 96, sequenceNumber: UInt16(truncatingIfNeeded: stray >> 16),
                timestamp: UInt32(truncatingIfNeeded: stray >> 32), ssrc: UInt32(truncatingIfNeeded: stray))
            run.take(run.session.receiveRTP(header.packet(payload: [0x65, 0x88, 0x80]), from: 2, at: now))
        }
        for datagram in run.feedback {
            deliver(sender.receiveRTCP(datagram, at: now), at: now, run: &run, faults: &faults)
        }
        run.feedback.removeAll()
    }
    for late in faults.flush() { run.take(run.session.receiveRTP(late, from: 0, at: now)) }
    deliver(sender.finish(at: now), at: now, run: &run, faults: &faults)
    run.advance(to: now + MediaTime(value: 1, timescale: 1))
    if !run.ended { run.take(run.session.finish(at: now + MediaTime(value: 1, timescale: 1))) }
    if clean && allSent && run.samples.map(\.data) != units.map(\.data) {
        fatalError("a clean round trip changed the access units: \(units.count) in, \(run.samples.count) out")
    }
    return 0
}
