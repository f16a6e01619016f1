import DecodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// The typed drop reasons of issue 15: a seek's pre-roll and the leading
/// pictures it skips, incomplete access units and late pictures. Every
/// expected picture is FFmpeg's (`framemd5`), every expected count comes from
/// `ffprobe` packets or FFmpeg's `trace_headers`, never from our parsers.
struct DropReasonTests {
    /// One packet of a file as FFmpeg's `trace_headers` prints it, in decode
    /// order: its pts in track ticks, whether it is a keyframe, and its first
    /// picture NAL unit's type and (H.264) `nal_ref_idc`.
    struct TracedPacket {
        var pts: Int
        var isKeyframe: Bool
        var pictureType: Int = -1
        var referenceIDC: Int = -1
    }

    static func trace(_ path: String, codec: CodecType) throws -> [TracedPacket] {
        let text = try runProcess(
            "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
        ).stderr
        var packets: [TracedPacket] = []
        for line in text.split(separator: "\n") {
            if let match = line.firstMatch(of: /Packet: \d+ bytes, (key frame, )?pts (-?\d+)/) {
                packets.append(TracedPacket(pts: Int(match.2)!, isKeyframe: match.1 != nil))
            } else if !packets.isEmpty, packets[packets.count - 1].pictureType < 0 || codec == .h264,
                let match = line.firstMatch(of: /\s(nal_unit_type|nal_ref_idc)\s+\S+\s+=\s+(\d+)/)
            {
                let value = Int(match.2)!
                var packet = packets[packets.count - 1]
                if match.1 == "nal_ref_idc" {
                    if packet.pictureType < 0 { packet.referenceIDC = value }
                } else if packet.pictureType < 0 {
                    let isPicture = codec == .h264 ? (1...5).contains(value) : value < 32
                    if isPicture { packet.pictureType = value } else if codec == .h264 { packet.referenceIDC = -1 }
                }
                packets[packets.count - 1] = packet
            }
        }
        return packets
    }

    /// The track's time base as ffprobe reports it (`1/12800` → 12800).
    static func timescale(_ path: String) throws -> Int {
        let text = String(
            decoding: try runChecked(
                "ffprobe",
                ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=time_base", "-of", "csv=p=0", path]),
            as: UTF8.self)
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "/")
        return Int(parts[1])!
    }

    static func ffmpegMD5s(_ path: String, from start: String? = nil, arguments: [String] = []) throws -> [String] {
        try ffmpegFrameMD5(
            path: path, extraInputArgs: (start.map { ["-ss", $0] } ?? []) + arguments, everyFrame: true,
            pixelFormat: "yuv420p")
    }

