import Foundation

/// Streams made at test time with the ffmpeg CLI, and the facts ffprobe and
/// FFmpeg's MP4 writer report about them — the reference the FormatConv parsers
/// are held against.
public enum FFmpegReference {
    /// What ffprobe `-show_streams -of json` says about the first video stream.
    public struct ProbedVideo: Sendable {
        /// `h264` or `hevc`.
        public var codecName: String
        /// The profile as ffprobe names it (`High`, `Main 10`); empty when missing.
        public var profileName: String
        /// The level as ffprobe prints it (H.264: 31 for 3.1; HEVC: 30 × the level).
        public var level: Int
        /// The display width in pixels.
        public var width: Int
        /// The display height in pixels.
        public var height: Int
        /// The coded width in pixels, as ffprobe reports it (`coded_width`).
        public var codedWidth: Int
        /// The coded height in pixels, as ffprobe reports it (`coded_height`).
        public var codedHeight: Int
        /// FFmpeg's pixel format name (`yuv420p`, `yuv420p10le`).
        public var pixelFormat: String
    }

    /// An encoded clip: its Annex-B elementary stream and the configuration
    /// record FFmpeg's MP4 muxer wrote for it.
    public struct Clip: Sendable {
        /// The clip as an Annex-B elementary stream, parameter sets in band.
        public var annexB: [UInt8]
        /// The avcC or hvcC record FFmpeg's MP4 muxer wrote for the clip.
        public var mp4Record: [UInt8]
        /// What ffprobe says about the clip's video stream.
        public var probe: ProbedVideo
    }

    /// A reference clip that could not be made or read.
    public struct Failure: Error, CustomStringConvertible {
        /// What could not be made or read, in words.
        public var description: String
    }

    /// True when both `ffmpeg` and `ffprobe` are on the PATH.
    public static var isAvailable: Bool {
        ["ffmpeg", "ffprobe"].allSatisfy { findExecutable($0) != nil }
    }

    /// Encodes `frames` frames of `testsrc2` at `width`×`height` with the given
    /// encoder arguments (for example `["-c:v", "libx264", "-profile:v", "high"]`)
    /// into a raw Annex-B stream (`ext` "h264" or "hevc"), remuxes it into MP4
    /// with `-c copy` (plus `mp4Args`, e.g. `["-tag:v", "hvc1"]`), and returns
    /// the stream, the MP4's `avcC`/`hvcC` payload and ffprobe's view of it.
    public static func makeClip(
        width: Int, height: Int, frames: Int = 3, pixelFormat: String, encoderArgs: [String], ext: String,
        mp4Args: [String] = []
    ) throws -> Clip {
        let directory = try TemporaryDirectory(prefix: "formatconv")
        let raw = directory.path("clip.\(ext)")
        let mp4 = directory.path("clip.mp4")
        try ffmpegTestPattern(
            size: "\(width)x\(height)", rate: 25, frames: frames, arguments: ["-pix_fmt", pixelFormat] + encoderArgs,
            to: raw)
        try runChecked(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", raw, "-c", "copy"] + mp4Args + ["-y", mp4])
        let json = try runChecked(
            "ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_streams", "-of", "json", raw])
        let annexB = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let mp4Bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: mp4)))
        let boxType = ext == "h264" ? "avcC" : "hvcC"
        guard let record = isoBoxPayload(boxType, in: mp4Bytes)?.payload else {
            throw Failure(description: "no \(boxType) box in the MP4 ffmpeg wrote")
        }
        return Clip(annexB: annexB, mp4Record: record, probe: try parseProbe(json))
    }

    /// The NAL units of an Annex-B stream (start codes and trailing zero bytes
    /// removed); a plain scanner for tests, independent of FormatConv's own.
    public static func nalUnits(inAnnexB bytes: [UInt8]) -> [[UInt8]] {
        var starts: [(codeStart: Int, payload: Int)] = []
        var index = 0
        while index + 2 < bytes.count {
            if bytes[index] == 0 && bytes[index + 1] == 0 && bytes[index + 2] == 1 {
                starts.append((index, index + 3))
                index += 3
            } else {
                index += 1
            }
        }
        var units: [[UInt8]] = []
        for (position, start) in starts.enumerated() {
            var end = position + 1 < starts.count ? starts[position + 1].codeStart : bytes.count
            while end > start.payload && bytes[end - 1] == 0 { end -= 1 }
            units.append(Array(bytes[start.payload..<end]))
        }
        return units
    }

    private static func parseProbe(_ data: Data) throws -> ProbedVideo {
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let streams = root["streams"] as? [[String: Any]], let stream = streams.first
        else { throw Failure(description: "ffprobe printed no stream") }
        func int(_ key: String) -> Int { (stream[key] as? Int) ?? -1 }
        return ProbedVideo(
            codecName: stream["codec_name"] as? String ?? "", profileName: stream["profile"] as? String ?? "",
            level: int("level"), width: int("width"), height: int("height"), codedWidth: int("coded_width"),
            codedHeight: int("coded_height"), pixelFormat: stream["pix_fmt"] as? String ?? "")
    }
}
