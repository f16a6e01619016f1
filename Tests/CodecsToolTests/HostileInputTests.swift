import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every command on inputs a hostile or careless user gives it: it exits
/// non-zero with one line naming the problem, never destroys its input and
/// never leaves a file that looks complete.
@Suite struct HostileInputTests {
    static var tool: String { TestPaths.codecsExecutable.path }

    /// A short H.264 Annex-B stream made by ffmpeg.
    static func stream(in directory: TemporaryDirectory, name: String = "in.h264") throws -> String {
        let path = directory.path(name)
        _ = try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25",
                "-frames:v", "10", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-g", "5", "-f", "h264", "-y", path,
            ])
        return path
    }

    static func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// The output is the input under another name (the same path, a symlink,
    /// `dir/../dir/name`): refused before anything is opened for writing.
    @Test func anOutputThatIsTheInputIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = try Self.stream(in: directory)
        let original = try #require(Self.contents(input))
        let link = directory.path("link.h264")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: input)
        let otherSpelling = directory.url.appendingPathComponent("sub/../in.h264").path
        try FileManager.default.createDirectory(atPath: directory.path("sub"), withIntermediateDirectories: true)
        for arguments in [
            ["convert", "-i", input, "-o", input], ["convert", "-i", input, "-o", link],
            ["convert", "-i", input, "-o", otherSpelling], ["decode", "-i", input, "-o", link],
        ] {
            let result = try runProcess(Self.tool, arguments)
            #expect(result.status == 1, "\(arguments)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("refusing to overwrite the input"), "\(result.stderr)")
            #expect(Self.contents(input) == original, "\(arguments) changed the input")
        }
    }

    /// 1 KB of random bytes: convert fails and leaves no output file.
    @Test(arguments: ["out.mp4", "out.h264", "out.mkv"])
    func randomBytesConvertToNothingAndFail(output: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var generator = SystemRandomNumberGenerator()
        let noise = Data((0..<1024).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let input = directory.path("noise.h264")
        try noise.write(to: URL(fileURLWithPath: input))
        let result = try runProcess(Self.tool, ["convert", "-i", input, "-o", directory.path(output)])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path(output)), "a partial \(output) was left")
    }

    /// A stream whose every sample is dropped (its keyframes removed): decode
    /// fails, naming why, instead of exiting 0 with nothing.
    @Test func decodeWithNoFrameFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = [UInt8](try #require(Self.contents(try Self.stream(in: directory))))
        // Drop every IDR slice (NAL type 5): no sample can be decoded.
        var starts: [Int] = []
        var index = 0
        while index + 3 <= bytes.count {
            if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                starts.append(index + 3)
                index += 3
            } else {
                index += 1
            }
        }
        var kept: [UInt8] = []
        for (n, start) in starts.enumerated() {
            var end = n + 1 < starts.count ? starts[n + 1] - 3 : bytes.count
            while end > start, n + 1 < starts.count, bytes[end - 1] == 0 { end -= 1 }
            if bytes[start] & 0x1F == 5 { continue }
            kept += [0, 0, 0, 1] + bytes[start..<end]
        }
        let input = directory.path("no-idr.h264")
        try Data(kept).write(to: URL(fileURLWithPath: input))
        let output = directory.path("out.y4m")
        let result = try runProcess(Self.tool, ["decode", "-i", input, "-o", output])
        #expect(result.status == 1)
        let last = result.stderr.split(separator: "\n").last ?? ""
        #expect(
            last.hasPrefix("codecs decode: ")
                && (last.contains("no frame could be decoded") || last.contains("no decodable access unit")),
            "\(result.stderr)")
        #expect(!result.stderr.contains("invalidData:"), "internal names leak: \(result.stderr)")
        #expect(result.stderr.components(separatedBy: "decoded 0 frames").count == 2, "one summary: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func inspectOfAnEmptyFileSaysSo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let empty = directory.path("empty.h264")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let result = try runProcess(Self.tool, ["inspect", empty])
        #expect(result.status == 1)
        #expect(result.stderr == "codecs inspect: \(empty): the file is empty\n")
    }

    /// A report written to a full device is a failure, not exit 0.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func writingToAFullDeviceFails() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = try Self.stream(in: directory)
        let result = try runProcess("/bin/sh", ["-c", "\"$0\" inspect \"$1\" --nals > /dev/full", Self.tool, input])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot write to standard output: No space left on device"), "\(result.stderr)")
    }

    /// A Y4M header with `F0:0` (rate unknown, as the format allows) encodes
    /// at the default 30 fps instead of failing with "expectedFrameRate -nan".
    @Test func unknownY4MFrameRateEncodesAt30fps() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = directory.path("unknown-rate.y4m")
        var bytes = Data("YUV4MPEG2 W64 H48 F0:0 Ip A1:1 C420jpeg\n".utf8)
        for _ in 0..<3 { bytes += Data("FRAME\n".utf8) + Data(repeating: 128, count: 64 * 48 * 3 / 2) }
        try bytes.write(to: URL(fileURLWithPath: input))
        let output = directory.path("out.h264")
        let result = try runProcess(Self.tool, ["encode", "-i", input, "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("nan"))
        #expect(try ffmpegFrameMD5(path: output).count == 3)
    }

    /// H.264 converted into a file named `.hevc` is refused, not written under
    /// the wrong name.
    @Test func convertRefusesACodecTheOutputNameContradicts() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = try Self.stream(in: directory)
        let output = directory.path("wrong.hevc")
        let result = try runProcess(Self.tool, ["convert", "-i", input, "-o", output])
        #expect(result.status == 1)
        #expect(result.stderr.contains("the extension names HEVC but"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// `--frame-rate` outside 1…1000 fps is a usage error at once, whichever
    /// way it is spelled.
    @Test(arguments: ["1/9223372036854775807", "0", "1001", "1/2", "30/0", "-30"])
    func convertFrameRateOutOfRangeIsAUsageError(rate: String) throws {
        let result = try runProcess(Self.tool, ["convert", "-i", "in.h264", "-o", "out.mp4", "--frame-rate", rate])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("codecs convert: --frame-rate \(rate): expected frames per second"))
    }

    /// Outputs are written under a hidden temporary name and renamed when
    /// complete: a failing command leaves an existing file as it was and no
    /// temporary file behind; a successful one leaves only the output.
    @Test func outputsAppearOnlyWhenComplete() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let noise = directory.path("noise.h264")
        try Data((0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: noise))
        let existing = directory.path("old.mp4")
        try Data("an older file".utf8).write(to: URL(fileURLWithPath: existing))
        let failed = try runProcess(Self.tool, ["convert", "-i", noise, "-o", existing])
        #expect(failed.status == 1)
        #expect(Self.contents(existing) == Data("an older file".utf8), "the old file was touched")
        let input = try Self.stream(in: directory)
        let output = directory.path("good.mp4")
        let converted = try runProcess(Self.tool, ["convert", "-i", input, "-o", output])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(try ffmpegFrameMD5(path: output).count == 10)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!names.contains { $0.contains(".partial-") }, "\(names)")
    }

    /// `inspect --json --nals` on a stream of 300 000 access unit delimiters
    /// lists every one, streamed, as valid JSON (the list is never held whole).
    @Test func inspectListsAMillionTinyNALUnitsAsValidJSON() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = directory.path("auds.h264")
        var bytes: [UInt8] = [0, 0, 0, 1, 0x67, 0x42, 0x00, 0x1E, 0x95, 0xA0, 0x50, 0x7E, 0x40]
        for _ in 0..<300_000 { bytes += [0, 0, 1, 0x09, 0xF0] }
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        let result = try runProcess(Self.tool, ["inspect", input, "--json", "--nals"])
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        let units = json?["nalUnits"] as? [[String: Any]] ?? []
        #expect(units.count == 300_001)
        #expect(units.last?["name"] as? String == "AUD")
        #expect(units.last?["offset"] as? Int == bytes.count - 5)
    }

    /// A codec that the stream's own NAL unit headers contradict (by --codec
    /// or by the file name) is named as the problem, not as a missing PPS.
    @Test func decodeNamesACodecMismatch() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = try Self.stream(in: directory)
        let mislabelled = directory.path("mislabelled.hevc")
        try FileManager.default.copyItem(atPath: input, toPath: mislabelled)
        for arguments in [["-i", input, "--codec", "hevc"], ["-i", mislabelled]] {
            let result = try runProcess(Self.tool, ["decode"] + arguments + ["-o", directory.path("out.y4m")])
            #expect(result.status == 1)
            let last = result.stderr.split(separator: "\n").last ?? ""
            #expect(last.contains("says HEVC, but the stream's NAL unit headers are H.264"), "\(result.stderr)")
            #expect(!result.stderr.contains("PPS"), "\(result.stderr)")
        }
    }

    /// A Y4M file whose last frame is cut short: the whole frames before it
    /// are encoded, and a warning says what was left out.
    @Test func aTornLastY4MFrameKeepsTheFramesBeforeIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var bytes = Data("YUV4MPEG2 W64 H48 F25:1 Ip A1:1 C420jpeg\n".utf8)
        for index in 0..<4 {
            bytes += Data("FRAME\n".utf8) + Data(repeating: UInt8(40 * index), count: 64 * 48 * 3 / 2)
        }
        bytes.removeLast(1000)
        let input = directory.path("torn.y4m")
        try bytes.write(to: URL(fileURLWithPath: input))
        let output = directory.path("out.h264")
        let result = try runProcess(Self.tool, ["encode", "-i", input, "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning: \(input): frame 3 at offset"), "\(result.stderr)")
        #expect(result.stderr.contains("the 3 whole frames before it were encoded"))
        #expect(try ffmpegFrameMD5(path: output).count == 3)
    }
}
