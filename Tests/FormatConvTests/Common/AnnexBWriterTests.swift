import FormatConv
import Testing

struct AnnexBWriterTests {
    static func h264Description(lengthSize: Int = 4) throws -> FormatDescription {
        try FormatDescription(h264ParameterSets: [seedSPS, seedPPS], nalUnitHeaderLength: lengthSize)
    }

    static func sample(
        _ units: [[UInt8]], keyframe: Bool, description: FormatDescription
    ) -> CompressedSample {
        CompressedSample(
            data: lengthPrefixed(units, lengthSize: description.nalUnitHeaderLength), formatDescription: description,
            pts: .zero, dts: .zero, duration: MediaTime(value: 1, timescale: 30), isKeyframe: keyframe)
    }

    /// The NAL unit types of an Annex-B buffer.
    static func types(_ stream: [UInt8]) -> [UInt8] {
        scanned(stream).map { $0[0] & 0x1F }
    }

    struct PolicyCase: Sendable, CustomStringConvertible {
        var name: String
        var policy: ParameterSetPolicy
        var delimiters: Bool = false
        /// Each sample: its NAL units by type, and whether it is flagged a keyframe.
        var samples: [([UInt8], Bool)]
        var expected: [[UInt8]]
        var description: String { name }
    }

    static func unit(_ type: UInt8, index: Int) -> [UInt8] {
        switch type {
        case 7: return seedSPS
        case 8: return seedPPS
        case 5: return h264Slice(idr: true, firstMb: index)
        case 1: return h264Slice(firstMb: index)
        case 9: return [0x09, 0x10]
        default: return [type, 0x80]
        }
    }

    /// CONFORMANCE 8.
    static let policyCases: [PolicyCase] = [
        PolicyCase(
            name: "keyframe without sets gets them", policy: .beforeEveryKeyframe, samples: [([5], true)],
            expected: [[7, 8, 5]]),
        PolicyCase(
            name: "keyframe carrying SPS and PPS gets no duplicates", policy: .beforeEveryKeyframe,
            samples: [([7, 8, 5], true)], expected: [[7, 8, 5]]),
        PolicyCase(
            name: "keyframe carrying only a PPS gets the SPS", policy: .beforeEveryKeyframe,
            samples: [([8, 5], true)], expected: [[7, 8, 5]]),
        PolicyCase(
            name: "multi-slice IDR gets them once", policy: .beforeEveryKeyframe, samples: [([5, 5, 5, 5], true)],
            expected: [[7, 8, 5, 5, 5, 5]]),
        PolicyCase(
            name: "back-to-back IDR access units each get them", policy: .beforeEveryKeyframe,
            samples: [([5], true), ([5], true), ([1], false), ([5], true)],
            expected: [[7, 8, 5], [7, 8, 5], [1], [7, 8, 5]]),
        PolicyCase(
            name: "an IDR NAL unit makes a keyframe even if not flagged", policy: .beforeEveryKeyframe,
            samples: [([6, 5], false)], expected: [[7, 8, 6, 5]]),
        PolicyCase(
            name: "never", policy: .never, samples: [([5], true), ([1], false), ([5], true)],
            expected: [[5], [1], [5]]),
        PolicyCase(
            name: "first", policy: .first, samples: [([5], true), ([1], false), ([5], true)],
            expected: [[7, 8, 5], [1], [5]]),
        PolicyCase(
            name: "AUD inserted first, sets after it", policy: .beforeEveryKeyframe, delimiters: true,
            samples: [([5], true), ([1], false)], expected: [[9, 7, 8, 5], [9, 1]]),
        PolicyCase(
            name: "in-band AUD not duplicated, sets after it", policy: .beforeEveryKeyframe, delimiters: true,
            samples: [([9, 5], true), ([9, 1], false)], expected: [[9, 7, 8, 5], [9, 1]]),
        PolicyCase(
            name: "in-band AUD kept without insertion", policy: .beforeEveryKeyframe,
            samples: [([9, 5, 5], true)], expected: [[9, 7, 8, 5, 5]]),
    ]

    @Test(arguments: policyCases, [1, 2, 4])
    func parameterSetPolicy(_ c: PolicyCase, _ lengthSize: Int) throws {
        let description = try Self.h264Description(lengthSize: lengthSize)
        var writer = AnnexBWriter(policy: c.policy, insertAccessUnitDelimiters: c.delimiters)
        for (index, (types, keyframe)) in c.samples.enumerated() {
            let units = types.enumerated().map { Self.unit($0.element, index: $0.offset) }
            let output = try writer.write(Self.sample(units, keyframe: keyframe, description: description))
            #expect(Self.types(output) == c.expected[index], "sample \(index), length size \(lengthSize)")
            // The sample's own NAL units come out unchanged and in order.
            let written = scanned(output).filter { unit in ![7, 8, 9].contains(unit[0] & 0x1F) }
            #expect(written == units.filter { ![7, 8, 9].contains($0[0] & 0x1F) }, "sample \(index)")
            // Every NAL unit gets a 4-byte start code.
            #expect(AnnexB.nalUnitLocations(in: output).allSatisfy { $0.startCodeLength == 4 })
            #expect(output.count == scanned(output).reduce(0) { $0 + 4 + $1.count })
        }
    }

