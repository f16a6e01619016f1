import FormatConv
import MediaCore
import RTPPayload
import TestSupport
import Testing

/// Packetizer options beyond the conformance cases.
struct RTPPacketizerTests {
    /// STAP-A packets (type 24) in a packet list.
    static func aggregationCount(_ packets: [[UInt8]]) throws -> Int {
        try packets.filter { try split($0).payload[0] & 0x1F == 24 }.count
    }

    @Test func parameterSetPolicies() throws {
        // Keyframes every 10 frames at 25 fps: at 0, 0.4, 0.8, 1.2, 1.6, 2.0 s.
        let samples = try HandMadeH264.stream(frames: 60, gop: 10)
        let every = try packetizeAll(samples, RTPPacketizer.Configuration(codec: .h264, ssrc: 1))
        #expect(try Self.aggregationCount(every) == 6)
        // At most once a second: at 0 and 1.2 s.
        let interval = try packetizeAll(
            samples,
            RTPPacketizer.Configuration(
                codec: .h264, ssrc: 1, parameterSets: .interval(MediaTime(value: 1, timescale: 1))))
        let timestamps = try interval.filter { try split($0).payload[0] & 0x1F == 24 }.map {
            try split($0).header.timestamp
        }
        #expect(timestamps == [0, 30 * 3600])
        let never = try packetizeAll(samples, RTPPacketizer.Configuration(codec: .h264, ssrc: 1, parameterSets: .never))
        #expect(try Self.aggregationCount(never) == 0)
    }

    @Test func aggregationModes() throws {
        // An access unit of an SEI, two slices and an SEI after them (all small).
        let sei: [UInt8] = [0x06, 0x05, 0x02, 0xAB, 0xCD, 0x80]
        let first = HandMadeH264.pSlice(size: 20, fill: 1)
        let second: [UInt8] = [0x41, 0xE0] + [UInt8](repeating: 2, count: 18)
        let sample = try HandMadeH264.sample([sei, first, second, sei], index: 1, keyframe: false)
        func payloads(_ aggregation: RTPAggregation) throws -> [[UInt8]] {
            var packetizer = RTPPacketizer(
                configuration: RTPPacketizer.Configuration(codec: .h264, ssrc: 1, aggregation: aggregation))
            return try packetizer.packetize(sample).map { try split($0).payload }
        }
        func stapA(_ nals: [[UInt8]]) -> [UInt8] {
            // F=0, NRI = the largest (2 for the slices, 0 for the SEI), type 24.
            let nri = nals.map { $0[0] & 0x60 }.max()!
            return [nri | 24] + nals.flatMap { [UInt8($0.count >> 8), UInt8($0.count & 0xFF)] + $0 }
        }
        #expect(try payloads(.none) == [sei, first, second, sei])
        #expect(try payloads(.zeroLatency) == [stapA([sei, first]), second, sei])
        #expect(try payloads(.maximal) == [stapA([sei, first, second, sei])])
        // Whatever the grouping, the depacketizer gives back the sample.
        for aggregation in [RTPAggregation.none, .zeroLatency, .maximal] {
            var packetizer = RTPPacketizer(
                configuration: RTPPacketizer.Configuration(codec: .h264, ssrc: 1, aggregation: aggregation))
            let key = try HandMadeH264.sample([HandMadeH264.idr()], index: 0, keyframe: true)
            let packets = try packetizer.packetize(key) + packetizer.packetize(sample)
            let got = emitted(depacketizeAll(packets, RTPDepacketizer.Configuration(codec: .h264)).outputs)
            #expect(got.map(\.data) == [key.data, sample.data], "\(aggregation)")
        }
    }

    @Test func batchReusesItsStorageAndCountsBytes() throws {
        let samples = try HandMadeH264.stream(frames: 20, gop: 10, sliceSize: 3000)
        var packetizer = RTPPacketizer(configuration: RTPPacketizer.Configuration(codec: .h264, ssrc: 1))
        var batch = RTPPacketBatch()
        var capacity = 0
        var payloadBytes = 0
        for sample in samples {
            batch.removeAll()
            try packetizer.packetize(sample, into: &batch)
            #expect(batch.allSatisfy { $0.count <= 12 + 1200 })
            payloadBytes += batch.reduce(0) { $0 + $1.count - 12 }
            if sample.pts > .zero { #expect(batch.bytes.capacity == capacity) }
            capacity = batch.bytes.capacity
        }
        #expect(packetizer.payloadByteCount == payloadBytes)
    }

    @Test func refusesWhatRTPCannotCarry() throws {
        for type: UInt8 in [0, 24, 28, 31] {
            let sample = try HandMadeH264.sample([[type, 1, 2, 3]], index: 0, keyframe: false)
            var packetizer = RTPPacketizer(codec: .h264, ssrc: 1)
            #expect(throws: MediaError.self, "type \(type)") { try packetizer.packetize(sample) }
        }
        var packetizer = RTPPacketizer(codec: .hevc, ssrc: 1)
        #expect(throws: MediaError.self) {
            try packetizer.packetize(try HandMadeH264.sample([HandMadeH264.idr()], index: 0, keyframe: true))
        }
    }
}

