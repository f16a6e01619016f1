import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import MediaIO

extension ContainerTests {
    @Suite struct MovieWriterTests {
        /// MP4 written by us: ffprobe's tag, profile, size, frame count and
        /// duration, the record byte for byte, and FFmpeg's decode of every frame.
        @Test(arguments: [CodecType.h264, .hevc])
        func mp4MatchesFFprobeAndDecodesLikeTheSource(codec: CodecType) throws {
            let directory = try TemporaryDirectory()
            let source = directory.path("source.mp4")
            try ContainerMedia.encode(codec, to: source)
            let samples = try ContainerMedia.samples(of: source)
            let output = directory.path("ours.mp4")
            let contextsBefore = LiveObjects.count(.formatContext)
            try ContainerMedia.write(samples, to: output)
            #expect(LiveObjects.count(.formatContext) == contextsBefore)

            let stream = try #require(try ffprobeStreams(path: output, countFrames: true).first)
            let raw = try #require(try ffprobeStreamDictionaries(path: output).first)
            #expect(raw["codec_tag_string"] as? String == (codec == .h264 ? "avc1" : "hvc1"))
            #expect(stream.profile == (codec == .h264 ? "High" : "Main"))
            #expect(stream.width == 320 && stream.height == 240)
            #expect(stream.frameCount == ContainerMedia.frameCount)
            #expect(raw["nb_frames"] as? String == "30")
            #expect(raw["duration"] as? String == "1.000000")
            #expect(raw["start_time"] as? String == "0.000000")

            // The sample entry holds FormatConv's record as it is (hvcC with
            // array_completeness set, which hvc1 requires).
            let description = samples[0].formatDescription
            let box = try #require(try isoBoxPayload(codec == .h264 ? "avcC" : "hvcC", inFile: output))
            let expected =
                codec == .h264 ? description.record : try SampleLayout.hvcCMarkingArraysComplete(description.record)
            #expect(box == expected)
            if codec == .hevc {
                #expect(try SampleLayout.nalUnitCount(ofRecord: box, codec: .hevc) == description.parameterSetCount)
                var offset = 23
                for _ in 0..<Int(box[22]) {
                    #expect(box[offset] & 0x80 != 0, "array_completeness at offset \(offset)")
                    let count = Int(box[offset + 1]) << 8 | Int(box[offset + 2])
                    offset += 3
                    for _ in 0..<count { offset += 2 + (Int(box[offset]) << 8 | Int(box[offset + 1])) }
                }
            }
            #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: source)))
        }

        /// Matroska and MPEG-TS written by us decode to the source's frames.
        @Test(arguments: [CodecType.h264, .hevc], [ContainerFormat.matroska, .mpegTS, .quickTime])
        func otherContainersDecodeLikeTheSource(codec: CodecType, container: ContainerFormat) throws {
            let directory = try TemporaryDirectory()
            let source = directory.path("source.mp4")
            try ContainerMedia.encode(codec, to: source)
            let output = directory.path("ours.out")
            try ContainerMedia.write(
                try ContainerMedia.samples(of: source), to: output, options: MovieWriterOptions(container: container))
            let expected = try ffmpegFrameMD5(path: source)
            #expect(expected.count == ContainerMedia.frameCount)
            #expect(try ffmpegFrameMD5(path: output) == expected, "\(codec) in \(container)")
            // And our reader gets the same samples back.
            let again = try ContainerMedia.samples(of: output)
            #expect(again.count == ContainerMedia.frameCount)
            #expect(again.filter(\.isKeyframe).count == 2)
        }

        /// Samples with 1- and 2-byte NAL lengths are stored as they are, with
        /// the record saying so, and FFmpeg decodes them.
        @Test(arguments: [1, 2, 4])
        func lengthSizesAreWrittenAsGiven(size: Int) throws {
            let directory = try TemporaryDirectory()
            let source = directory.path("source.mp4")
            // NAL units stay under 256 bytes for the 1-byte case.
            let withoutSEI = try ContainerMedia.smallNALUnitSamples(encodingTo: source)
            let samples = try ContainerMedia.withLengthSize(size, withoutSEI)
            let output = directory.path("length\(size).mp4")
            try ContainerMedia.write(samples, to: output)
            let record = try #require(try isoBoxPayload("avcC", inFile: output))
            #expect(Int(record[4] & 3) + 1 == size)
            #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: source)))
            let back = try MovieReader(path: output)
            #expect(back.storedNALUnitLengthSize == size)
            #expect(try back.readAllSamples().map(\.data) == samples.map(\.data))
        }

        @Test func fastStartPutsTheIndexFirstAndFragmentedWritesFragments() throws {
            let directory = try TemporaryDirectory()
            let source = directory.path("source.mp4")
            try ContainerMedia.encode(.h264, to: source)
            let samples = try ContainerMedia.samples(of: source)
            let expected = try ffmpegFrameMD5(path: source)

            let fast = directory.path("fast.mp4")
            try ContainerMedia.write(samples, to: fast, options: MovieWriterOptions(fastStart: true))
            let fastBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fast)))
            let moov = try #require(isoBoxPayload("moov", in: fastBytes)).offset
            let mdat = try #require(isoBoxPayload("mdat", in: fastBytes)).offset
            #expect(moov < mdat)
            #expect(try ffmpegFrameMD5(path: fast) == expected)

            let fragmented = directory.path("fragmented.mp4")
            try ContainerMedia.write(samples, to: fragmented, options: MovieWriterOptions(fragmented: true))
            let fragmentedBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: fragmented)))
            #expect(isoBoxPayload("moof", in: fragmentedBytes) != nil)
            #expect(try ffmpegFrameMD5(path: fragmented) == expected)
            #expect(try ContainerMedia.samples(of: fragmented).map(\.data) == samples.map(\.data))
        }

        @Test func misuseIsReportedWithTypedErrors() throws {
            let directory = try TemporaryDirectory()
            #expect(throws: MediaError.self) { try MovieWriter(path: directory.path("clip.avi")) }
            #expect(throws: MediaError.self) {
                try MovieWriter(path: directory.path("clip.mkv"), options: MovieWriterOptions(fastStart: true))
            }
            do {
                _ = try MovieWriter(path: directory.path("missing/clip.mp4"))
                Issue.record("opening a file in a missing folder succeeded")
            } catch {
                #expect(error.code == .system)
            }

            let empty = try MovieWriter(path: directory.path("empty.mp4"))
            do {
                try empty.finish()
                Issue.record("finish without samples succeeded")
            } catch {
                #expect(error.code == .invalidArgument)
            }

            let source = directory.path("source.mp4")
            try ContainerMedia.encode(.h264, to: source, bFrames: 0)
            let samples = try ContainerMedia.samples(of: source)
            let writer = try MovieWriter(path: directory.path("out.mp4"))
            try writer.append(samples[0])
            do {
                try writer.append(samples[0])
                Issue.record("a repeated decode timestamp was accepted")
            } catch {
                #expect(error.code == .invalidTimestamp)
            }
            let other = try ContainerMedia.withLengthSize(2, [samples[1]])[0]
            do {
                try writer.append(other)
                Issue.record("a new description was accepted in MP4")
            } catch {
                #expect(error.code == .unsupported)
            }
        }
    }
}
