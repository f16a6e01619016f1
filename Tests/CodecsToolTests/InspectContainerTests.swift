import Foundation
import TestSupport
import Testing

/// `codecs inspect` on MP4, QuickTime, Matroska and MPEG-TS files that
/// ffmpeg wrote, held against ffprobe and the stream's own bytes.
struct InspectContainerTests {
    struct Case: Sendable, CustomStringConvertible {
        var clip: Int
        var ext: String
        var description: String { "\(InspectCommandTests.clips[clip].name) in .\(ext)" }
    }

    static let pixelFormats: [String: (chroma: String, bitDepth: Int)] = [
        "yuv420p": ("4:2:0", 8), "yuv420p10le": ("4:2:0", 10), "yuv422p": ("4:2:2", 8),
        "yuv444p10le": ("4:4:4", 10),
    ]

    @Test(arguments: [
        Case(clip: 0, ext: "mp4"), Case(clip: 1, ext: "mkv"), Case(clip: 2, ext: "ts"), Case(clip: 3, ext: "mov"),
        Case(clip: 3, ext: "ts"), Case(clip: 4, ext: "mkv"),
    ])
    func matchesFFprobe(_ test: Case) throws {
        let clip = InspectCommandTests.clips[test.clip]
        let directory = try TemporaryDirectory()
        let path = directory.path("clip.\(test.ext)")
        try ffmpegTestPattern(
            size: "200x120", rate: 25, frames: 9, arguments: ["-pix_fmt", clip.pixelFormat] + clip.encoderArgs, to: path
        )
        // The same stream as ffmpeg's Annex-B (parameter sets from the record
        // before keyframes), the reference for the NAL units.
        let annexB = [UInt8](
            try runChecked(
                "ffmpeg",
                ["-v", "error", "-nostdin", "-i", path, "-map", "0:v:0", "-c", "copy", "-f", clip.ext, "-"]))

        let (status, json) = try InspectCommandTests.inspect([path, "--json", "--nals"])
        #expect(status == 0)
        let report = try #require(json)
        let isH264 = clip.ext == "h264"
        #expect(report["container"] as? String == (test.ext == "mov" ? "mov" : test.ext))
        #expect(report["codec"] as? String == (isH264 ? "h264" : "hevc"))
        let stream = try #require(try ffprobeStreams(path: path, countFrames: true).first)
        let packets = try ffprobePacketCounts(path: path)
        #expect(report["accessUnits"] as? Int == stream.frameCount)
        #expect(report["accessUnits"] as? Int == packets.packets)
        #expect(report["keyframes"] as? Int == packets.keyframes)
        #expect((report["keyframeSamples"] as? [Int])?.count == packets.keyframes)
        #expect((report["keyframeSamples"] as? [Int])?.first == 0)

        let descriptions = try #require(report["descriptions"] as? [[String: Any]])
        try #require(descriptions.count == 1)
        let d = descriptions[0]
        #expect(d["width"] as? Int == stream.width)
        #expect(d["height"] as? Int == stream.height)
        #expect(d["level"] as? Int == stream.level)
        let profiles = isH264 ? InspectCommandTests.profileNumbers : InspectCommandTests.hevcProfileNumbers
        #expect(d["profile"] as? Int == profiles[stream.profile ?? ""], "ffprobe profile \(stream.profile ?? "-")")
        let format = try #require(Self.pixelFormats[stream.pixelFormat ?? ""], "\(stream.pixelFormat ?? "-")")
        #expect(d["chromaFormat"] as? String == format.chroma)
        #expect(d["bitDepth"] as? Int == format.bitDepth)
        #expect(d["nalUnitHeaderLength"] as? Int == 4)

        // The parameter sets are the stream's own; MP4/MOV/MKV keep the
        // record ffmpeg wrote, byte for byte.
        let units = FFmpegReference.nalUnits(inAnnexB: annexB)
        let typeOf: ([UInt8]) -> Int = { isH264 ? Int($0[0] & 0x1F) : Int($0[0] >> 1) }
        let setTypes: Set<Int> = isH264 ? [7, 8] : [32, 33, 34]
        let hex: ([UInt8]) -> String = { $0.map { String(format: "%02x", $0) }.joined() }
        let hexes = (d["parameterSets"] as? [[String: Any]] ?? []).compactMap { $0["hex"] as? String }
        // Every parameter set of the stream is in the description, and all the
        // description holds is in the stream (ffmpeg's libx265 wrapper also puts
        // x265's prefix SEI into the hvcC, and the bitstream filter writes it
        // out before keyframes).
        let streamUnits = Set(units.map(hex))
        #expect(Set(units.filter { setTypes.contains(typeOf($0)) }.map(hex)).isSubset(of: Set(hexes)))
        #expect(Set(hexes).isSubset(of: streamUnits))
        if test.ext == "ts" {
            #expect(report["record"] is NSNull)
        } else {
            let record = try #require(report["record"] as? [String: Any])
            #expect(record["type"] as? String == (isH264 ? "avcC" : "hvcC"))
            let extradata = try Self.extradata(path)
            #expect(record["hex"] as? String == hex(extradata))
            #expect(record["size"] as? Int == extradata.count)
            #expect(record["nalUnitLengthSize"] as? Int == 4)
        }

        // --nals: the samples' NAL units are the stream's, less parameter sets
        // (and what else the record holds) and access unit delimiters, each
        // behind a 4-byte length.
        let delimiter = isH264 ? 9 : 35
        let expected = units.filter {
            !setTypes.contains(typeOf($0)) && typeOf($0) != delimiter && !hexes.contains(hex($0))
        }
        let nals = try #require(report["nalUnits"] as? [[String: Any]])
        #expect(nals.map { $0["size"] as? Int ?? -1 } == expected.map(\.count))
        #expect(nals.map { $0["type"] as? Int ?? -1 } == expected.map(typeOf))
        #expect(Set(nals.compactMap { $0["sample"] as? Int }) == Set(0..<(packets.packets)))
        var nextOffset: [Int: Int] = [:]
        for nal in nals {
            let sample = try #require(nal["sample"] as? Int)
            #expect(nal["offset"] as? Int == nextOffset[sample, default: 0], "sample \(sample)")
            nextOffset[sample] = (nal["offset"] as? Int ?? 0) + 4 + (nal["size"] as? Int ?? 0)
            #expect((nal["name"] as? String)?.isEmpty == false)
        }
    }

