import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import MediaIO

/// A file FFmpeg writes for a reader test.
struct FFmpegWrittenFile: Sendable, CustomStringConvertible {
    var name: String
    var codec: CodecType
    var fileName: String
    var extra: [String] = []
    var sampleEntry: String?

    var description: String { name }
}

extension ContainerTests {
    @Suite struct MovieReaderTests {
        static let files: [FFmpegWrittenFile] = [
            .init(name: "H.264 avc1 with B-frames", codec: .h264, fileName: "b.mp4", sampleEntry: "avc1"),
            .init(
                name: "H.264 avc3", codec: .h264, fileName: "avc3.mp4", extra: ["-tag:v", "avc3"], sampleEntry: "avc3"),
            .init(
                name: "H.264 avc3 with in-band parameter sets", codec: .h264, fileName: "inband.mp4",
                extra: ["-tag:v", "avc3", "-x264-params", "repeat-headers=1"], sampleEntry: "avc3"),
            .init(
                name: "H.264 fragmented", codec: .h264, fileName: "frag.mp4",
                extra: ["-movflags", "frag_keyframe+empty_moov"], sampleEntry: "avc1"),
            .init(
                name: "HEVC hev1", codec: .hevc, fileName: "hev1.mp4", extra: ["-tag:v", "hev1"], sampleEntry: "hev1"),
            .init(
                name: "HEVC hvc1", codec: .hevc, fileName: "hvc1.mp4", extra: ["-tag:v", "hvc1"], sampleEntry: "hvc1"),
            .init(name: "H.264 Matroska", codec: .h264, fileName: "b.mkv"),
            .init(name: "HEVC Matroska", codec: .hevc, fileName: "h.mkv"),
            .init(name: "H.264 MPEG-TS", codec: .h264, fileName: "b.ts"),
            .init(name: "HEVC MPEG-TS", codec: .hevc, fileName: "h.ts"),
        ]

        /// Samples read from FFmpeg's files, written back as Annex-B by
        /// FormatConv, decode to the frames FFmpeg decodes from the file.
        @Test(arguments: files)
        func samplesDecodeLikeFFmpegsDecodeOfTheFile(file: FFmpegWrittenFile) throws {
            let directory = try TemporaryDirectory()
            let path = directory.path(file.fileName)
            try ContainerMedia.encode(file.codec, to: path, extra: file.extra)
            let contextsBefore = LiveObjects.count(.formatContext)
            var samples: [CompressedSample] = []
            do {
                let reader = try MovieReader(path: path)
                #expect(reader.codec == file.codec)
                #expect(reader.sampleEntryType == file.sampleEntry)
                #expect(LiveObjects.count(.formatContext) == contextsBefore + 1)
                samples = try reader.readAllSamples()
            }
            #expect(LiveObjects.count(.formatContext) == contextsBefore)

            #expect(samples.count == ContainerMedia.frameCount)
            #expect(samples.filter(\.isKeyframe).count == 2)
            #expect(samples.first?.isKeyframe == true)
            #expect(samples.map(\.pts).min() == samples.first?.pts)
            for (index, pair) in zip(samples, samples.dropFirst()).enumerated() {
                #expect(pair.0.dts < pair.1.dts, "decode times of samples \(index) and \(index + 1)")
            }
            for (index, sample) in samples.enumerated() {
                #expect(sample.dts <= sample.pts, "sample \(index)")
                #expect(sample.duration.isValid && sample.duration.value > 0, "sample \(index)")
                // No parameter sets inside samples: they are in the description.
                let units = try LengthPrefixed.nalUnits(
                    in: sample.data, lengthSize: sample.formatDescription.nalUnitHeaderLength)
                let types = units.map { file.codec == .h264 ? Int($0.first! & 0x1F) : Int($0.first! >> 1 & 0x3F) }
                #expect(types.allSatisfy { file.codec == .h264 ? ![7, 8, 9].contains($0) : !(32...35).contains($0) })
            }
            #expect(Set(samples.map(\.formatDescription)).count == 1)
            #expect(samples[0].formatDescription.width == 320 && samples[0].formatDescription.height == 240)

            let expected = try ffmpegFrameMD5(path: path)
            #expect(expected.count == ContainerMedia.frameCount)
            let annexB = try annexBStream(samples)
            #expect(try ffmpegFrameMD5(annexB: annexB, codec: file.codec, in: directory) == expected)
        }

