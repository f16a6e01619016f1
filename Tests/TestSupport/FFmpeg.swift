import Foundation
import MediaCore

/// The per-frame MD5 strings `ffmpeg -f framemd5` prints for the first video
/// stream of `path`, in output order.
///
/// `extraInputArgs` go before `-i` (for instance `["-f", "h264"]` for a raw
/// stream); `outputArgs` after it (for instance `["-vf", "crop=64:48"]`).
/// `everyFrame` keeps every decoded frame (`-fps_mode passthrough`: no
/// frame-rate conversion); `pixelFormat` converts the frames before hashing
/// (`-pix_fmt`). Lines look like `0, 0, 0, 1, 115200, 5f4d…` (stream, dts,
/// pts, duration, size, hash); comment lines start with `#`.
public func ffmpegFrameMD5(
    path: String, extraInputArgs: [String] = [], everyFrame: Bool = false, pixelFormat: String? = nil,
    outputArgs: [String] = []
) throws -> [String] {
    let frameArgs = everyFrame ? ["-fps_mode", "passthrough"] : []
    let formatArgs = pixelFormat.map { ["-pix_fmt", $0] } ?? []
    let arguments =
        ["-hide_banner", "-loglevel", "error", "-nostdin"] + extraInputArgs + ["-i", path, "-map", "0:v:0"]
        + frameArgs + formatArgs + outputArgs + ["-f", "framemd5", "-"]
    let output = try runChecked("ffmpeg", arguments)
    return parseFrameMD5(String(decoding: output, as: UTF8.self))
}

/// The hash column of `framemd5` text.
public func parseFrameMD5(_ text: String) -> [String] {
    text.split(separator: "\n").compactMap { line in
        guard !line.hasPrefix("#") else { return nil }
        let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard fields.count >= 6, let hash = fields.last, hash.count == 32 else { return nil }
        return hash
    }
}

/// One stream as `ffprobe -show_streams` reports it: the fields tests use,
/// decoded from its JSON.
public struct ProbedStream: Decodable, Sendable {
    /// The stream's index in the file (`index`).
    public var index: Int
    /// FFmpeg's short name of the codec (`codec_name`: `h264`, `hevc`, `aac`).
    public var codecName: String?
    /// `video`, `audio`, `subtitle` or `data` (`codec_type`).
    public var codecType: String?
    /// The codec profile as ffprobe names it (`High`, `Main 10`).
    public var profile: String?
    /// The picture width in pixels; nil for streams without pictures.
    public var width: Int?
    /// The picture height in pixels; nil for streams without pictures.
    public var height: Int?
    /// FFmpeg's pixel format name (`pix_fmt`: `yuv420p`, `nv12`).
    public var pixelFormat: String?
    /// The codec level as ffprobe prints it (H.264: 31 for 3.1; HEVC: 30 × the level).
    public var level: Int?
    /// Frames ffprobe read (`nb_read_frames`, present with `-count_frames`).
    public var frameCount: Int?
    /// The average frame rate as a fraction (`avg_frame_rate`: `30/1`, `0/0` when unknown).
    public var averageFrameRate: String?

    enum CodingKeys: String, CodingKey {
        case index
        case codecName = "codec_name"
        case codecType = "codec_type"
        case profile, width, height
        case pixelFormat = "pix_fmt"
        case level
        case frameCount = "nb_read_frames"
        case averageFrameRate = "avg_frame_rate"
    }

    /// Decodes one entry of ffprobe's `streams` array; counts printed as strings are read as numbers.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        index = try container.decode(Int.self, forKey: .index)
        codecName = try container.decodeIfPresent(String.self, forKey: .codecName)
        codecType = try container.decodeIfPresent(String.self, forKey: .codecType)
        profile = try container.decodeIfPresent(String.self, forKey: .profile)
        width = try container.decodeIfPresent(Int.self, forKey: .width)
        height = try container.decodeIfPresent(Int.self, forKey: .height)
        pixelFormat = try container.decodeIfPresent(String.self, forKey: .pixelFormat)
        level = try container.decodeIfPresent(Int.self, forKey: .level)
        // ffprobe prints counts as JSON strings.
        frameCount = try container.decodeIfPresent(String.self, forKey: .frameCount).flatMap { Int($0) }
        averageFrameRate = try container.decodeIfPresent(String.self, forKey: .averageFrameRate)
    }
}

/// The streams of `path` as ffprobe sees them; `countFrames` decodes the file
/// to fill ``ProbedStream/frameCount``.
public func ffprobeStreams(path: String, extraInputArgs: [String] = [], countFrames: Bool = false) throws
    -> [ProbedStream]
{
    struct Output: Decodable { var streams: [ProbedStream] }
    let arguments =
        ["-v", "error", "-print_format", "json", "-show_streams"] + (countFrames ? ["-count_frames"] : [])
        + extraInputArgs + [path]
    let output = try runChecked("ffprobe", arguments)
    return try JSONDecoder().decode(Output.self, from: output).streams
}