    /// The track's extradata (the avcC/hvcC record) as `ffprobe -show_data`
    /// dumps it: lines of `OFFSET: hhhh hhhh ...  ascii`.
    static func extradata(_ path: String) throws -> [UInt8] {
        let text = String(
            decoding: try runChecked(
                "ffprobe",
                ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=extradata", "-show_data", path]),
            as: UTF8.self)
        var bytes: [UInt8] = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 8, UInt32(parts[0], radix: 16) != nil else { continue }
            let digits = Array(
                parts[1].dropFirst().components(separatedBy: "  ")[0].replacingOccurrences(of: " ", with: ""))
            for index in stride(from: 0, to: digits.count - 1, by: 2) {
                guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else {
                    throw ProcessError("unexpected extradata line '\(line)'")
                }
                bytes.append(byte)
            }
        }
        return bytes
    }

    /// The text report names the container, the counts and the record.
    @Test func textReport() throws {
        let directory = try TemporaryDirectory()
        let clip = try EncodeCommandTests.makeClip(frames: 10, in: directory)
        let output = directory.path("ours.mp4")
        let encoded = try runProcess(
            try EncodeCommandTests.tool(),
            ["encode", "-i", clip, "-o", output, "--codec", "hevc", "--encoder", "software", "--keyint", "5"])
        #expect(encoded.status == 0, "\(encoded.stderr)")
        let result = try runProcess(TestPaths.codecsExecutable.path, ["inspect", output])
        #expect(result.status == 0, "\(result.stderr)")
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(text.hasPrefix("mp4 HEVC track 0 (hvc1): 10 samples, 2 keyframes"), "\(text)")
        #expect(text.contains("hvcC "), "\(text)")
        #expect(text.contains("keyframe samples: 0 5"), "\(text)")
    }

