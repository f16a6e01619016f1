import FormatConv
import RTPPayload

/// Checks what a depacketizer handed out: every sample well formed, the
/// counters consistent with the outputs and with each other.
private func check(
    _ outputs: [RTPDepacketizerOutput], _ depacketizer: RTPDepacketizer, codec: CodecType, received: Int
) -> [CompressedSample] {
    var samples: [CompressedSample] = []
    var unitDrops = 0
    for output in outputs {
        switch output {
        case .sample(let sample):
            guard let ranges = try? LengthPrefixed.nalUnitRanges(in: sample.data, lengthSize: 4, codec: codec),
                !ranges.isEmpty
            else { fatalError("the depacketizer wrote a malformed sample") }
            guard sample.formatDescription.codec == codec else { fatalError("a sample of the wrong codec") }
            samples.append(sample)
        case .dropped(let report): if report.reason.isAccessUnitReason { unitDrops += 1 }
        case .loss(let event): if event.count <= 0 { fatalError("a loss event of \(event.count) packets") }
        }
    }
    let s = depacketizer.statistics
    guard s.received == received,
        s.received == s.duplicates + s.late + s.refusedBeforeProcessing + s.processed
            + depacketizer.bufferedPacketCount,
        s.samples == samples.count, s.droppedAccessUnitCount == unitDrops
    else { fatalError("depacketizer counters do not add up: \(s)") }
    return samples
}

/// libFuzzer entry. The first byte picks the codec (bit 0), the mode
/// (bit 1), the reorder window (bits 2–3), DON (bit 4) and the aggregation
/// (bits 5–6).
///
/// Raw mode (bit 1 set): the rest is a list of packets, each a 16-bit
/// length and its bytes, given straight to the depacketizer.
///
/// Stream mode: the rest is an Annex-B stream (the fixtures are seeds); its
/// access units are packetized, damaged by a fault injector seeded from the
/// input (none when bit 7 is set, and the round trip must then be exact)
/// and depacketized.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTPDepacketizer(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let selector = data[0]
    let codec: CodecType = selector & 1 == 0 ? .h264 : .hevc
    let window = [1, 3, 8, 32][Int(selector >> 2) & 3]
    let don = codec == .hevc && selector & 0x10 != 0 ? 2 : 0
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var depacketizer = RTPDepacketizer(
        configuration: RTPDepacketizer.Configuration(
            codec: codec, reorderWindow: window, maximumAccessUnitSize: 1 << 20, maximumDONDifference: don))
    var outputs: [RTPDepacketizerOutput] = []
    var received = 0
    if selector & 2 != 0 {
        var offset = 0
        while offset + 2 <= bytes.count {
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            let end = min(bytes.count, offset + 2 + length)
            outputs += depacketizer.receive(Array(bytes[(offset + 2)..<end]))
            received += 1
            offset = end
        }
        outputs += depacketizer.finish()
        _ = check(outputs, depacketizer, codec: codec, received: received)
        return 0
    }
    var assembler = AccessUnitAssembler(codec: codec)
    let units = (assembler.append(bytes) + assembler.finish()).compactMap {
        if case .sample(let sample) = $0 { sample } else { nil }
    }
    let aggregation: RTPAggregation = [.none, .zeroLatency, .maximal, .zeroLatency][Int(selector >> 5) & 3]
    var packetizer = RTPPacketizer(
        configuration: RTPPacketizer.Configuration(
            codec: codec, ssrc: 1, initialSequenceNumber: 65_500, maximumPayloadSize: 64 + size % 1200,
            aggregation: aggregation, maximumDONDifference: don))
    var seed: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3 }
    let clean = selector & 0x80 != 0
    var faults = PacketFaultInjector(
        seed: seed, dropProbability: clean ? 0 : 0.05, duplicateProbability: clean ? 0 : 0.05,
        reorderProbability: clean ? 0 : 0.05, truncateProbability: clean ? 0 : 0.02, reorderDistance: 2)
    var allSent = true
    for unit in units {
        // Samples with NAL unit types RTP reserves are refused; skip them.
        guard let packets = try? packetizer.packetize(unit) else {
            allSent = false
            continue
        }
        for packet in packets {
            for damaged in faults.process(packet) {
                outputs += depacketizer.receive(damaged)
                received += 1
            }
        }
    }
    for late in faults.flush() {
        outputs += depacketizer.receive(late)
        received += 1
    }
    outputs += depacketizer.finish()
    let samples = check(outputs, depacketizer, codec: codec, received: received)
    if clean && allSent && samples.map(\.data) != units.map(\.data) {
        fatalError("a clean round trip changed the access units: \(units.count) in, \(samples.count) out")
    }
    return 0
}