    @Test func hevcSetsBeforeIRAP() throws {
        let description = try FormatDescription(hevcParameterSets: [x265VPS, x265SPS, x265PPS])
        var writer = AnnexBWriter(insertAccessUnitDelimiters: true)
        let cra = hevcSlice(type: .cra)
        let trail = hevcSlice(type: .trailR)
        let key = try writer.write(Self.sample([cra], keyframe: true, description: description))
        #expect(scanned(key) == [[0x46, 0x01, 0x10], x265VPS, x265SPS, x265PPS, cra])
        let next = try writer.write(Self.sample([trail], keyframe: false, description: description))
        #expect(scanned(next) == [[0x46, 0x01, 0x50], trail])
        // Carrying its own VPS and SPS, an IRAP gets only the PPS.
        let carrying = try writer.write(Self.sample([x265VPS, x265SPS, cra], keyframe: true, description: description))
        #expect(scanned(carrying) == [[0x46, 0x01, 0x10], x265PPS, x265VPS, x265SPS, cra])
    }

    /// A new description is written even under `.first`.
    @Test func changedDescriptionIsWrittenAgain() throws {
        let first = try Self.h264Description()
        let second = try FormatDescription(h264ParameterSets: [seedSPS(id: 0, level: 0x1E), seedPPS])
        var writer = AnnexBWriter(policy: .first)
        let slice = h264Slice(idr: true)
        #expect(Self.types(try writer.write(Self.sample([slice], keyframe: true, description: first))) == [7, 8, 5])
        #expect(Self.types(try writer.write(Self.sample([slice], keyframe: true, description: first))) == [5])
        let changed = try writer.write(Self.sample([slice], keyframe: true, description: second))
        #expect(scanned(changed) == [seedSPS(id: 0, level: 0x1E), seedPPS, slice])
    }

    /// The in-place path (4-byte lengths, nothing inserted) and the copying
    /// path produce the same bytes, and the caller's sample is untouched.
    @Test func inPlaceMatchesCopy() throws {
        let description = try Self.h264Description()
        let units = [h264Slice(firstMb: 0, payload: 30), h264Slice(firstMb: 9, payload: 2)]
        var writer = AnnexBWriter(policy: .never)
        let sample = Self.sample(units, keyframe: false, description: description)
        let copied = try writer.write(sample)
        #expect(sample.data == lengthPrefixed(units))
        let inPlace = try writer.write(Self.sample(units, keyframe: false, description: description))
        #expect(copied == annexB(units))
        #expect(inPlace == copied)
    }

    @Test func malformedSampleIsAnError() throws {
        let description = try Self.h264Description()
        var writer = AnnexBWriter()
        var sample = Self.sample([h264Slice()], keyframe: false, description: description)
        sample.data += [0, 0, 0, 9, 0x41]
        let error = #expect(throws: MediaError.self) { _ = try writer.write(sample) }
        #expect(error?.code == .invalidData)
    }

    /// CONFORMANCE 17: length-prefixed → Annex-B → length-prefixed is the
    /// identity apart from inserted parameter sets and AUDs, for every size.
    @Test(arguments: [1, 2, 4], [ParameterSetPolicy.never, .first, .beforeEveryKeyframe])
    func roundTripIdentity(_ lengthSize: Int, _ policy: ParameterSetPolicy) throws {
        let description = try Self.h264Description(lengthSize: lengthSize)
        var writer = AnnexBWriter(policy: policy, insertAccessUnitDelimiters: true)
        let samples = [
            [[0x06, 0x05, 0x01, 0x80], h264Slice(idr: true, firstMb: 0), h264Slice(idr: true, firstMb: 4)],
            [h264Slice(refIdc: 0, firstMb: 0, payload: 9)],
            [h264Slice(firstMb: 0), [0x0C, 0xFF, 0x80]],
        ]
        for (index, units) in samples.enumerated() {
            let data = lengthPrefixed(units, lengthSize: lengthSize)
            let stream = try writer.write(Self.sample(units, keyframe: index == 0, description: description))
            let back = try AnnexB.lengthPrefixed(from: stream, codec: .h264, lengthSize: lengthSize)
            #expect(back.data == data, "sample \(index), size \(lengthSize), \(policy)")
            let expectedSets = (policy == .never || index > 0) ? [] : [seedSPS, seedPPS]
            #expect(back.parameterSets == expectedSets, "sample \(index)")
        }
    }
}
