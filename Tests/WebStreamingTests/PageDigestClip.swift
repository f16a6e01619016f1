// A clip whose RGB pixels every limited-range YUV → RGB conversion agrees on, for the page's rgb24 digests.
import Foundation
import TestSupport
import Testing

/// An H.264 clip (320×240, 25 frames/s, 2 B-frames, tagged BT.601 limited
/// range) of 16×16 blocks in four colours chosen so that each RGB channel
/// lands well outside 0…255 before clamping: below black (Y 4), above white
/// (Y 250), blue (Y 28, U 255, V 105) and red (Y 72, U 84, V 255). Browsers
/// convert YUV to RGB with their own coefficients and rounding (of a
/// `testsrc` clip, Firefox 153's BGRX and Chromium 156's RGBX equal ffmpeg's
/// rgb24 in 0 of 150 frames under each of the BT.601/BT.709 and `-sws_flags`
/// settings tried), so only on such pixels can a browser's RGB equal ffmpeg's:
/// each channel is 0 or 255 whichever BT.601 or BT.709 coefficients, rounding
/// or ±1 coding error are used. Blue and red keep R/B swaps visible.
enum PageDigestClip {
    static let width = 320
    static let height = 240
    /// (Y, U, V) of the four block colours.
    static let colours: [(UInt8, UInt8, UInt8)] = [(4, 128, 128), (250, 128, 128), (28, 255, 105), (72, 84, 255)]

    /// Writes `frames` frames of the pattern (moving one block a frame) as H.264 to `path`.
    static func write(frames: Int, to path: String, in directory: TemporaryDirectory) throws {
        var raw = Data(capacity: frames * width * height * 3 / 2)
        let columns = width / 16, rows = height / 16
        for frame in 0..<frames {
            var y = [UInt8](repeating: 0, count: width * height)
            var u = [UInt8](repeating: 0, count: width * height / 4)
            var v = [UInt8](repeating: 0, count: width * height / 4)
            for row in 0..<rows {
                for column in 0..<columns {
                    let colour = colours[(column * 7 + row * 3 + frame + column * row) % colours.count]
                    for line in 0..<16 {
                        let start = (row * 16 + line) * width + column * 16
                        y.replaceSubrange(start..<start + 16, with: repeatElement(colour.0, count: 16))
                    }
                    for line in 0..<8 {
                        let start = (row * 8 + line) * (width / 2) + column * 8
                        u.replaceSubrange(start..<start + 8, with: repeatElement(colour.1, count: 8))
                        v.replaceSubrange(start..<start + 8, with: repeatElement(colour.2, count: 8))
                    }
                }
            }
            raw.append(contentsOf: y)
            raw.append(contentsOf: u)
            raw.append(contentsOf: v)
        }
        let rawPath = directory.path("pattern.yuv")
        try raw.write(to: URL(fileURLWithPath: rawPath))
        try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                "-s", "\(width)x\(height)", "-r", "25", "-i", rawPath, "-c:v", "libx264", "-qp", "4", "-g", "15",
                "-bf", "2", "-colorspace", "smpte170m", "-color_primaries", "smpte170m", "-color_trc", "smpte170m",
                "-color_range", "tv", path,
            ])
    }

    /// Checks, with ffmpeg's own decode and conversion, that every RGB
    /// channel of `path` is 0 or 255 and that pure red and pure blue both
    /// occur (the premise of comparing a browser's RGB with ffmpeg's).
    static func expectSaturatedRGB(_ path: String, frames: Int) throws {
        let rgb = try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-i", path, "-fps_mode", "passthrough", "-pix_fmt",
                "rgb24", "-f", "rawvideo", "-",
            ])
        #expect(rgb.count == frames * width * height * 3)
        let (saturated, red, blue) = rgb.withUnsafeBytes { bytes -> (Bool, Int, Int) in
            var saturated = true, red = 0, blue = 0
            for index in stride(from: 0, to: bytes.count - 2, by: 3) {
                let r = bytes[index], g = bytes[index + 1], b = bytes[index + 2]
                if (r != 0 && r != 255) || (g != 0 && g != 255) || (b != 0 && b != 255) { saturated = false }
                if r == 255, g == 0, b == 0 { red += 1 }
                if r == 0, g == 0, b == 255 { blue += 1 }
            }
            return (saturated, red, blue)
        }
        #expect(saturated, "ffmpeg's rgb24 of the clip has channels other than 0 and 255")
        #expect(red > 0 && blue > 0, "red \(red), blue \(blue) pixels")
    }
}
