// MediaFileConversion and TrackCopier against ffprobe and ffmpeg: packet
// counts, decoded frame MD5s, the notes of tracks left out.
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import MediaIO

extension ContainerTests {
    @Suite struct MediaFileConversionTests {
        typealias Audio = MultiTrackMedia.Audio

        /// A destination that records what it is given and refuses nothing.
        final class RecordingDestination: ConversionDestination {
            var samples: [CompressedSample] = []
            var finished = false
            func appendSample(_ sample: CompressedSample) throws(MediaError) { samples.append(sample) }
            func copyRefusal(for track: MediaTrack) -> String? { "video only" }
            func addTrack(copying track: MediaTrack) throws(MediaError) -> Int { 0 }
            func appendPacket(_ packet: TrackPacket, toTrack track: Int) throws(MediaError) {}
            func finish() throws(MediaError) { finished = true }
        }

        /// The packets of the first video stream of `path` and how many are
        /// keyframes, as ffprobe reads them.
        static func videoPackets(_ path: String) throws -> (packets: Int, keyframes: Int) {
            let output = try runChecked(
                "ffprobe",
                ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags", "-of", "csv=p=0", path])
            let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
            return (lines.count, lines.filter { $0.hasPrefix("K") }.count)
        }

        /// MP4 with two audio tracks to Matroska with 2-byte NAL lengths:
        /// every video packet ffprobe counts, its keyframes, every audio
        /// packet; the output decodes to ffmpeg's frames of the input.
        @Test func mp4ToMatroskaWithLengthSize2() throws {
            let directory = try TemporaryDirectory()
            let input = directory.path("in.mp4")
            let output = directory.path("out.mkv")
            try MultiTrackMedia.make(input, audio: [Audio("aac"), Audio("libmp3lame", sampleRate: 44_100)])
            var source = try EncodedSampleReader(path: input, annexB: false, readingEveryTrack: true)
            let writer = try MovieWriter(path: output)
            var notes: [String] = []
            let report = try MediaFileConversion(inputName: input, outputName: output, lengthSize: 2)
                .run(from: &source, to: writer, notes: { notes.append("\($0)") })
            let video = try Self.videoPackets(input)
            let audioPackets = try MultiTrackMedia.packets(input).filter { $0.stream != 0 }.count
            #expect(report.samples == video.packets)
            #expect(report.keyframes == video.keyframes)
            #expect(report.copiedTracks == 2)
            #expect(report.copiedPackets == audioPackets)
            #expect(notes.isEmpty)
            #expect(try MultiTrackMedia.packets(output).filter { $0.stream != 0 }.count == audioPackets)
            let copied = try Self.videoPackets(output)
            #expect(copied.packets == video.packets && copied.keyframes == video.keyframes)
            let written = try MovieReader(path: output).readAllSamples()
            #expect(written.count == video.packets)
            #expect(written.allSatisfy { $0.formatDescription.nalUnitHeaderLength == 2 })
            #expect(
                try ffmpegFrameMD5(path: output, everyFrame: true) == ffmpegFrameMD5(path: input, everyFrame: true))
        }

        /// An Annex-B stream with B-frames into MP4: every access unit, with
        /// presentation times from the picture order, decoding to ffmpeg's
        /// frames of the stream.
        @Test func annexBToMP4() throws {
            let directory = try TemporaryDirectory()
            let input = directory.path("in.h264")
            let output = directory.path("out.mp4")
            try ContainerMedia.encode(.h264, to: input, bFrames: 2)
            var source = try EncodedSampleReader(path: input, annexB: true, presentationTimes: true)
            let report = try MediaFileConversion(inputName: input, outputName: output)
                .run(from: &source, to: try MovieWriter(path: output))
            let counts = try ffprobePacketCounts(path: input)
            #expect(report.samples == counts.packets)
            #expect(report.keyframes == counts.keyframes)
            #expect(report.copiedTracks == 0 && report.copiedPackets == 0)
            let written = try ffprobePacketCounts(path: output)
            #expect(written.packets == counts.packets && written.keyframes == counts.keyframes)
            #expect(
                try ffmpegFrameMD5(path: output, everyFrame: true) == ffmpegFrameMD5(path: input, everyFrame: true))
        }

        /// A track the output cannot hold is told once, with the writer's
        /// reason, and the tracks it can hold are copied.
        @Test func refusedTrackIsNoted() throws {
            let directory = try TemporaryDirectory()
            let input = directory.path("in.mp4")
            let output = directory.path("out.mkv")
            try MultiTrackMedia.make(input, audio: [Audio("aac")], subtitleCodec: "mov_text")
            var source = try EncodedSampleReader(path: input, annexB: false, readingEveryTrack: true)
            var notes: [TrackCopier.Note] = []
            let report = try MediaFileConversion(inputName: input, outputName: output)
                .run(from: &source, to: try MovieWriter(path: output), notes: { notes.append($0) })
            #expect(report.copiedTracks == 1)
            #expect(report.copiedPackets == (try MultiTrackMedia.packets(input).filter { $0.stream == 1 }.count))
            #expect(notes.count == 1)
            guard case .trackNotCopied(let track, _, _, let reason) = notes.first else {
                Issue.record("expected a track left out, got \(notes)")
                return
            }
            #expect(track.index == 2)
            #expect(reason.hasPrefix("Matroska cannot hold mov_text subtitle"))
            #expect("\(notes[0])" == "\(input) \(track) is not copied to \(output): \(reason)")
        }

        /// An output that holds one codec only: a sample of another ends the
        /// conversion with the reason, and the destination is not finished;
        /// a destination that refuses every other track has each one noted.
        @Test func wrongCodecThrowsAndLeavesDestinationUnfinished() throws {
            let directory = try TemporaryDirectory()
            let input = directory.path("in.mp4")
            try MultiTrackMedia.make(input, audio: [Audio("aac")])
            var source = try EncodedSampleReader(path: input, annexB: false, readingEveryTrack: true)
            let destination = RecordingDestination()
            var notes: [String] = []
            do {
                _ = try MediaFileConversion(inputName: "in", outputName: "out.hevc", outputCodec: .hevc)
                    .run(from: &source, to: destination, notes: { notes.append("\($0)") })
                Issue.record("expected an error")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message.hasPrefix("out.hevc: the extension names HEVC but in holds H.264"))
            }
            #expect(destination.samples.isEmpty)
            #expect(!destination.finished)
            #expect(notes.count == 1 && notes[0].hasSuffix("is not copied to out.hevc: video only"))
        }

        /// A stream with no access unit throws and finishes nothing.
        @Test func emptyInputThrows() throws {
            let directory = try TemporaryDirectory()
            let input = directory.path("empty.h264")
            _ = FileManager.default.createFile(atPath: input, contents: Data())
            var source = try EncodedSampleReader(path: input, annexB: true, codec: .h264)
            let destination = RecordingDestination()
            do {
                _ = try MediaFileConversion(inputName: input, outputName: "out.mp4").run(from: &source, to: destination)
                Issue.record("expected an error")
            } catch {
                #expect(error.code == .invalidData)
                #expect(error.message.hasPrefix("\(input): no access unit could be read"))
            }
            #expect(!destination.finished)
        }
    }
}
