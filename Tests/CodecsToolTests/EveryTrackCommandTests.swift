import Foundation
import TestSupport
import Testing

/// `codecs convert`, `inspect` and `decode` on movies with audio, subtitle
/// and data tracks made by ffmpeg at test time; FFmpeg's stream copy
/// (`-c copy -f md5`) and ffprobe check what comes out.
@Suite(.serialized) struct EveryTrackCommandTests {
    typealias Audio = MultiTrackMedia.Audio

    func codecs(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try runProcess(TestPaths.codecsExecutable.path, arguments)
        return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
    }

    /// The bitstream filter that makes FFmpeg's packets of `codec` in
    /// `container` comparable with an MP4/MKV source: MPEG-TS carries AAC
    /// with ADTS headers.
    func filter(_ codec: String, in container: String) -> String? {
        codec == "aac" && container == "ts" ? "aac_adtstoasc" : nil
    }

    /// Audio in `source` → `output` container: FFmpeg reads the same audio
    /// packets from both, the same video frames, and every stream starts and
    /// ends within one frame (video) or one audio frame of the source.
    @Test(arguments: [
        ("mp4", "aac", "mkv"), ("mp4", "aac", "ts"), ("mp4", "aac", "mov"), ("mkv", "aac", "mp4"),
        ("mp4", "libmp3lame", "mkv"), ("mp4", "libmp3lame", "ts"), ("mkv", "libmp3lame", "mp4"),
        ("mkv", "libopus", "mp4"), ("mkv", "libopus", "ts"), ("mkv", "libopus", "mkv"),
    ])
    func audioIsCopiedPacketForPacket(source: String, encoder: String, output: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.\(source)")
        let audio = Audio(encoder)
        try MultiTrackMedia.make(input, audio: [audio])
        let converted = directory.path("out.\(output)")
        let run = try codecs(["convert", "-i", input, "-o", converted])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "and \(try MultiTrackMedia.packets(input).filter { $0.stream == 1 }.count) packets of 1 other track"),
            "\(run.stderr)")

        let streams = try MultiTrackMedia.streamFields(converted)
        #expect(streams.map { $0["codec_type"] ?? "" } == ["video", "audio"])
        #expect(streams.map { $0["codec_name"] ?? "" } == ["h264", audio.codecName])
        #expect(
            try MultiTrackMedia.packetMD5(
                converted, stream: "a:0", bitstreamFilter: filter(audio.codecName, in: output))
                == (try MultiTrackMedia.packetMD5(input, stream: "a:0")),
            "\(source) → \(output), \(audio.codecName)")
        let frames = try ffmpegFrameMD5(path: input)
        #expect(frames.count == 60)
        #expect(try ffmpegFrameMD5(path: converted) == frames)
        try expectInSync(converted, with: input, uniformShiftAllowed: output == "ts")
    }

    /// Each stream's start and end (ffprobe's packets) within one frame of
    /// the source's: one video frame (1/30 s) for the video, one audio frame
    /// (the longest packet) for audio, plus Matroska's millisecond rounding,
    /// once the shift every stream shares is taken out. That shift (the
    /// video's start) is at most one video frame; MPEG-TS may shift more
    /// (its times may not be negative). `copied` maps the source streams
    /// compared to their output indices (nil: all, in order).
    func expectInSync(
        _ output: String, with source: String, uniformShiftAllowed: Bool, copied: [Int: Int]? = nil
    ) throws {
        let before = try MultiTrackMedia.timeSpans(source)
        let after = try MultiTrackMedia.timeSpans(output)
        let videoFrame = 1.0 / 30
        let rounding = 0.0015
        let shift = after[0]!.start - before[0]!.start
        #expect(abs(shift) <= (uniformShiftAllowed ? 1.5 : videoFrame + rounding), "shift \(shift)")
        let streams = copied ?? Dictionary(uniqueKeysWithValues: before.keys.map { ($0, $0) })
        for (stream, target) in streams.sorted(by: { $0.key < $1.key }) {
            guard let span = before[stream], let moved = after[target] else {
                Issue.record("stream \(stream) of \(source) is missing from \(output)")
                continue
            }
            let tolerance = (stream == 0 ? videoFrame : span.frame) + rounding
            #expect(abs(moved.start - shift - span.start) <= tolerance, "stream \(stream) start")
            #expect(abs(moved.end - shift - span.end) <= tolerance, "stream \(stream) end")
            #expect(
                abs((moved.end - moved.start) - (span.end - span.start)) <= tolerance, "stream \(stream) duration")
        }
        if !uniformShiftAllowed {
            let sourceFields = try MultiTrackMedia.streamFields(source)
            for (stream, target) in streams {
                let fields = try MultiTrackMedia.streamFields(output)[target]
                guard let start = fields["start_time"].flatMap(Double.init),
                    let expected = sourceFields[stream]["start_time"].flatMap(Double.init)
                else { continue }
                #expect(abs(start - expected) <= videoFrame + rounding, "stream \(stream) start_time")
            }
        }
    }

    /// MP4 with two audio tracks (English, French) and mov_text subtitles:
    /// into MKV both audio tracks and their languages are copied and the
    /// subtitles are named as not copied, with the reason; into MOV the
    /// subtitles are copied too.
    @Test func twoAudioTracksAndSubtitlesFromMP4() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mp4")
        try MultiTrackMedia.make(
            input,
            audio: [
                Audio("aac", language: "eng", frequency: 440),
                Audio("aac", sampleRate: 44_100, language: "fra", frequency: 880),
            ],
            subtitleCodec: "mov_text")

        let mkv = directory.path("out.mkv")
        let run = try codecs(["convert", "-i", input, "-o", mkv])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "track 3: subtitle mov_text is not copied to \(mkv): Matroska cannot hold mov_text subtitle"),
            "\(run.stderr)")
        #expect(run.stderr.contains("SubRip"))
        let streams = try MultiTrackMedia.streamFields(mkv)
        #expect(streams.map { $0["codec_type"] ?? "" } == ["video", "audio", "audio"])
        #expect(streams.map { $0["language"] ?? "" } == ["", "eng", "fra"])
        for track in ["a:0", "a:1"] {
            #expect(
                try MultiTrackMedia.packetMD5(mkv, stream: track)
                    == (try MultiTrackMedia.packetMD5(input, stream: track)))
        }
        try expectInSync(mkv, with: input, uniformShiftAllowed: false, copied: [0: 0, 1: 1, 2: 2])

        let mov = directory.path("out.mov")
        let copied = try codecs(["convert", "-i", input, "-o", mov])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(!copied.stderr.contains("not copied"), "\(copied.stderr)")
        #expect(copied.stderr.contains("of 3 other tracks"), "\(copied.stderr)")
        #expect(
            try MultiTrackMedia.streamFields(mov).map { $0["codec_name"] ?? "" } == ["h264", "aac", "aac", "mov_text"])
        #expect(try MultiTrackMedia.packetMD5(mov, stream: "s") == (try MultiTrackMedia.packetMD5(input, stream: "s")))
        #expect(
            try MultiTrackMedia.packetMD5(mov, stream: "a:1") == (try MultiTrackMedia.packetMD5(input, stream: "a:1")))
        try expectInSync(mov, with: input, uniformShiftAllowed: false)
    }

    /// MKV with SubRip subtitles: copied into MKV packet for packet; named
    /// as not copied into MP4 and MPEG-TS.
    @Test func subRipSubtitlesFromMatroska() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mkv")
        try MultiTrackMedia.make(input, audio: [Audio("libopus")], subtitleCodec: "srt")
        let mkv = directory.path("out.mkv")
        let run = try codecs(["convert", "-i", input, "-o", mkv])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try MultiTrackMedia.streamFields(mkv).map { $0["codec_name"] ?? "" } == ["h264", "opus", "subrip"])
        #expect(try MultiTrackMedia.packetMD5(mkv, stream: "s") == (try MultiTrackMedia.packetMD5(input, stream: "s")))
        #expect(try MultiTrackMedia.packets(mkv).filter { $0.stream == 2 }.count == 2)

        for (container, name) in [("mp4", "MP4"), ("ts", "MPEG-TS")] {
            let output = directory.path("out.\(container)")
            let refused = try codecs(["convert", "-i", input, "-o", output])
            #expect(refused.status == 0, "\(refused.stderr)")
            #expect(
                refused.stderr.contains(
                    "track 2: subtitle subrip is not copied to \(output): \(name) cannot hold subrip subtitle"),
                "\(refused.stderr)")
            #expect(try MultiTrackMedia.streamFields(output).map { $0["codec_name"] ?? "" } == ["h264", "opus"])
        }
    }

    /// A QuickTime timecode track (`tmcd`, a data track libavcodec has no
    /// codec for) is named as not copied; the audio is copied.
    @Test func timecodeDataTrackIsNamed() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mov")
        try MultiTrackMedia.make(input, audio: [Audio("aac")], extra: ["-timecode", "01:00:00:00"])
        #expect(try MultiTrackMedia.streamFields(input).map { $0["codec_type"] ?? "" } == ["video", "audio", "data"])
        let output = directory.path("out.mkv")
        let run = try codecs(["convert", "-i", input, "-o", output])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("track 2: data tmcd"), "\(run.stderr)")
        #expect(run.stderr.contains("libavcodec names no codec for this data track"), "\(run.stderr)")
        #expect(
            try MultiTrackMedia.packetMD5(output, stream: "a") == (try MultiTrackMedia.packetMD5(input, stream: "a")))
    }

    /// An MP4 with audio only is refused by the video commands, with a
    /// message that says so; `inspect` lists its track.
    @Test func audioOnlyFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("audio.mp4")
        try MultiTrackMedia.make(input, audio: [Audio("aac")], video: false)
        let commands: [[String]] = [
            ["convert", "-i", input, "-o", directory.path("out.mkv")],
            ["decode", "-i", input, "-o", directory.path("out.y4m")],
        ]
        for arguments in commands {
            let run = try codecs(arguments)
            #expect(run.status == 1, "\(arguments[0]): \(run.stderr)")
            #expect(run.stderr.contains("has no video track, only audio (found track 0: audio aac"), "\(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("out.mkv")))
        let inspect = try codecs(["inspect", input])
        #expect(inspect.status == 1)
        #expect(inspect.stdout.contains("track 0: audio aac 48000 Hz 1 ch"), "\(inspect.stdout)")
        #expect(inspect.stderr.contains("has no video track, only audio"), "\(inspect.stderr)")
    }

    /// MPEG-TS whose audio lost one transport packet: the demuxer marks the
    /// damaged AAC packets; convert copies the video whole and the other
    /// audio packets, and names the damaged ones it left out.
    @Test func damagedAudioPacketsAreLeftOutAndNamed() throws {
        let directory = try TemporaryDirectory()
        let clean = directory.path("clean.ts")
        try MultiTrackMedia.make(clean, audio: [Audio("aac")])
        // Drop the 20th transport packet of the audio PID (0x101, ffmpeg's
        // second elementary stream) that does not start a PES packet.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clean)))
        var audioPackets = 0
        var dropAt: Int?
        for offset in stride(from: 0, to: bytes.count - 187, by: 188) where dropAt == nil {
            let pid = Int(bytes[offset + 1] & 0x1F) << 8 | Int(bytes[offset + 2])
            let startsPES = bytes[offset + 1] & 0x40 != 0
            if pid == 0x101 && !startsPES {
                audioPackets += 1
                if audioPackets == 20 { dropAt = offset }
            }
        }
        let offset = try #require(dropAt)
        bytes.removeSubrange(offset..<offset + 188)
        let input = directory.path("damaged.ts")
        try Data(bytes).write(to: URL(fileURLWithPath: input))

        let output = directory.path("out.mkv")
        let run = try codecs(["convert", "-i", input, "-o", output])
        #expect(run.status == 0, "\(run.stderr)")
        let pattern = /track 1: audio aac 48000 Hz 1 ch: left out (\d+) packets? the demuxer found damaged/
        let match = try #require(run.stderr.firstMatch(of: pattern), "\(run.stderr)")
        let leftOut = Int(match.1)!
        #expect(leftOut > 0)
        let sourceAudio = try MultiTrackMedia.packets(input).filter { $0.stream == 1 }.count
        #expect(try MultiTrackMedia.packets(output).filter { $0.stream == 1 }.count == sourceAudio - leftOut)
        let frames = try ffmpegFrameMD5(path: clean)
        #expect(frames.count == 60)
        #expect(try ffmpegFrameMD5(path: output) == frames)
    }

    /// `inspect` lists every track, in text and in `--json`.
    @Test func inspectListsEveryTrack() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mp4")
        try MultiTrackMedia.make(
            input, audio: [Audio("aac", language: "eng"), Audio("libmp3lame", sampleRate: 44_100)],
            subtitleCodec: "mov_text")
        let json = try codecs(["inspect", input, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let tracks = try #require(object?["tracks"] as? [[String: Any]])
        #expect(tracks.map { $0["kind"] as? String } == ["video", "audio", "audio", "subtitle"])
        #expect(tracks.map { $0["codec"] as? String } == ["h264", "aac", "mp3", "mov_text"])
        #expect(tracks.map { $0["index"] as? Int } == [0, 1, 2, 3])
        #expect(tracks[1]["language"] as? String == "eng")
        #expect(tracks[1]["sampleRate"] as? Int == 48_000)
        #expect(tracks[2]["sampleRate"] as? Int == 44_100)
        #expect(tracks[1]["packets"] as? Int == (try MultiTrackMedia.packets(input).filter { $0.stream == 1 }.count))
        #expect((tracks[1]["codecConfiguration"] as? String)?.isEmpty == false)

        let text = try codecs(["inspect", input])
        #expect(text.status == 0)
        for line in [
            "track 0: video h264 160x120", "track 1: audio aac 48000 Hz 1 ch (eng)", "track 2: audio mp3 44100 Hz 1 ch",
            "track 3: subtitle mov_text",
        ] {
            #expect(text.stdout.contains(line), "\(line) in \(text.stdout)")
        }
    }

    /// `decode` says once that it writes the video only.
    @Test func decodeSaysItWritesVideoOnly() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mkv")
        try MultiTrackMedia.make(input, audio: [Audio("libopus")], subtitleCodec: "srt")
        let run = try codecs(["decode", "-i", input, "-o", directory.path("out.y4m")])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").filter { $0.contains("writes the video track only") }
        #expect(lines.count == 1, "\(run.stderr)")
        #expect(lines.first?.contains("track 1: audio opus") == true)
        #expect(lines.first?.contains("track 2: subtitle subrip") == true)
    }
}
