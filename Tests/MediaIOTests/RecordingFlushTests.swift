import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import MediaIO

extension ContainerTests {
    /// ``MovieWriter`` as a live recorder: AAC with ADTS headers (an MPEG-TS
    /// source) in fragmented MP4, ``MovieWriter/flush()`` and
    /// ``MovieWriterOptions/flushInterval``, and what a writer that never
    /// finishes (a killed process) leaves on disk.
    @Suite struct RecordingFlushTests {
        typealias Audio = MultiTrackMedia.Audio

        /// An MPEG-TS file of 2 s of H.264 (no B-frames, one keyframe every
        /// `gop` frames) and AAC in ADTS form, as a live source sends it.
        static func transportStream(in directory: TemporaryDirectory, gop: Int = 30) throws -> String {
            let path = directory.path("live.ts")
            try MultiTrackMedia.make(path, audio: [Audio("aac")], extra: ["-bf", "0", "-g", String(gop)])
            return path
        }

        /// Copies every track of `source` into `writer` until `stopAfter`
        /// video samples were appended (all of them when nil); returns the
        /// samples appended.
        @discardableResult
        static func copy(_ source: String, into writer: MovieWriter, stopAfter: Int? = nil) throws -> Int {
            let reader = try MovieReader(path: source, readingEveryTrack: true)
            var tracks: [Int: Int] = [:]
            for track in reader.tracks where track.index != reader.trackIndex {
                tracks[track.index] = try writer.addTrack(copying: track)
            }
            var samples = 0
            while let item = try reader.nextItem() {
                switch item {
                case .sample(let sample):
                    if let stopAfter, samples == stopAfter { return samples }
                    try writer.append(sample)
                    samples += 1
                case .packet(let packet): try writer.append(packet, toTrack: tracks[packet.track]!)
                }
            }
            return samples
        }

        /// The MD5 of each audio packet's payload FFmpeg's stream copy reads
        /// from `path` (`aac_adtstoasc` first for MPEG-TS), in order: the
        /// sixth `framemd5` field (side data follows it).
        static func audioPackets(_ path: String) throws -> [String] {
            let filter = path.hasSuffix(".ts") ? ["-bsf:a", "aac_adtstoasc"] : []
            let output = try runChecked(
                "ffmpeg",
                ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-c", "copy"] + filter
                    + ["-f", "framemd5", "-"])
            return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
                guard !line.hasPrefix("#") else { return nil }
                let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                return fields.count >= 6 && fields[5].count == 32 ? fields[5] : nil
            }
        }

