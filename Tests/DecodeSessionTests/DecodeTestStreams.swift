import DecodeSession
import FormatConv
import Foundation
import MediaCore
import TestSupport

/// Streams for the decode tests, made with the ffmpeg CLI (libx264/libx265)
/// at test time, and the helpers that turn them into samples.
enum TestStreams {
    /// Encodes `frames` frames of ffmpeg's `testsrc2` pattern to an Annex-B
    /// file with the given encoder arguments; returns its path.
    static func make(
        _ name: String, in directory: TemporaryDirectory, codec: CodecType, width: Int = 320, height: Int = 240,
        frames: Int = 30, pixelFormat: String = "yuv420p", encoderArgs: [String] = []
    ) throws -> String {
        let path = directory.path(name + (codec == .h264 ? ".h264" : ".hevc"))
        let encoder = codec == .h264 ? ["-c:v", "libx264"] : ["-c:v", "libx265", "-x265-params", "log-level=error"]
        _ = try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                "testsrc2=size=\(width)x\(height):rate=30", "-frames:v", "\(frames)", "-pix_fmt", pixelFormat,
            ]
                + encoder + encoderArgs + ["-f", codec == .h264 ? "h264" : "hevc", path])
        return path
    }

    /// The samples of an Annex-B file, through FormatConv's assembler.
    static func samples(ofFile path: String, codec: CodecType) throws -> [CompressedSample] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return samples(ofAnnexB: bytes, codec: codec)
    }

    static func samples(ofAnnexB bytes: [UInt8], codec: CodecType) -> [CompressedSample] {
        var assembler = AccessUnitAssembler(codec: codec)
        var outputs = assembler.append(bytes)
        outputs += assembler.finish()
        return outputs.compactMap { output in
            if case .sample(let sample) = output { return sample }
            return nil
        }
    }

    /// ffmpeg's per-frame MD5s of a file, every decoded frame kept.
    static func ffmpegMD5s(_ path: String, pixelFormat: String) throws -> [String] {
        try ffmpegFrameMD5(path: path, outputArgs: ["-fps_mode", "passthrough", "-pix_fmt", pixelFormat])
    }
}

/// Decodes every sample and drains the session.
func decodeAll(_ session: DecompressionSession, _ samples: [CompressedSample]) throws -> [DecodedFrame] {
    var frames: [DecodedFrame] = []
    for sample in samples { frames += try session.decode(sample, userValue: sample.pts) }
    frames += try session.finish()
    return frames
}

/// The MD5 of a picture's packed planes, as hex (what `framemd5` prints).
func md5Hex(_ buffer: PixelBuffer) -> String {
    MD5.hex(buffer.packedBytes())
}

/// MD5 (RFC 1321), for comparing decoded pictures with `ffmpeg -f framemd5`.
enum MD5 {
    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]
    // RFC 1321 3.4: T[i] = floor(2^32 × |sin(i + 1)|).
    private static let table: [UInt32] = (0..<64).map {
        UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296))
    }

    static func hex(_ message: [UInt8]) -> String {
        var a0: UInt32 = 0x6745_2301
        var b0: UInt32 = 0xefcd_ab89
        var c0: UInt32 = 0x98ba_dcfe
        var d0: UInt32 = 0x1032_5476
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) * 8
        for i in 0..<8 { padded.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))) }
        var words = [UInt32](repeating: 0, count: 16)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let o = chunk + 4 * i
                words[i] =
                    UInt32(padded[o]) | UInt32(padded[o + 1]) << 8 | UInt32(padded[o + 2]) << 16
                    | UInt32(padded[o + 3]) << 24
            }
            var (a, b, c, d) = (a0, b0, c0, d0)
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16:
                    f = (b & c) | (~b & d)
                    g = i
                case 16..<32:
                    f = (d & b) | (~d & c)
                    g = (5 * i + 1) % 16
                case 32..<48:
                    f = b ^ c ^ d
                    g = (3 * i + 5) % 16
                default:
                    f = c ^ (b | ~d)
                    g = (7 * i) % 16
                }
                f = f &+ a &+ table[i] &+ words[g]
                a = d
                d = c
                c = b
                b = b &+ (f << shifts[i] | f >> (32 - shifts[i]))
            }
            a0 = a0 &+ a
            b0 = b0 &+ b
            c0 = c0 &+ c
            d0 = d0 &+ d
        }
        var digest = ""
        for word in [a0, b0, c0, d0] {
            for i in 0..<4 {
                let byte = UInt8(truncatingIfNeeded: word >> (8 * UInt32(i)))
                digest += String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
            }
        }
        return digest
    }
}