    @Test func fileWithoutVideoOrUnreadable() throws {
        let directory = try TemporaryDirectory()
        let audio = directory.path("audio.mp4")
        try runChecked(
            "ffmpeg", ["-v", "error", "-nostdin", "-f", "lavfi", "-i", "sine=duration=0.2", "-c:a", "aac", audio])
        let result = try runProcess(TestPaths.codecsExecutable.path, ["inspect", audio, "--json"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no H.264 or HEVC video track"), "\(result.stderr)")
        #expect(result.stderr.contains("track 0: audio aac"), "\(result.stderr)")
        let missing = try runProcess(TestPaths.codecsExecutable.path, ["inspect", directory.path("none.mkv")])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("codecs inspect: "), "\(missing.stderr)")
    }

    /// An MP4 from FFmpeg's x265 with `mdcv`/`clli` boxes put into its
    /// sample entry by hand: `inspect --json` reports the values ffprobe
    /// reads as stream side data (each fraction's value), and a file without
    /// the boxes reports null.
    @Test func reportsTheContainersHDR10Metadata() throws {
        let directory = try TemporaryDirectory()
        let plain = directory.path("plain.mp4")
        try ffmpegTestPattern(
            size: "200x120", rate: 25, frames: 3,
            arguments: [
                "-pix_fmt", "yuv420p10le", "-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error",
            ],
            to: plain)
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        let patched = try #require(isoAppendingToSampleEntry("hvc1", isoP3HDR10Boxes, in: original))
        let path = directory.path("hdr.mp4")
        try Data(patched).write(to: URL(fileURLWithPath: path))

        let probe = try JSONSerialization.jsonObject(
            with: try runChecked(
                "ffprobe",
                ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream_side_data", "-of", "json", path]))
        let streams = try #require((probe as? [String: Any])?["streams"] as? [[String: Any]])
        let sideData = try #require(streams.first?["side_data_list"] as? [[String: Any]])
        let display = try #require(sideData.first { $0["side_data_type"] as? String == "Mastering display metadata" })
        let light = try #require(sideData.first { $0["side_data_type"] as? String == "Content light level metadata" })
        func fraction(_ key: String) throws -> Double {
            let parts = try #require((display[key] as? String)?.split(separator: "/").compactMap { Double($0) })
            try #require(parts.count == 2)
            return parts[0] / parts[1]
        }

        let (status, json) = try InspectCommandTests.inspect([path, "--json"])
        #expect(status == 0)
        let descriptions = try #require(json?["descriptions"] as? [[String: Any]])
        let hdr10 = try #require(descriptions.first?["hdr10"] as? [String: Any], "\(descriptions)")
        let mastering = try #require(hdr10["masteringDisplay"] as? [String: Any])
        for (name, key) in [("red", "red"), ("green", "green"), ("blue", "blue"), ("whitePoint", "white_point")] {
            let point = try #require(mastering[name] as? [String: Double], "\(name)")
            let (x, y) = (try fraction(key + "_x"), try fraction(key + "_y"))
            #expect(point["x"] == x && point["y"] == y, "\(name)")
        }
        let (maxLuminance, minLuminance) = (try fraction("max_luminance"), try fraction("min_luminance"))
        #expect(mastering["maxLuminance"] as? Double == maxLuminance)
        #expect(mastering["minLuminance"] as? Double == minLuminance)
        let content = try #require(hdr10["contentLightLevel"] as? [String: Int])
        #expect(content["maxCLL"] == light["max_content"] as? Int)
        #expect(content["maxFALL"] == light["max_average"] as? Int)
        #expect(content["maxCLL"] == 1000)

        let (_, plainJSON) = try InspectCommandTests.inspect([plain, "--json"])
        let plainDescription = try #require((plainJSON?["descriptions"] as? [[String: Any]])?.first)
        #expect(plainDescription["hdr10"] is NSNull)
    }
}
