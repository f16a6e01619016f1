import FormatConv
import Testing

/// The conversions that write into a caller's buffer give exactly the bytes of
/// the allocating forms, whatever the buffer held before (larger, smaller,
/// empty), and `endAccessUnit()` hands out the same units as `finish()`.
struct ReusedBufferConversionTests {
    static let description: FormatDescription = try! FormatDescription(
        h264ParameterSets: [seedSPS, seedPPS], nalUnitHeaderLength: 4)

    /// Access units of varied sizes: keyframes with and without in-band sets,
    /// an AUD, a multi-slice picture, tiny and large units.
    static let units: [([[UInt8]], Bool)] = [
        ([h264Slice(idr: true, payload: 400)], true),
        ([h264Slice(payload: 3)], false),
        ([[0x09, 0x10], h264Slice(payload: 900)], false),
        ([seedSPS, seedPPS, h264Slice(idr: true, payload: 20)], true),
        ([h264Slice(firstMb: 0, payload: 50), h264Slice(firstMb: 40, payload: 60)], false),
        ([seedPPS, h264Slice(idr: true, payload: 1)], true),
        ([h264Slice(refIdc: 0, payload: 2000)], false),
        ([h264Slice(payload: 1)], false),
        // More NAL units than the converter keeps ranges for on the stack.
        ((0..<100).map { h264Slice(firstMb: $0, payload: 3 + $0 % 7) }, false),
        ((0..<64).map { h264Slice(firstMb: $0, payload: 5) }, false),
        ((0..<65).map { h264Slice(firstMb: $0, payload: 5) }, false),
    ]

    static func sample(_ units: [[UInt8]], keyframe: Bool) -> CompressedSample {
        CompressedSample(
            data: lengthPrefixed(units), formatDescription: description, pts: .zero, dts: .zero,
            duration: MediaTime(value: 1, timescale: 30), isKeyframe: keyframe)
    }

    @Test(arguments: [ParameterSetPolicy.never, .first, .beforeEveryKeyframe], [false, true])
    func writerIntoBufferEqualsAllocatingWriter(policy: ParameterSetPolicy, delimiters: Bool) throws {
        var allocating = AnnexBWriter(policy: policy, insertAccessUnitDelimiters: delimiters)
        var reusing = AnnexBWriter(policy: policy, insertAccessUnitDelimiters: delimiters)
        // Start from a buffer holding junk, larger than some units and smaller than others.
        var buffer = [UInt8](repeating: 0xEE, count: 700)
        for (index, (units, keyframe)) in Self.units.enumerated() {
            let expected = try allocating.write(Self.sample(units, keyframe: keyframe))
            try reusing.write(Self.sample(units, keyframe: keyframe), into: &buffer)
            #expect(buffer == expected, "unit \(index), policy \(policy), delimiters \(delimiters)")
        }
    }

    @Test func writerIntoBufferLeavesItUnchangedOnError() throws {
        var writer = AnnexBWriter()
        var buffer: [UInt8] = [1, 2, 3]
        var broken = Self.sample([h264Slice(payload: 10)], keyframe: false)
        broken.data.append(0x00)  // a dangling byte after the last NAL unit
        #expect(throws: MediaError.self) { try writer.write(broken, into: &buffer) }
        #expect(buffer == [1, 2, 3])
    }

    @Test(arguments: [1, 2, 4], [3, 4])
    func lengthPrefixedIntoBufferEqualsAllocatingForm(lengthSize: Int, startCodeLength: Int) throws {
        var buffer = [UInt8](repeating: 0xEE, count: 500)
        for (index, (units, _)) in Self.units.enumerated() {
            let stream = annexB(units, startCodeLength: startCodeLength)
            let context = "unit \(index), length size \(lengthSize), start code \(startCodeLength)"
            let expected: AnnexB.LengthPrefixedAccessUnit
            do {
                expected = try AnnexB.lengthPrefixed(from: stream, codec: .h264, lengthSize: lengthSize)
            } catch {
                // A NAL unit too long for the length size: both forms refuse it.
                let before = buffer
                #expect(throws: MediaError.self, "\(context)") {
                    try stream.withUnsafeBytes {
                        try AnnexB.lengthPrefixed(from: $0, codec: .h264, lengthSize: lengthSize, into: &buffer)
                    }
                }
                #expect(buffer == before, "\(context)")
                continue
            }
            let summary = try stream.withUnsafeBytes {
                try AnnexB.lengthPrefixed(from: $0, codec: .h264, lengthSize: lengthSize, into: &buffer)
            }
            #expect(buffer == expected.data, "\(context)")
            #expect(summary.parameterSets == expected.parameterSets, "\(context)")
            #expect(summary.nalUnitCount == expected.nalUnitCount, "\(context)")
            #expect(summary.removedDelimiterCount == expected.removedDelimiterCount, "\(context)")
        }
    }

    @Test func lengthPrefixedIntoBufferRejectsShortHEVCUnitsAndKeepsTheBuffer() throws {
        var buffer: [UInt8] = [9, 9]
        let stream: [UInt8] = [0, 0, 0, 1, 0x40]  // a 1-byte HEVC NAL unit
        #expect(throws: MediaError.self) {
            try stream.withUnsafeBytes { try AnnexB.lengthPrefixed(from: $0, codec: .hevc, into: &buffer) }
        }
        #expect(buffer == [9, 9])
    }

    @Test func endAccessUnitHandsOutEachUnitAtOnce() throws {
        // The first unit carries the parameter sets, so that no unit is dropped.
        var stream = Self.units.map { annexB($0.0) }
        stream[0] = annexB([seedSPS, seedPPS]) + stream[0]
        var batch = AccessUnitAssembler(codec: .h264, frameDuration: MediaTime(value: 1, timescale: 30))
        var batchSamples: [CompressedSample] = []
        for output in batch.append(Array(stream.joined())) + batch.finish() {
            if case .sample(let sample) = output { batchSamples.append(sample) }
        }
        var live = AccessUnitAssembler(codec: .h264, frameDuration: MediaTime(value: 1, timescale: 30))
        var liveSamples: [CompressedSample] = []
        for unit in stream {
            var produced = 0
            for output in live.append(unit) + live.endAccessUnit() {
                produced += 1
                if case .sample(let sample) = output { liveSamples.append(sample) }
            }
            // The multi-slice unit is one access unit; every unit comes out when it ends.
            #expect(produced == 1)
        }
        #expect(liveSamples.count == Self.units.count)
        #expect(liveSamples.count == batchSamples.count)
        for (live, batch) in zip(liveSamples, batchSamples) {
            #expect(live.data == batch.data)
            #expect(live.pts == batch.pts)
            #expect(live.isKeyframe == batch.isKeyframe)
        }
    }
}
