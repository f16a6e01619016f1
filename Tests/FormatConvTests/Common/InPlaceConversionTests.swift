import FormatConv
import Foundation
import TestSupport
import Testing

/// The zero-copy forms: length-prefixed ⇄ Annex-B in place, and the gather
/// list; against the copying converters and against FFmpeg's
/// `*_mp4toannexb` filters on the bytes of real MP4 samples.
struct InPlaceConversionTests {
    /// NAL units of every length from 1 to 300 bytes (so start codes land at
    /// every offset of the scanner's 128-byte blocks), none ending in `00`.
    static func units(count: Int, seed: UInt64) -> [[UInt8]] {
        var generator = SplitMix(seed: seed)
        return (0..<count).map { index in
            let length = 1 + (index * 37 + Int(generator.next() % 7)) % 300
            var unit = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next() | 0x04) }
            unit[0] = 0x41
            return unit
        }
    }

    @Test(arguments: [1, 2, 5, 40])
    func lengthPrefixedToAnnexBInPlace(_ count: Int) throws {
        let units = Self.units(count: count, seed: UInt64(count))
        var bytes = lengthPrefixed(units)
        let converted = try LengthPrefixed.convertToAnnexBInPlace(&bytes)
        #expect(converted == count)
        #expect(bytes == annexB(units))
        // The same bytes as the copying converter and the writer.
        #expect(bytes == (try AnnexBWriter.annexB(fromLengthPrefixed: lengthPrefixed(units), lengthSize: 4)))
        // And back: every start code is 4 bytes, so Annex-B → length-prefixed works in place too.
        #expect(AnnexB.convertToLengthPrefixedInPlace(&bytes) == count)
        #expect(bytes == lengthPrefixed(units))
    }

    struct BadCase: Sendable, CustomStringConvertible {
        var name: String
        var bytes: [UInt8]
        var description: String { name }
    }

    static let badLengthPrefixed: [BadCase] = [
        BadCase(name: "empty NAL unit", bytes: [0, 0, 0, 2, 0x41, 0x9A, 0, 0, 0, 0, 0, 0, 0, 1, 0x41]),
        BadCase(name: "length past the end", bytes: [0, 0, 0, 2, 0x41, 0x9A, 0, 0, 0, 9, 0x41]),
        BadCase(name: "dangling bytes", bytes: [0, 0, 0, 2, 0x41, 0x9A, 0, 0]),
    ]

    @Test(arguments: badLengthPrefixed)
    func malformedLengthPrefixedIsUnchanged(_ c: BadCase) {
        var bytes = c.bytes
        #expect(throws: MediaError.self) { try LengthPrefixed.convertToAnnexBInPlace(&bytes) }
        #expect(bytes == c.bytes)
    }

    static let notInPlaceAnnexB: [BadCase] = [
        BadCase(name: "3-byte start code", bytes: [0, 0, 0, 1, 0x67, 0x42, 0, 0, 1, 0x68, 0xCE]),
        BadCase(name: "only 3-byte start codes", bytes: [0, 0, 1, 0x41, 0x9A]),
        BadCase(name: "trailing zeros", bytes: [0, 0, 0, 1, 0x41, 0x9A, 0, 0]),
        BadCase(name: "trailing zero before a start code", bytes: [0, 0, 0, 1, 0x41, 0, 0, 0, 0, 1, 0x41]),
        BadCase(name: "empty NAL unit", bytes: [0, 0, 0, 1, 0, 0, 0, 1, 0x41, 0x9A]),
        BadCase(name: "leading junk", bytes: [0xFF, 0, 0, 0, 1, 0x41, 0x9A]),
        BadCase(name: "no start code", bytes: [0x41, 0x9A, 0x00]),
        BadCase(name: "nothing", bytes: []),
    ]

    @Test(arguments: notInPlaceAnnexB)
    func annexBOfAnotherShapeIsUnchanged(_ c: BadCase) {
        var bytes = c.bytes
        #expect(AnnexB.convertToLengthPrefixedInPlace(&bytes) == nil)
        #expect(bytes == c.bytes)
    }

    /// Annex-B → length-prefixed in place keeps every NAL unit (AUD and
    /// parameter sets too); without them it matches the copying converter.
    @Test func annexBToLengthPrefixedInPlaceMatchesTheCopyingForm() throws {
        let slices = [h264Slice(idr: true, firstMb: 0, payload: 200), h264Slice(idr: true, firstMb: 40, payload: 3)]
        var bytes = annexB(slices)
        let copied = try bytes.withUnsafeBytes { input in
            var output: [UInt8] = []
            _ = try AnnexB.lengthPrefixed(from: input, codec: .h264, into: &output)
            return output
        }
        #expect(AnnexB.convertToLengthPrefixedInPlace(&bytes) == 2)
        #expect(bytes == copied)
        var withSets = annexB([[0x09, 0x10], seedSPS, seedPPS] + slices)
        #expect(AnnexB.convertToLengthPrefixedInPlace(&withSets) == 5)
        #expect(withSets == lengthPrefixed([[0x09, 0x10], seedSPS, seedPPS] + slices))
    }

    /// The gather list joined is what `write(_:)` returns, for every policy
    /// case of the writer's tests and every length size; with 4-byte lengths
    /// it is at most three ranges.
    @Test(arguments: AnnexBWriterTests.policyCases, [1, 2, 4])
    func gatherMatchesWrite(_ c: AnnexBWriterTests.PolicyCase, _ lengthSize: Int) throws {
        let description = try AnnexBWriterTests.h264Description(lengthSize: lengthSize)
        var writer = AnnexBWriter(policy: c.policy, insertAccessUnitDelimiters: c.delimiters)
        var gatherer = AnnexBWriter(policy: c.policy, insertAccessUnitDelimiters: c.delimiters)
        for (index, (types, keyframe)) in c.samples.enumerated() {
            let units = types.enumerated().map { AnnexBWriterTests.unit($0.element, index: $0.offset) }
            let sample = AnnexBWriterTests.sample(units, keyframe: keyframe, description: description)
            let written = try writer.write(sample)
            let list = try gatherer.gather(sample)
            #expect(list.joined() == written, "sample \(index), length size \(lengthSize)")
            #expect(list.byteCount == written.count)
            let sizes = list.withBuffers { $0.map(\.count) }
            #expect(sizes.count == list.bufferCount && !sizes.contains(0))
            if lengthSize == 4 { #expect(list.bufferCount <= 3) }
            // The caller's sample is untouched (its bytes were shared, so copied first).
            #expect(sample.data == lengthPrefixed(units, lengthSize: lengthSize))
        }
    }

    /// Empty NAL units between others: the gather list leaves the sample's
    /// bytes as they are and drops the empty ones, like `write(_:)`.
    @Test func gatherWithEmptyNALUnits() throws {
        let description = try AnnexBWriterTests.h264Description()
        let slice = h264Slice(firstMb: 0, payload: 9)
        let data = lengthPrefixed([slice]) + [0, 0, 0, 0] + lengthPrefixed([slice])
        let sample = CompressedSample(
            data: data, formatDescription: description, pts: .zero, dts: .zero,
            duration: MediaTime(value: 1, timescale: 30), isKeyframe: false)
        var writer = AnnexBWriter(policy: .never)
        let list = try writer.gather(sample)
        #expect(list.sampleBytes == data)
        #expect(list.joined() == annexB([slice, slice]))
        #expect(list.bufferCount == 4)
    }

    // MARK: - Against FFmpeg

    /// The samples of an MP4 (their bytes as stored, split by ffprobe's packet
    /// sizes), its configuration record, and FFmpeg's Annex-B output of
    /// `ffmpeg -i x.mp4 -c copy -bsf:v *_mp4toannexb -f h264|hevc -`.
    struct MP4Reference {
        var samples: [(data: [UInt8], keyframe: Bool)]
        var record: [UInt8]
        var ffmpegAnnexB: [UInt8]
    }

    static func mp4Reference(codec: CodecType, encoderArgs: [String], strip: [String] = []) throws -> MP4Reference {
        let directory = try TemporaryDirectory(prefix: "inplace")
        let encoded = directory.path("encoded.mp4")
        let mp4 = directory.path("clip.mp4")
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 25, arguments: encoderArgs, to: encoded)
        _ = try runChecked(
            "ffmpeg", ["-loglevel", "error", "-nostdin", "-i", encoded, "-c", "copy"] + strip + ["-y", mp4])
        let raw = directory.path("samples.raw")
        _ = try runChecked(
            "ffmpeg", ["-loglevel", "error", "-nostdin", "-i", mp4, "-c", "copy", "-f", "rawvideo", raw])
        let packets = try runChecked(
            "ffprobe",
            ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=size,flags", "-of", "csv=p=0", mp4])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        var samples: [(data: [UInt8], keyframe: Bool)] = []
        var offset = 0
        for line in String(decoding: packets, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: ",")
            let size = try #require(Int(fields[0]))
            samples.append((Array(bytes[offset..<(offset + size)]), fields[1].hasPrefix("K")))
            offset += size
        }
        #expect(offset == bytes.count)
        let filter = codec == .h264 ? "h264_mp4toannexb" : "hevc_mp4toannexb"
        let ffmpeg = try runChecked(
            "ffmpeg",
            [
                "-loglevel", "error", "-nostdin", "-i", mp4, "-c", "copy", "-bsf:v", filter, "-f",
                codec == .h264 ? "h264" : "hevc", "-",
            ])
        let record = try #require(try isoBoxPayload(codec == .h264 ? "avcC" : "hvcC", inFile: mp4))
        return MP4Reference(samples: samples, record: record, ffmpegAnnexB: [UInt8](ffmpeg))
    }

    /// HEVC: the gather list of every sample, joined, is byte for byte what
    /// `hevc_mp4toannexb` writes (4-byte start codes everywhere, the hvcC
    /// arrays before each IRAP), and the in-place form is its sample part.
    @Test(.enabled(if: FFmpegReference.isAvailable))
    func hevcMatchesFFmpegsFilterExactly() throws {
        let reference = try Self.mp4Reference(
            codec: .hevc, encoderArgs: ["-c:v", "libx265", "-x265-params", "log-level=error:info=0:keyint=10"])
        let description = try FormatDescription(hvcC: reference.record)
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var gathered: [UInt8] = []
        var keyframes = 0
        for (data, keyframe) in reference.samples {
            let sample = CompressedSample(
                data: data, formatDescription: description, pts: .zero, dts: .zero,
                duration: MediaTime(value: 1, timescale: 25), isKeyframe: keyframe)
            let list = try writer.gather(sample)
            #expect(list.bufferCount <= 3)
            gathered += list.joined()
            var inPlace = data
            try LengthPrefixed.convertToAnnexBInPlace(&inPlace)
            #expect(list.sampleBytes == inPlace)
            if keyframe { keyframes += 1 }
        }
        #expect(keyframes == 3)
        #expect(gathered == reference.ffmpegAnnexB)
    }

    /// H.264 (SEI removed so that the IDR slice is first, as our writer puts
    /// the sets first and FFmpeg just before the IDR slice): the same NAL
    /// units, bytes and order as `h264_mp4toannexb`. FFmpeg writes a 3-byte
    /// start code for a NAL unit that is neither first in its packet nor a
    /// parameter set — here only the IDR slice after the inserted SPS and
    /// PPS — where ours writes 4 (both conform, H.264 B.1.2); with that one
    /// start code widened the streams are identical.
    @Test(.enabled(if: FFmpegReference.isAvailable))
    func h264MatchesFFmpegsFilter() throws {
        let reference = try Self.mp4Reference(
            codec: .h264, encoderArgs: ["-c:v", "libx264", "-g", "10", "-bf", "2"],
            strip: ["-bsf:v", "filter_units=remove_types=6"])
        let description = try FormatDescription(avcC: reference.record)
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var gathered: [UInt8] = []
        for (data, keyframe) in reference.samples {
            let sample = CompressedSample(
                data: data, formatDescription: description, pts: .zero, dts: .zero,
                duration: MediaTime(value: 1, timescale: 25), isKeyframe: keyframe)
            let list = try writer.gather(sample)
            #expect(list.bufferCount <= 3)
            gathered += list.joined()
        }
        let ffmpeg = reference.ffmpegAnnexB
        let locations = AnnexB.nalUnitLocations(in: ffmpeg)
        var widened: [UInt8] = []
        var previousType: UInt8 = 0
        for location in locations {
            let type = ffmpeg[location.range.lowerBound] & 0x1F
            let expectedLength = type == 5 && previousType == 8 ? 3 : 4
            #expect(location.startCodeLength == expectedLength, "FFmpeg's start code before type \(type)")
            widened += [0, 0, 0, 1] + ffmpeg[location.range]
            previousType = type
        }
        #expect(widened.count == ffmpeg.count + locations.filter { $0.startCodeLength == 3 }.count)
        #expect(gathered == widened)
    }
}