struct RTPDepacketizerSequenceTests {
    /// A sender that restarts its sequence numbers far below the expected
    /// one: the first such packet is late, the second confirms the restart,
    /// and samples resume at the next keyframe.
    @Test func senderRestartResynchronizes() throws {
        let samples = try HandMadeH264.stream(frames: 20, gop: 5)
        var first = RTPPacketizer(
            configuration: RTPPacketizer.Configuration(codec: .h264, ssrc: 1, initialSequenceNumber: 30_000))
        var second = RTPPacketizer(
            configuration: RTPPacketizer.Configuration(codec: .h264, ssrc: 1, initialSequenceNumber: 10_000))
        var packets: [[UInt8]] = []
        for sample in samples[0..<10] { packets += try first.packetize(sample) }
        for sample in samples[10...] { packets += try second.packetize(sample) }
        var configuration = RTPDepacketizer.Configuration(codec: .h264)
        configuration.reorderWindow = 4
        let (outputs, statistics) = depacketizeAll(packets, configuration)
        // Frame 10's two packets (STAP-A and slice): the first is late, the
        // second restarts the stream mid access unit, so 10 to 14 are lost
        // to the restart and 15 (a keyframe) onwards come through.
        #expect(statistics.late == 1)
        #expect(emitted(outputs).map(\.data) == samples[0..<10].map(\.data) + samples[15...].map(\.data))
    }
}

struct RTPDepacketizerLimitsTests {
    /// An access unit over the size limit is dropped and counted, whether
    /// its bytes came in one packet or in fragments; the next keyframe
    /// comes through.
    @Test func oversizedAccessUnitsAreDroppedAndCounted() throws {
        var samples = try HandMadeH264.stream(frames: 6, gop: 3)
        samples[1] = try HandMadeH264.sample([HandMadeH264.pSlice(size: 1500)], index: 1, keyframe: false)
        for bound in [1200, 60_000] {
            let packets = try packetizeAll(
                samples, RTPPacketizer.Configuration(codec: .h264, ssrc: 1, maximumPayloadSize: bound))
            var configuration = RTPDepacketizer.Configuration(codec: .h264)
            configuration.maximumAccessUnitSize = 1024
            let (outputs, statistics) = depacketizeAll(packets, configuration)
            #expect(statistics.droppedAccessUnits[.oversizedAccessUnit] == 1, "bound \(bound)")
            #expect(statistics.droppedAccessUnits[.waitingForKeyframe] == 1, "bound \(bound)")
            #expect(emitted(outputs).map(\.data) == [samples[0].data] + samples[3...].map(\.data), "bound \(bound)")
        }
    }

    /// A mid-stream change of parameter sets (a new resolution) gives
    /// samples with a new description, which a session cannot accept.
    @Test func aResolutionChangeGivesANewDescription() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let large = try RTPTestStreams.encode(.h264, frames: 6, gop: 3, in: directory, name: "large")
        let small = try RTPTestStreams.encode(
            .h264, frames: 6, gop: 3, extra: ["-vf", "scale=160:120"], in: directory, name: "small")
        let shifted = small.samples.map { sample in
            var sample = sample
            sample.pts = sample.pts + MediaTime(value: 6, timescale: 25)
            return sample
        }
        let packets = try packetizeAll(large.samples + shifted, RTPPacketizer.Configuration(codec: .h264, ssrc: 1))
        let got = emitted(depacketizeAll(packets, RTPDepacketizer.Configuration(codec: .h264)).outputs)
        #expect(got.map(\.data) == (large.samples + small.samples).map(\.data))
        #expect(got.map(\.formatDescription.width) == Array(repeating: 320, count: 6) + Array(repeating: 160, count: 6))
        #expect(got[5].formatDescription.canAccept(got[6].formatDescription) == false)
        #expect(got[6].formatDescription.parameterSets == small.samples[0].formatDescription.parameterSets)
    }
}

/// The parameter sets before a keyframe go in as few packets as fit: an
/// HEVC record whose prefix SEI (2000 bytes, as FFmpeg's libx265 stores
/// x265's settings in hvcC) is too large for a packet still sends VPS, SPS
/// and PPS in one AP, then the SEI in fragments (they used to go as three
/// single packets once the record outgrew one packet).
@Test func parameterSetsShareAnAggregationPacketBesideALargeSEI() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let stream = try RTPTestStreams.encode(.hevc, frames: 2, in: directory)
    var sample = try #require(stream.samples.first)
    let sets = sample.formatDescription.parameterSets.filter { [32, 33, 34].contains(($0[0] >> 1) & 0x3F) }
    #expect(sets.count == 3)
    let sei: [UInt8] = [0x4E, 0x01, 0x05] + [UInt8](repeating: 0x5A, count: 1997)
    sample.formatDescription = try FormatDescription(hevcParameterSets: sets + [sei])
    let packets = try packetizeAll([sample], .init(codec: .hevc, ssrc: 1))
    let payloads = try packets.map { try split($0).payload }
    // Packet 1: an AP (type 48) holding the three sets, in order.
    #expect((payloads[0][0] >> 1) & 0x3F == 48)
    var offset = 2
    var types: [UInt8] = []
    while offset + 2 <= payloads[0].count {
        let size = Int(payloads[0][offset]) << 8 | Int(payloads[0][offset + 1])
        types.append((payloads[0][offset + 2] >> 1) & 0x3F)
        offset += 2 + size
    }
    #expect(types == [32, 33, 34])
    #expect(offset == payloads[0].count)
    // Then the SEI in fragmentation units (type 49, FU type 39): start, …, end.
    // (x265's own SEI may follow in-band in the sample: only the first run counts.)
    let fragments = Array(payloads.dropFirst().prefix { ($0[0] >> 1) & 0x3F == 49 && $0[2] & 0x3F == 39 })
    let end = try #require(fragments.firstIndex { $0[2] & 0x40 != 0 })
    #expect(end == 1, "the record's SEI took \(end + 1) fragments")
    #expect(fragments[0][2] & 0x80 != 0)
    #expect(fragments[0...end].reduce(0) { $0 + $1.count - 3 } == sei.count - 2)
}