        /// Files with NAL length sizes 1, 2, 4 and the legacy 3 (crafted here:
        /// 3-byte lengths and an avcC saying `lengthSizeMinusOne` 2) are read
        /// into samples FFmpeg decodes to the file's frames; 3 becomes 4.
        @Test(arguments: [1, 2, 3, 4])
        func lengthSizes(size: Int) throws {
            let directory = try TemporaryDirectory()
            let source = directory.path("source.mp4")
            var samples = try ContainerMedia.smallNALUnitSamples(encodingTo: source)
            let path = directory.path("length\(size).mp4")
            if size == 3 {
                // Write 3-byte lengths under a 4-byte record, then patch the record
                // in place: the sample sizes in the index are the real ones.
                samples = samples.map { sample in
                    var copy = sample
                    let units = try! LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4)
                    var data: [UInt8] = []
                    for unit in units {
                        let length = unit.count
                        data += [UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8)]
                        data.append(UInt8(truncatingIfNeeded: length))
                        data += unit
                    }
                    copy.data = data
                    return copy
                }
                try ContainerMedia.write(samples, to: path)
                var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
                let record = try #require(isoBoxPayload("avcC", in: bytes))
                bytes[record.offset + 4] = (bytes[record.offset + 4] & 0xFC) | 2
                try Data(bytes).write(to: URL(fileURLWithPath: path))
            } else {
                try ContainerMedia.write(try ContainerMedia.withLengthSize(size, samples), to: path)
            }
            let expected = try ffmpegFrameMD5(path: source)
            if size != 3 { #expect(try ffmpegFrameMD5(path: path) == expected) }

            let reader = try MovieReader(path: path)
            #expect(reader.storedNALUnitLengthSize == size)
            #expect(reader.formatDescription?.nalUnitHeaderLength == (size == 3 ? 4 : size))
            let read = try reader.readAllSamples()
            #expect(read.count == ContainerMedia.frameCount)
            #expect(read.allSatisfy { $0.formatDescription.nalUnitHeaderLength == (size == 3 ? 4 : size) })
            #expect(
                try ffmpegFrameMD5(annexB: try annexBStream(read), codec: .h264, in: directory)
                    == expected)
        }

        /// A stream whose resolution changes mid-way (two Annex-B streams joined
        /// in one MPEG-TS) gives a second description at the change.
        @Test(arguments: [CodecType.h264, .hevc])
        func inBandChangesMakeNewDescriptions(codec: CodecType) throws {
            let directory = try TemporaryDirectory()
            let ext = annexBFileExtension(codec)
            let first = directory.path("a.\(ext)")
            let second = directory.path("b.\(ext)")
            try ContainerMedia.encode(codec, to: first, bFrames: 0)
            try ContainerMedia.encode(codec, to: second, bFrames: 0, size: "160x128")
            let joined = directory.path("joined.\(ext)")
            try (try Data(contentsOf: URL(fileURLWithPath: first)) + Data(contentsOf: URL(fileURLWithPath: second)))
                .write(to: URL(fileURLWithPath: joined))
            let ts = directory.path("joined.ts")
            try runChecked(
                "ffmpeg",
                ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-r", "30", "-i", joined, "-c", "copy", ts])

            let samples = try ContainerMedia.samples(of: ts)
            #expect(samples.count == 2 * ContainerMedia.frameCount)
            let sizes = samples.map { "\($0.formatDescription.width)x\($0.formatDescription.height)" }
            #expect(sizes == Array(repeating: "320x240", count: 30) + Array(repeating: "160x128", count: 30))
            #expect(samples[30].isKeyframe)
            let expected = try ffmpegFrameMD5(path: joined)
            #expect(
                try ffmpegFrameMD5(annexB: try annexBStream(samples), codec: codec, in: directory)
                    == expected)
        }

        /// Tracks we cannot read are named with what they hold.
        @Test func unsupportedTracksAreNamed() throws {
            let directory = try TemporaryDirectory()
            let audio = directory.path("audio.mp4")
            try runChecked(
                "ffmpeg",
                [
                    "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                    "sine=frequency=440:duration=0.2", "-c:a", "aac", audio,
                ])
            do {
                _ = try MovieReader(path: audio)
                Issue.record("an audio-only file was accepted")
            } catch {
                #expect(error.code == .unsupported)
                #expect(error.message.contains("track 0: audio aac (mp4a)"), "\(error.message)")
            }

            let mpeg4 = directory.path("mpeg4.mp4")
            try ffmpegTestPattern(size: "64x48", frames: 3, arguments: ["-c:v", "mpeg4"], to: mpeg4)
            do {
                _ = try MovieReader(path: mpeg4)
                Issue.record("an MPEG-4 Part 2 track was accepted")
            } catch {
                #expect(error.code == .unsupported)
                #expect(error.message.contains("track 0: video mpeg4 (mp4v)"), "\(error.message)")
            }

            do {
                _ = try MovieReader(path: directory.path("missing.mp4"))
                Issue.record("a missing file was opened")
            } catch {
                #expect(error.code == .system)
                #expect(error.message.contains("missing.mp4"))
            }
        }

        /// A sample whose NAL lengths overrun is reported with its place.
        @Test func malformedSamplesAreReportedWithTheirPlace() throws {
            let directory = try TemporaryDirectory()
            let source = directory.path("source.mp4")
            try ContainerMedia.encode(.h264, to: source, bFrames: 0)
            var samples = try ContainerMedia.samples(of: source)
            samples[3].data[0] = 0x7F  // the first length now runs past the end
            let broken = directory.path("broken.mp4")
            try ContainerMedia.write(samples, to: broken)
            let reader = try MovieReader(path: broken)
            do {
                _ = try reader.readAllSamples()
                Issue.record("a sample with an overrunning length was accepted")
            } catch {
                #expect(error.code == .invalidData)
                #expect(error.message.contains("track 0 packet 3"), "\(error.message)")
            }
        }
    }
}