        /// The number of top-level `type` boxes of an ISO BMFF file.
        static func topLevelBoxes(_ type: String, in bytes: [UInt8]) -> Int {
            var offset = 0
            var count = 0
            while offset + 8 <= bytes.count {
                let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
                if String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self) == type { count += 1 }
                guard size >= 8 else { break }
                offset += size
            }
            return count
        }

        /// AAC from MPEG-TS (ADTS headers) goes into fragmented and plain
        /// MP4 and into Matroska as raw AAC: FFmpeg reads the same audio
        /// packets as its own `aac_adtstoasc` makes of the source, and the
        /// video decodes to the source's frames.
        @Test(arguments: ["fragmented.mp4", "plain.mp4", "out.mkv"])
        func adtsAudioFromMPEGTSIsKept(_ name: String) throws {
            let directory = try TemporaryDirectory()
            let source = try Self.transportStream(in: directory)
            let output = directory.path(name)
            let writer = try MovieWriter(path: output, options: MovieWriterOptions(fragmented: name.hasPrefix("frag")))
            #expect(try Self.copy(source, into: writer) == 60)
            try writer.finish()
            #expect(try MultiTrackMedia.streamFields(output).map { $0["codec_type"] } == ["video", "audio"])
            let expected = try Self.audioPackets(source)
            #expect(expected.count > 80)
            #expect(try Self.audioPackets(output) == expected)
            #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: source)))
        }

        /// A writer that never finishes (its process killed) leaves what it
        /// flushed: with `flushInterval` 1 s every track up to the last flush,
        /// at most 1 s (30 frames) before the last sample appended; the
        /// frames decode to the source's first frames, the audio packets are
        /// the source's first packets. The source's keyframes are 2 s apart,
        /// so the fragments are the flush interval's, not the keyframes';
        /// with keyframes every 0.5 s, MP4 fragments end at both.
        @Test(arguments: [("mp4", 60), ("mkv", 60), ("ts", 60), ("mp4", 15)])
        func unfinishedFileHoldsEverythingUpToTheLastFlush(_ container: String, gop: Int) throws {
            let directory = try TemporaryDirectory()
            let source = try Self.transportStream(in: directory, gop: gop)
            let output = directory.path("recording.\(container)")
            let writer = try MovieWriter(
                path: output, options: MovieWriterOptions(fragmented: container == "mp4", flushInterval: 1))
            let appended = try Self.copy(source, into: writer, stopAfter: 50)
            #expect(appended == 50)
            // What the file holds now is what a SIGKILL would leave.
            let killed = directory.path("killed.\(container)")
            try FileManager.default.copyItem(atPath: output, toPath: killed)
            #expect(try MultiTrackMedia.streamFields(killed).map { $0["codec_type"] } == ["video", "audio"])
            let frames = try ffmpegFrameMD5(path: killed)
            let sourceFrames = try ffmpegFrameMD5(path: source)
            #expect(frames.count >= appended - 30 && frames.count <= appended, "\(frames.count) of \(appended)")
            #expect(frames == Array(sourceFrames.prefix(frames.count)))
            let audio = try Self.audioPackets(killed)
            let sourceAudio = try Self.audioPackets(source)
            #expect(!audio.isEmpty)
            #expect(audio == Array(sourceAudio.prefix(audio.count)))
            try writer.finish()
            #expect(try ffmpegFrameMD5(path: output) == Array(sourceFrames.prefix(appended)))
            if container == "mp4" && gop == 60 {
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
                #expect(Self.topLevelBoxes("moof", in: bytes) == 2)
            }
        }

        /// `flush()` writes everything appended so far, held interleaving
        /// queues and the fragment being built included.
        @Test func flushWritesEverySampleAppended() throws {
            let directory = try TemporaryDirectory()
            let source = try Self.transportStream(in: directory, gop: 60)
            let output = directory.path("flushed.mp4")
            let writer = try MovieWriter(path: output, options: MovieWriterOptions(fragmented: true))
            try Self.copy(source, into: writer, stopAfter: 40)
            try writer.flush()
            let snapshot = directory.path("snapshot.mp4")
            try FileManager.default.copyItem(atPath: output, toPath: snapshot)
            #expect(try ffmpegFrameMD5(path: snapshot) == Array(try ffmpegFrameMD5(path: source).prefix(40)))
            try writer.finish()
        }

        /// `flushInterval` is refused where it cannot help.
        @Test func flushIntervalNeedsAFileReadableBeforeFinish() throws {
            let directory = try TemporaryDirectory()
            #expect(throws: MediaError.self) {
                try MovieWriter(path: directory.path("plain.mp4"), options: MovieWriterOptions(flushInterval: 1))
            }
            #expect(throws: MediaError.self) {
                try MovieWriter(
                    path: directory.path("zero.mkv"), options: MovieWriterOptions(flushInterval: 0))
            }
        }

        /// `addTrack(copying:)` refuses at once a track whose header the
        /// muxer would refuse at the first append, as FFmpeg's stream copy
        /// of the same track does (FLAC into MP4, which libavformat 5 calls
        /// experimental); what FFmpeg writes, the writer accepts and writes.
        @Test func tracksTheHeaderWouldRefuseAreRefusedAtOnce() throws {
            let directory = try TemporaryDirectory()
            let source = directory.path("flac.mkv")
            try MultiTrackMedia.make(source, audio: [Audio("flac")])
            let flac = try #require(try MovieReader(path: source).tracks.first { $0.kind == .audio })
            let ffmpegWrites =
                (try? runChecked(
                    "ffmpeg",
                    ["-nostdin", "-v", "error", "-i", source, "-map", "0", "-c", "copy", directory.path("peer.mp4")]))
                != nil
            let writer = try MovieWriter(path: directory.path("out.mp4"))
            if ffmpegWrites {
                #expect(writer.copyRefusal(for: flac) == nil)
                #expect(try Self.copy(source, into: writer) == 60)
                try writer.finish()
            } else {
                let refusal = try #require(writer.copyRefusal(for: flac))
                #expect(refusal.contains("flac"), "\(refusal)")
                do {
                    _ = try writer.addTrack(copying: flac)
                    Issue.record("addTrack accepted a track the MP4 muxer refuses")
                } catch {
                    #expect(error.code == .unsupported)
                }
            }
        }
    }
}