/// The same streams as untyped JSON objects, for fields ``ProbedStream`` lacks.
public func ffprobeStreamDictionaries(path: String, extraInputArgs: [String] = []) throws -> [[String: Any]] {
    let output = try runChecked(
        "ffprobe", ["-v", "error", "-print_format", "json", "-show_streams"] + extraInputArgs + [path])
    let object = try JSONSerialization.jsonObject(with: output) as? [String: Any]
    return object?["streams"] as? [[String: Any]] ?? []
}

/// Decodes `path` with ffmpeg to raw planar 4:2:0 frames (`pixelFormat`
/// `yuv420p` or `yuv420p10le`) and returns each frame's packed bytes.
public func ffmpegDecodeRaw(
    path: String, width: Int, height: Int, pixelFormat: String = "yuv420p", extraInputArgs: [String] = []
) throws -> [Data] {
    let output = try runChecked(
        "ffmpeg",
        ["-hide_banner", "-loglevel", "error", "-nostdin"] + extraInputArgs + [
            "-i", path, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", pixelFormat, "-",
        ])
    let sampleBytes = pixelFormat.hasSuffix("le") ? 2 : 1
    let frameSize = (width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)) * sampleBytes
    guard frameSize > 0, output.count % frameSize == 0 else {
        throw ProcessError("ffmpeg produced \(output.count) bytes, not a multiple of the frame size \(frameSize)")
    }
    return stride(from: 0, to: output.count, by: frameSize).map { output.subdata(in: $0..<($0 + frameSize)) }
}

/// How many packets the first video stream of `path` has, and how many of
/// them are keyframes (flag `K`), as ffprobe's parser splits the stream.
public func ffprobePacketCounts(path: String) throws -> (packets: Int, keyframes: Int) {
    let output = try runChecked(
        "ffprobe", ["-v", "error", "-show_entries", "packet=flags", "-of", "csv=p=0", path])
    let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
    return (lines.count, lines.filter { $0.hasPrefix("K") }.count)
}

/// ffprobe's `key_frame` flag and `pict_type` (`I`, `P`, `B`) of each decoded
/// frame of `path`, in presentation order.
public func ffprobeFrameTypes(path: String) throws -> [(key: Bool, type: String)] {
    let text = String(
        decoding: try runChecked(
            "ffprobe",
            ["-v", "error", "-show_frames", "-show_entries", "frame=key_frame,pict_type", "-of", "csv=p=0", path]),
        as: UTF8.self)
    return text.split(separator: "\n").map { line in
        let fields = line.split(separator: ",").map(String.init)
        return (fields.first == "1", fields.count > 1 ? fields[1] : "")
    }
}

/// Runs ffmpeg on its `testsrc2` test pattern (`size` as `WxH`, `rate` frames
/// per second), `frames` frames of it, with `arguments` (pixel format,
/// encoder, muxer options) before the output `path`, which is replaced.
public func ffmpegTestPattern(size: String, rate: Int = 30, frames: Int, arguments: [String] = [], to path: String)
    throws
{
    try runChecked(
        "ffmpeg",
        [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
            "testsrc2=size=\(size):rate=\(rate)", "-frames:v", "\(frames)",
        ] + arguments + [path])
}

/// Decodes (or converts) the first video stream of `path` with ffmpeg into
/// frames of `format` (`-pix_fmt` with FFmpeg's name for it) of
/// `width × height`; `outputArgs` go before the output (`-sws_flags …`).
public func ffmpegFrames(
    path: String, format: PixelFormat, width: Int, height: Int, extraInputArgs: [String] = [],
    outputArgs: [String] = []
) throws -> [PixelBuffer] {
    let output = try runChecked(
        "ffmpeg",
        ["-hide_banner", "-loglevel", "error", "-nostdin"] + extraInputArgs + ["-i", path, "-map", "0:v:0"]
            + outputArgs + ["-f", "rawvideo", "-pix_fmt", format.ffmpegName, "-"])
    let frameSize = (0..<format.planeCount).reduce(0) { total, plane in
        let g = format.planeGeometry(plane, width: width, height: height)
        return total + g.rowBytes * g.height
    }
    guard output.count % frameSize == 0 else {
        throw ProcessError(
            "ffmpeg produced \(output.count) bytes, not a multiple of the \(format) frame size \(frameSize)")
    }
    return try stride(from: 0, to: output.count, by: frameSize).map { start in
        let buffer = try PixelBuffer(width: width, height: height, format: format)
        try buffer.copyPacked(from: output.subdata(in: start..<(start + frameSize)))
        return buffer
    }
}

/// The first line of a file (a Y4M stream header), without its newline.
public func firstLine(ofFile path: String) throws -> String {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let end = data.firstIndex(of: 0x0A) ?? data.endIndex
    return String(decoding: data[data.startIndex..<end], as: UTF8.self)
}
