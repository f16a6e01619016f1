import Foundation

/// Movies with audio, subtitle and data tracks, made at test time with the
/// ffmpeg CLI from lavfi sources (`testsrc2`, `sine`), and what FFmpeg says
/// about their tracks: the independent peer of the every-track tests.
public enum MultiTrackMedia {
    /// An audio track to encode: an FFmpeg encoder, its sample rate, a
    /// language, and the sine's frequency (each track sounds different).
    public struct Audio: Sendable, CustomStringConvertible {
        /// The FFmpeg encoder's name (`aac`, `libopus`, `libmp3lame`).
        public var encoder: String
        /// Samples per second.
        public var sampleRate: Int
        /// The language tag written to the track (`eng`); nil writes none.
        public var language: String?
        /// The sine's frequency in Hz.
        public var frequency: Int

        /// Creates an audio track from `encoder`; by default 48 kHz, no language, a 440 Hz sine.
        public init(_ encoder: String, sampleRate: Int = 48_000, language: String? = nil, frequency: Int = 440) {
            self.encoder = encoder
            self.sampleRate = sampleRate
            self.language = language
            self.frequency = frequency
        }

        /// libavcodec's name of what the encoder makes.
        public var codecName: String {
            switch encoder {
            case "libopus": "opus"
            case "libmp3lame": "mp3"
            default: encoder
            }
        }

        /// The ``codecName``, which names the track in test output.
        public var description: String { codecName }
    }

    /// Two cues of SubRip text, for the subtitle tracks.
    public static let subRipText = """
        1
        00:00:00,500 --> 00:00:01,000
        Hello

        2
        00:00:01,200 --> 00:00:01,800
        World

        """

    /// Makes `path`: 2 s of 160x120 `testsrc2` at 30 fps in H.264 (libx264,
    /// B-frames, a keyframe every 30 frames), then `audio` tracks in order,
    /// then a subtitle track in `subtitleCodec` (`mov_text`, `srt`) when
    /// given; `extra` goes before the output (`-timecode` for a data track).
    public static func make(
        _ path: String, audio: [Audio], subtitleCodec: String? = nil, video: Bool = true, extra: [String] = []
    ) throws {
        var inputs: [String] = []
        var maps: [String] = []
        var codecs: [String] = []
        var index = 0
        if video {
            inputs += ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30"]
            maps += ["-map", "\(index)"]
            codecs += ["-c:v", "libx264", "-g", "30", "-bf", "2", "-pix_fmt", "yuv420p"]
            index += 1
        }
        for (number, track) in audio.enumerated() {
            inputs += ["-f", "lavfi", "-i", "sine=frequency=\(track.frequency):sample_rate=\(track.sampleRate)"]
            maps += ["-map", "\(index)"]
            codecs += ["-c:a:\(number)", track.encoder]
            if let language = track.language { codecs += ["-metadata:s:a:\(number)", "language=\(language)"] }
            index += 1
        }
        if let subtitleCodec {
            let subtitles = path + ".srt"
            try subRipText.write(toFile: subtitles, atomically: true, encoding: .utf8)
            inputs += ["-i", subtitles]
            maps += ["-map", "\(index)"]
            codecs += ["-c:s", subtitleCodec]
        }
        try runChecked(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"] + inputs + ["-t", "2"] + maps + codecs + extra
                + [path])
    }

