import FormatConv
import TestSupport
import Testing

/// What an assembler output is, in comparable form.
enum Emitted: Equatable, CustomStringConvertible {
    case sample(data: [UInt8], pts: MediaTime, dts: MediaTime, keyframe: Bool, referenced: Bool, record: [UInt8])
    case dropped(reason: String, count: Int)

    init(_ output: AssemblerOutput) {
        switch output {
        case .sample(let s):
            self = .sample(
                data: s.data, pts: s.pts, dts: s.dts, keyframe: s.isKeyframe, referenced: s.dependsOnOthers,
                record: s.formatDescription.record)
        case .dropped(let reason, let count):
            self = .dropped(reason: reason, count: count)
        }
    }

    var description: String {
        switch self {
        case .sample(let data, let pts, _, let keyframe, _, _):
            "sample(\(data.count) bytes, pts \(pts), key \(keyframe))"
        case .dropped(let reason, let count): "dropped(\(count): \(reason))"
        }
    }
}

struct AccessUnitAssemblerTests {
    static let sei: [UInt8] = [0x06, 0x05, 0x02, 0xAB, 0xCD, 0x80]

    /// Access units of a synthetic H.264 stream: the NAL units each should hold.
    static let h264Units: [[[UInt8]]] = [
        [sei, h264Slice(idr: true, firstMb: 0), h264Slice(idr: true, firstMb: 5), h264Slice(idr: true, firstMb: 9)],
        [h264Slice(firstMb: 0, seed: 2)],
        [h264Slice(refIdc: 0, firstMb: 0, seed: 3), h264Slice(refIdc: 0, firstMb: 7, seed: 4)],
        [sei, h264Slice(firstMb: 0, seed: 5), [0x0C, 0xFF, 0x80], [0x0A]],
    ]

    static var h264Stream: [UInt8] {
        var nals: [[UInt8]] = [[0x09, 0x10], seedSPS, seedPPS] + h264Units[0]
        nals += [[0x09, 0xF0]] + h264Units[1]
        nals += h264Units[2]
        nals += h264Units[3]
        return annexB(nals, startCodeLength: 3)
    }

    static let hevcUnits: [[[UInt8]]] = [
        [hevcNAL(.prefixSEI), hevcSlice(type: .cra), hevcSlice(type: .cra, first: false)],
        [hevcSlice(type: .raslN)],
        [hevcSlice(type: .raslN, temporalIdPlus1: 2), hevcNAL(.suffixSEI)],
        // Base layer and a layer-1 picture (nuh_layer_id > 0) in one access unit.
        [hevcSlice(type: .trailR), hevcSlice(type: .trailR, layerId: 1), hevcNAL(.endOfSequence)],
        [hevcSlice(type: .idrNoLeadingPictures)],
    ]

    static var hevcStream: [UInt8] {
        var nals: [[UInt8]] = [hevcNAL(.accessUnitDelimiter), x265VPS, x265SPS, x265PPS] + hevcUnits[0]
        for units in hevcUnits.dropFirst() { nals += [hevcNAL(.accessUnitDelimiter)] + units }
        return annexB(nals)
    }