    static func makeClip(_ codec: CodecType, in directory: TemporaryDirectory, frames: Int = 60) throws -> String {
        let path = directory.path("open-gop-\(codec.rawValue).mp4")
        // Open groups of pictures: H.264 non-IDR I-frames with recovery
        // points and leading B-frames; HEVC CRAs with RASL pictures.
        let encoder =
            codec == .h264
            ? ["-c:v", "libx264", "-bf", "3", "-g", "24", "-sc_threshold", "0", "-x264-params", "open-gop=1"]
            : ["-c:v", "libx265", "-x265-params", "log-level=error:keyint=24:bframes=3:open-gop=1", "-tag:v", "hvc1"]
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: frames, arguments: encoder, to: path)
        return path
    }

    /// Seeks the file to `seconds` and decodes to the end after
    /// `flush(seekingTo:)`.
    static func seekAndDecode(_ path: String, to seconds: Double) throws -> (
        frames: [DecodedFrame], session: DecompressionSession
    ) {
        let reader = try MovieReader(path: path)
        let session = try DecompressionSession(formatDescription: reader.formatDescription!, decoder: .software)
        let target = MediaTime(seconds: seconds, timescale: 90_000)
        try reader.seek(to: target)
        session.flush(seekingTo: target)
        var frames: [DecodedFrame] = []
        while let sample = try reader.nextSample() { frames += try session.decode(sample) }
        frames += try session.finish()
        let statistics = session.statistics
        #expect(statistics.submitted == statistics.decoded + statistics.dropped + statistics.pending)
        #expect(statistics.pending == 0)
        return (frames, session)
    }

    /// Seeking to an open-GOP keyframe: its leading pictures (HEVC RASL after
    /// the CRA; H.264 pictures presented before the recovery-point I-frame)
    /// are listed as skipped leading pictures, never output, and the
    /// pictures from the keyframe on are `ffmpeg -ss`'s.
    @Test(arguments: [CodecType.h264, .hevc])
    func seekingToAnOpenKeyframeSkipsItsLeadingPictures(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let path = try Self.makeClip(codec, in: directory)
        let packets = try Self.trace(path, codec: codec)
        let scale = try Self.timescale(path)
        let keyIndexes = packets.indices.filter { packets[$0].isKeyframe }
        let key = try #require(keyIndexes.dropFirst().first, "a second keyframe")
        let nextKey = keyIndexes.dropFirst(2).first ?? packets.count
        if codec == .hevc { #expect(packets[key].pictureType == 21, "the second keyframe is a CRA") }
        let leading = packets[(key + 1)..<nextKey].filter { packet in
            codec == .hevc ? packet.pictureType == 8 || packet.pictureType == 9 : packet.pts < packets[key].pts
        }.count
        #expect(leading > 0, "the encoder wrote leading pictures after the keyframe")
        let seconds = Double(packets[key].pts) / Double(scale)
        let result = try Self.seekAndDecode(path, to: seconds)
        let skipped = result.session.drops.filter { $0.kind == .skippedLeadingPicture }
        #expect(skipped.count == leading, "\(result.session.drops)")
        #expect(result.session.drops.allSatisfy { $0.kind == .skippedLeadingPicture }, "\(result.session.drops)")
        #expect(abs((result.frames.first?.pts.seconds ?? -1) - seconds) < 1e-6)
        let reference = try Self.ffmpegMD5s(path, from: String(seconds))
        #expect(!reference.isEmpty)
        #expect(result.frames.map { md5Hex($0.pixelBuffer) } == reference)
    }

    /// Seeking between keyframes: the pictures from the keyframe up to the
    /// target are pre-roll (decoded when needed, never returned), the first
    /// picture returned is the target's, and all are `ffmpeg -ss`'s.
    @Test(arguments: [CodecType.h264, .hevc])
    func aSeekBetweenKeyframesReturnsFromTheTarget(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let path = try Self.makeClip(codec, in: directory)
        let packets = try Self.trace(path, codec: codec)
        let scale = try Self.timescale(path)
        let seconds = 1.2
        let keyPTS = try #require(packets.filter { $0.isKeyframe && Double($0.pts) / Double(scale) <= seconds }.last)
            .pts
        let preRoll = packets.filter { $0.pts >= keyPTS && Double($0.pts) / Double(scale) < seconds - 1e-9 }.count
        #expect(preRoll > 0)
        let result = try Self.seekAndDecode(path, to: seconds)
        let drops = result.session.drops
        #expect(drops.filter { $0.kind == .preRoll }.count == preRoll, "\(drops)")
        #expect(drops.allSatisfy { $0.kind == .preRoll || $0.kind == .skippedLeadingPicture }, "\(drops)")
        #expect(abs((result.frames.first?.pts.seconds ?? -1) - seconds) < 1e-6)
        #expect(result.frames.map { md5Hex($0.pixelBuffer) } == (try Self.ffmpegMD5s(path, from: "1.2")))
    }

    /// Pictures presented before `earliestPresentationTime` are late: the
    /// non-reference ones (FFmpeg's `nal_ref_idc` 0) are not decoded, the
    /// rest are decoded and not returned; every picture returned is FFmpeg's.
    @Test func latePicturesAreSkippedOrHeldBack() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("late.mp4")
        try ffmpegTestPattern(
            size: "320x240", rate: 25, frames: 48,
            arguments: ["-c:v", "libx264", "-bf", "2", "-g", "24", "-x264-params", "b-pyramid=none"], to: path)
        let packets = try Self.trace(path, codec: .h264)
        let scale = try Self.timescale(path)
        let deadline = 0.8
        let late = packets.filter { Double($0.pts) / Double(scale) < deadline - 1e-9 }
        let notReferenced = late.filter { $0.referenceIDC == 0 }.count
        #expect(late.count == 20 && notReferenced > 0)

        let reader = try MovieReader(path: path)
        let session = try DecompressionSession(formatDescription: reader.formatDescription!, decoder: .software)
        session.earliestPresentationTime = MediaTime(seconds: deadline, timescale: 90_000)
        let frames = try decodeAll(session, try reader.readAllSamples())
        let lateDrops = session.drops.filter { $0.kind == .late }
        #expect(lateDrops.count == late.count && session.drops.count == late.count, "\(session.drops)")
        #expect(lateDrops.filter { $0.reason.contains("not decoded") }.count == notReferenced)
        let reference = try Self.ffmpegMD5s(path)
        #expect(frames.map { md5Hex($0.pixelBuffer) } == Array(reference.dropFirst(late.count)))
    }

    /// Removes the NAL unit at `index` from a length-prefixed sample (4-byte lengths).
    static func removingNALUnit(_ index: Int, from sample: CompressedSample) throws -> CompressedSample {
        let units = try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4)
        var copy = sample
        copy.data = try LengthPrefixed.write(
            units.enumerated().filter { $0.offset != index }.map(\.element), lengthSize: 4)
        return copy
    }

    /// The index of a sample's first slice NAL unit.
    static func firstSliceIndex(_ sample: CompressedSample, codec: CodecType) throws -> Int {
        let units = try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4)
        return try #require(
            units.firstIndex { unit in
                codec == .h264 ? (1...5).contains(unit.first! & 0x1F) : (unit.first! >> 1) & 0x3F < 32
            })
    }

    /// An access unit whose first slice is missing, or whose last NAL unit
    /// is cut short, is dropped as incomplete; the pictures that refer to
    /// it wait for the next keyframe; every picture returned is FFmpeg's
    /// picture of the intact stream.
    @Test(arguments: [CodecType.h264, .hevc])
    func incompleteAccessUnitsAreDroppedAndNothingRefersToThem(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("slices-\(codec.rawValue).mp4")
        let encoder =
            codec == .h264
            ? ["-c:v", "libx264", "-bf", "0", "-g", "15", "-x264-params", "slices=4"]
            : ["-c:v", "libx265", "-x265-params", "log-level=error:keyint=15:bframes=0:slices=4", "-tag:v", "hvc1"]
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 30, arguments: encoder, to: path)
        let reference = try Self.ffmpegMD5s(path)
        #expect(reference.count == 30)
        var samples = try MovieReader(path: path).readAllSamples()
        #expect(samples.map(\.isKeyframe).enumerated().filter(\.element).map(\.offset) == [0, 15])
        // Picture 5 loses its first slice; picture 20 is cut 10 bytes short.
        samples[5] = try Self.removingNALUnit(try Self.firstSliceIndex(samples[5], codec: codec), from: samples[5])
        samples[20].data.removeLast(10)

        let session = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        let frames = try decodeAll(session, samples)
        let kinds = session.drops.map(\.kind)
        let expectedKinds: [DropReport.Kind] =
            [.incompleteAccessUnit] + Array(repeating: .waitingForKeyframe, count: 9) + [.incompleteAccessUnit]
            + Array(repeating: .waitingForKeyframe, count: 9)
        #expect(kinds == expectedKinds, "\(session.drops.prefix(3))")
        #expect(session.drops[0].reason.contains("missing"), "\(session.drops[0].reason)")
        #expect(session.drops[10].reason.contains("do not split"), "\(session.drops[10].reason)")
        #expect(frames.map { md5Hex($0.pixelBuffer) } == Array(reference[0..<5] + reference[15..<20]))
        #expect(session.recoveries.map(\.droppedSamples) == [10])
    }

    /// A non-reference picture missing its first slice is dropped alone:
    /// nothing refers to it, so every other picture comes out, FFmpeg's.
    @Test func anIncompleteNonReferencePictureIsDroppedAlone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("slices-b.mp4")
        try ffmpegTestPattern(
            size: "320x240", rate: 25, frames: 24,
            arguments: ["-c:v", "libx264", "-bf", "2", "-g", "24", "-x264-params", "slices=3:b-pyramid=none"],
            to: path)
        let packets = try Self.trace(path, codec: .h264)
        let reference = try Self.ffmpegMD5s(path)
        var samples = try MovieReader(path: path).readAllSamples()
        let index = try #require(packets.indices.first { $0 > 0 && packets[$0].referenceIDC == 0 })
        samples[index] = try Self.removingNALUnit(
            try Self.firstSliceIndex(samples[index], codec: .h264), from: samples[index])
        let session = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        let frames = try decodeAll(session, samples)
        #expect(session.drops.map(\.kind) == [.incompleteAccessUnit])
        let droppedPTS = samples[index].pts
        let position = try #require(samples.map(\.pts).sorted().firstIndex(of: droppedPTS))
        var expected = reference
        expected.remove(at: position)
        #expect(frames.map { md5Hex($0.pixelBuffer) } == expected)
    }
}