    /// The MD5 of the packets of audio track `index` (`-map 0:a:N -c copy -f
    /// md5`), what FFmpeg's stream copy reads from `path`; `bitstreamFilter`
    /// rewrites them first (`aac_adtstoasc` for AAC from MPEG-TS, whose
    /// packets carry ADTS headers).
    public static func packetMD5(
        _ path: String, stream: String, bitstreamFilter: String? = nil
    ) throws -> String {
        let filter = bitstreamFilter.map { ["-bsf", $0] } ?? []
        let output = try runChecked(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", path, "-map", "0:\(stream)", "-c", "copy"]
                + filter + ["-f", "md5", "-"])
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// One packet as `ffprobe -show_packets` lists it.
    public struct Packet: Sendable {
        /// The index of the stream the packet belongs to.
        public var stream: Int
        /// The presentation time in seconds; nil when ffprobe printed none.
        public var pts: Double?
        /// The duration in seconds; nil when ffprobe printed none.
        public var duration: Double?
    }

    /// Every packet of `path` in the order libavformat reads them.
    public static func packets(_ path: String) throws -> [Packet] {
        let output = try runChecked(
            "ffprobe",
            [
                "-v", "error", "-show_entries", "packet=stream_index,pts_time,duration_time", "-of", "csv=p=0",
                path,
            ])
        return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3, let stream = Int(fields[0]) else { return nil }
            return Packet(stream: stream, pts: Double(fields[1]), duration: Double(fields[2]))
        }
    }

    /// Each stream's first presentation time and the end of its last packet
    /// (largest pts + duration), in seconds, by stream index.
    public static func timeSpans(_ path: String) throws -> [Int: (start: Double, end: Double, frame: Double)] {
        var spans: [Int: (start: Double, end: Double, frame: Double)] = [:]
        for packet in try packets(path) {
            guard let pts = packet.pts else { continue }
            let duration = packet.duration ?? 0
            if let span = spans[packet.stream] {
                spans[packet.stream] = (min(span.start, pts), max(span.end, pts + duration), max(span.frame, duration))
            } else {
                spans[packet.stream] = (pts, pts + duration, duration)
            }
        }
        return spans
    }

    /// `key` of each stream (`codec_type`, `codec_name`, `start_time`,
    /// `duration`, `tags.language`) as ffprobe reports it.
    public static func streamFields(_ path: String) throws -> [[String: String]] {
        let output = try runChecked(
            "ffprobe",
            [
                "-v", "error", "-show_entries",
                "stream=index,codec_type,codec_name,start_time,duration:stream_tags=language",
                "-of", "json", path,
            ])
        let object = try JSONSerialization.jsonObject(with: output) as? [String: Any]
        let streams = object?["streams"] as? [[String: Any]] ?? []
        return streams.map { stream in
            var fields: [String: String] = [:]
            for (key, value) in stream where key != "tags" { fields[key] = "\(value)" }
            if let tags = stream["tags"] as? [String: Any], let language = tags["language"] {
                fields["language"] = "\(language)"
            }
            return fields
        }
    }

    /// Where `output`'s streams leave sync with `source`'s (empty when in
    /// sync): once the shift all streams share (the video's start) is taken
    /// out, each stream's start and end (``timeSpans(_:)``) are within one
    /// frame of the source's: 1/30 s for the video (stream 0), the longest
    /// packet for the others, plus `rounding`; the shift itself is at most
    /// `maximumShift`.
    public static func syncErrors(
        _ output: String, source: String, maximumShift: Double, rounding: Double = 0.0015
    ) throws -> [String] {
        let before = try timeSpans(source)
        let after = try timeSpans(output)
        guard let sourceVideo = before[0], let outputVideo = after[0] else { return ["no video stream 0"] }
        let shift = outputVideo.start - sourceVideo.start
        var errors: [String] = []
        if abs(shift) > maximumShift { errors.append("every stream moved by \(shift) s") }
        for (stream, span) in before.sorted(by: { $0.key < $1.key }) {
            guard let moved = after[stream] else {
                errors.append("stream \(stream) is missing")
                continue
            }
            let tolerance = (stream == 0 ? 1.0 / 30 : span.frame) + rounding
            let startError = moved.start - shift - span.start
            let endError = moved.end - shift - span.end
            if abs(startError) > tolerance { errors.append("stream \(stream) starts \(startError) s off") }
            if abs(endError) > tolerance { errors.append("stream \(stream) ends \(endError) s off") }
        }
        return errors
    }
}