    @Test(arguments: [1, 2, 4])
    func h264AccessUnits(_ lengthSize: Int) throws {
        let outputs = assemble([Self.h264Stream[...]], codec: .h264, lengthSize: lengthSize)
        #expect(drops(outputs).isEmpty, "\(drops(outputs))")
        let got = samples(outputs)
        try #require(got.count == Self.h264Units.count)
        for (index, sample) in got.enumerated() {
            #expect(
                sample.data == lengthPrefixed(Self.h264Units[index], lengthSize: lengthSize), "access unit \(index)")
            // The seed SPS carries VUI timing for 25 frames a second.
            #expect(sample.pts == MediaTime(value: Int64(index), timescale: 25))
            #expect(sample.dts == sample.pts)
            #expect(sample.duration == MediaTime(value: 1, timescale: 25))
            #expect(sample.formatDescription.vuiFrameRate == MediaTime(value: 1, timescale: 25))
            #expect(sample.formatDescription.parameterSets == [seedSPS, seedPPS])
            #expect(sample.formatDescription.nalUnitHeaderLength == lengthSize)
        }
        #expect(got.map(\.isKeyframe) == [true, false, false, false])
        #expect(got.map(\.dependsOnOthers) == [true, true, false, true])
    }

    /// CONFORMANCE 12 and 13: CRA followed by RASL pictures; a layer-1 NAL unit
    /// with its first-slice flag set stays in the base layer's access unit.
    @Test func hevcAccessUnits() throws {
        let outputs = assemble(Self.hevcStream, codec: .hevc)
        #expect(drops(outputs).isEmpty, "\(drops(outputs))")
        let got = samples(outputs)
        try #require(got.count == Self.hevcUnits.count)
        for (index, sample) in got.enumerated() {
            #expect(sample.data == lengthPrefixed(Self.hevcUnits[index]), "access unit \(index)")
        }
        #expect(got.map(\.isKeyframe) == [true, false, false, false, true])
        #expect(got.map(\.dependsOnOthers) == [true, false, false, true, true])
        #expect(got[0].formatDescription.parameterSets == [x265VPS, x265SPS, x265PPS])
    }

    /// CONFORMANCE 6: splitting the stream at every byte boundary, or feeding
    /// it a byte at a time, gives the same access units as the whole buffer.
    @Test(arguments: [CodecType.h264, .hevc])
    func chunkingAtEveryByteBoundary(_ codec: CodecType) {
        let stream = codec == .h264 ? Self.h264Stream : Self.hevcStream
        let whole = assemble(stream, codec: codec).map(Emitted.init)
        #expect(whole.count >= 4)
        for split in 0...stream.count {
            let parts = [stream[..<split], stream[split...]]
            #expect(assemble(parts, codec: codec).map(Emitted.init) == whole, "split at \(split)")
        }
        let bytes = stream.indices.map { stream[$0...$0] }
        #expect(assemble(bytes, codec: codec).map(Emitted.init) == whole, "one byte at a time")
        var generator = SplitMix(seed: 7)
        for trial in 0..<200 {
            let cuts = (0..<3).map { _ in Int(generator.next() % UInt64(stream.count + 1)) }.sorted()
            let parts = [stream[..<cuts[0]], stream[cuts[0]..<cuts[1]], stream[cuts[1]..<cuts[2]], stream[cuts[2]...]]
            #expect(assemble(parts, codec: codec).map(Emitted.init) == whole, "trial \(trial) cuts \(cuts)")
        }
    }

    /// A receiver that joins mid-stream: slices before their parameter sets,
    /// then before a keyframe, are reported; samples start at the keyframe.
    @Test func lateJoinerStartsAtTheNextKeyframe() throws {
        let stream = annexB([
            h264Slice(firstMb: 0), h264Slice(firstMb: 3),
            seedSPS, seedPPS, h264Slice(firstMb: 0),
            h264Slice(idr: true), h264Slice(firstMb: 0),
        ])
        let outputs = assemble(stream, codec: .h264)
        let reported = drops(outputs)
        try #require(reported.count == 2)
        #expect(reported[0].count == 2)
        #expect(reported[0].reason.contains("PPS id 0"))
        #expect(reported[1].count == 1)
        #expect(reported[1].reason.contains("keyframe"))
        let got = samples(outputs)
        #expect(got.map(\.isKeyframe) == [true, false])
        #expect(got.map(\.pts) == [MediaTime(value: 0, timescale: 25), MediaTime(value: 1, timescale: 25)])
    }

    /// CONFORMANCE 9: several SPS and PPS ids, more PPS than SPS, tracked per
    /// id and updated from in-band NAL units.
    @Test func parameterSetsTrackedPerId() throws {
        let sps1 = seedSPS(id: 1)
        let pps1 = seedPPS(id: 1, spsId: 1)
        let pps2 = seedPPS(id: 2, spsId: 0)
        let updatedSPS0 = seedSPS(id: 0, level: 0x1E)
        let stream = annexB([
            seedSPS, sps1, seedPPS, pps1, pps2,
            h264Slice(idr: true, ppsId: 0),
            h264Slice(firstMb: 0, ppsId: 2),
            h264Slice(firstMb: 0, ppsId: 5),
            h264Slice(idr: true, ppsId: 1),
            updatedSPS0, h264Slice(idr: true, ppsId: 0),
            seedPPS, h264Slice(firstMb: 0, ppsId: 0),
        ])
        let outputs = assemble(stream, codec: .h264)
        let reported = drops(outputs)
        try #require(reported.count == 1)
        #expect(reported[0].reason.contains("PPS id 5"))
        let got = samples(outputs)
        try #require(got.count == 5)
        // The description lists the active SPS first.
        #expect(got[0].formatDescription.parameterSets == [seedSPS, sps1, seedPPS, pps1, pps2])
        #expect(got[1].formatDescription == got[0].formatDescription)
        #expect(got[2].formatDescription.parameterSets == [sps1, seedSPS, seedPPS, pps1, pps2])
        #expect(got[3].formatDescription.parameterSets == [updatedSPS0, sps1, seedPPS, pps1, pps2])
        #expect(got[3].formatDescription.level == 30)
        #expect(got[0].formatDescription.level == 10)
        // Repeating an identical PPS changes nothing.
        #expect(got[4].formatDescription == got[3].formatDescription)
        // Time runs on through the dropped access unit.
        #expect(got.map(\.pts.value) == [0, 1, 3, 4, 5])
    }

    struct OrderingCase: Sendable, CustomStringConvertible {
        var name: String
        var nalUnits: [[UInt8]]
        /// The NAL unit types of each access unit's sample.
        var expected: [[UInt8]]
        var description: String { name }
    }

    /// CONFORMANCE 7 in the assembler: AUD first or before the SPS, SEI
    /// between SPS and PPS, SPS extension, filler, end of sequence and stream;
    /// data partitions A, B, C of one picture stay together.
    static let orderings: [OrderingCase] = [
        OrderingCase(
            name: "AUD, SPS, SEI, PPS", nalUnits: [[0x09, 0x10], seedSPS, sei, seedPPS, h264Slice(idr: true)],
            expected: [[6, 5]]),
        OrderingCase(
            name: "SPS, PPS, then AUD", nalUnits: [seedSPS, seedPPS, [0x09, 0x10], h264Slice(idr: true)],
            expected: [[5]]),
        OrderingCase(
            name: "SPS extension, filler, end of sequence and stream",
            nalUnits: [
                seedSPS, [0x6D, 0xC8, 0x80], seedPPS, h264Slice(idr: true), [0x0C, 0xFF, 0x80], [0x0A],
                h264Slice(idr: true), [0x0B],
            ],
            expected: [[5, 12, 10], [5, 11]]),
        OrderingCase(
            name: "data partitions",
            nalUnits: [
                seedSPS, seedPPS, h264Slice(idr: true),
                [0x42, 0x88, 0x80, 0x55], [0x23, 0x80], [0x24, 0x80],
                [0x42, 0x30, 0x88, 0x55], [0x23, 0x80], [0x24, 0x80],
                [0x42, 0x88, 0x80, 0x55], [0x23, 0x80],
            ],
            expected: [[5], [2, 3, 4, 2, 3, 4], [2, 3]]),
    ]

    @Test(arguments: orderings)
    func nalUnitOrderings(_ c: OrderingCase) throws {
        let outputs = assemble(annexB(c.nalUnits), codec: .h264)
        #expect(drops(outputs).isEmpty, "\(drops(outputs))")
        let types = try samples(outputs).map { sample in
            try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4).map { $0.first! & 0x1F }
        }
        #expect(types == c.expected)
    }

    /// CONFORMANCE 9 limits: ids beyond 31 (SPS) and 255 (PPS) are malformed
    /// parameter sets, reported and not stored.
    @Test func parameterSetIdLimits() {
        let stream = annexB([
            seedSPS, seedPPS, seedSPS(id: 32), seedPPS(id: 256, spsId: 0), seedPPS(id: 255, spsId: 0),
            h264Slice(idr: true, ppsId: 255),
        ])
        let outputs = assemble(stream, codec: .h264)
        #expect(drops(outputs).map(\.count) == [1, 1])
        #expect(drops(outputs).allSatisfy { $0.reason.contains("malformed parameter set") })
        #expect(samples(outputs).count == 1)
        #expect(samples(outputs).first?.formatDescription.parameterSetCount == 3)
    }

    @Test func frameDurationFromTheCaller() {
        let duration = MediaTime(value: 1001, timescale: 30000)
        let got = samples(assemble(Self.h264Stream, codec: .h264, frameDuration: duration))
        #expect(got.map(\.pts) == (0..<4).map { duration * Int64($0) })
        #expect(got.allSatisfy { $0.duration == duration && $0.dts == $0.pts })
    }

    @Test func malformedParameterSetAndStrayNALUnitsAreReported() {
        let stream = annexB([seedSPS, seedPPS, [0x68, 0x00, 0x00, 0x03, 0x01, 0x80], h264Slice(idr: true), Self.sei])
        let outputs = assemble(stream, codec: .h264)
        let reported = drops(outputs)
        #expect(reported.count == 2)
        #expect(reported.first?.reason.contains("malformed parameter set") == true)
        #expect(reported.last?.reason.contains("without a picture") == true)
        #expect(samples(outputs).count == 1)
    }

    @Test func emptyAndJunkInputGiveNothing() {
        #expect(assemble([], codec: .h264).isEmpty)
        #expect(assemble([0xFF, 0x00, 0x00, 0x02, 0x00], codec: .hevc).isEmpty)
    }
}
