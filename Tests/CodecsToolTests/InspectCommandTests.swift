import Foundation
import TestSupport
import Testing

/// `codecs inspect` held against ffprobe on streams made at test time.
struct InspectCommandTests {
    struct Clip: Sendable, CustomStringConvertible {
        var name: String
        var ext: String
        var pixelFormat: String
        var encoderArgs: [String]
        var chromaFormat: String
        var bitDepth: Int
        var description: String { name }
    }

    static let clips: [Clip] = [
        Clip(
            name: "H.264 High 4:2:0", ext: "h264", pixelFormat: "yuv420p",
            encoderArgs: ["-c:v", "libx264", "-profile:v", "high", "-g", "4"], chromaFormat: "4:2:0", bitDepth: 8),
        Clip(
            name: "H.264 High 10", ext: "h264", pixelFormat: "yuv420p10le", encoderArgs: ["-c:v", "libx264"],
            chromaFormat: "4:2:0", bitDepth: 10),
        Clip(
            name: "H.264 High 4:2:2, cropped", ext: "h264", pixelFormat: "yuv422p", encoderArgs: ["-c:v", "libx264"],
            chromaFormat: "4:2:2", bitDepth: 8),
        Clip(
            name: "HEVC Main", ext: "hevc", pixelFormat: "yuv420p",
            encoderArgs: ["-c:v", "libx265", "-x265-params", "log-level=error:keyint=4"], chromaFormat: "4:2:0",
            bitDepth: 8),
        Clip(
            name: "HEVC Main 4:4:4 10", ext: "hevc", pixelFormat: "yuv444p10le",
            encoderArgs: ["-c:v", "libx265", "-x265-params", "log-level=error"], chromaFormat: "4:4:4", bitDepth: 10),
    ]

    static let profileNumbers: [String: Int] = [
        "Baseline": 66, "Constrained Baseline": 66, "Main": 77, "High": 100, "High 10": 110, "High 4:2:2": 122,
        "High 4:4:4 Predictive": 244,
    ]
    static let hevcProfileNumbers: [String: Int] = ["Main": 1, "Main 10": 2, "Main Still Picture": 3, "Rext": 4]

    static func inspect(_ arguments: [String], stdin: Data? = nil) throws -> (status: Int32, json: [String: Any]?) {
        let result = try runProcess(TestPaths.codecsExecutable.path, ["inspect"] + arguments, stdin: stdin)
        let json = try? JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        return (result.status, json)
    }

    @Test(arguments: clips)
    func matchesFFprobe(_ clip: Clip) throws {
        let made = try FFmpegReference.makeClip(
            width: 200, height: 120, frames: 9, pixelFormat: clip.pixelFormat, encoderArgs: clip.encoderArgs,
            ext: clip.ext)
        let directory = try TemporaryDirectory()
        let path = directory.path("clip.\(clip.ext)")
        try Data(made.annexB).write(to: URL(fileURLWithPath: path))
        let (status, json) = try Self.inspect([path, "--json", "--nals"])
        #expect(status == 0)
        let report = try #require(json)
        #expect(report["container"] as? String == "annexb")
        #expect(report["codec"] as? String == (clip.ext == "h264" ? "h264" : "hevc"))
        let packets = try ffprobePacketCounts(path: path)
        #expect(report["accessUnits"] as? Int == packets.packets)
        #expect(report["keyframes"] as? Int == packets.keyframes)
        let descriptions = try #require(report["descriptions"] as? [[String: Any]])
        try #require(descriptions.count == 1)
        let d = descriptions[0]
        let probe = made.probe
        #expect(d["width"] as? Int == probe.width)
        #expect(d["height"] as? Int == probe.height)
        if clip.ext == "h264" {
            // H.264 codes whole macroblocks; ffprobe reports the cropped size as
            // its coded size for H.264, so the macroblock grid is checked instead.
            #expect(d["codedWidth"] as? Int == (probe.width + 15) / 16 * 16)
            #expect(d["codedHeight"] as? Int == (probe.height + 15) / 16 * 16)
        } else {
            #expect(d["codedWidth"] as? Int == probe.codedWidth)
            #expect(d["codedHeight"] as? Int == probe.codedHeight)
        }
        #expect(d["level"] as? Int == probe.level)
        let profiles = clip.ext == "h264" ? Self.profileNumbers : Self.hevcProfileNumbers
        #expect(d["profile"] as? Int == profiles[probe.profileName], "ffprobe profile \(probe.profileName)")
        #expect(d["chromaFormat"] as? String == clip.chromaFormat)
        #expect(d["bitDepth"] as? Int == clip.bitDepth)
        #expect(d["nalUnitHeaderLength"] as? Int == 4)
        #expect((d["tier"] as? Int) == (clip.ext == "hevc" ? 0 : nil))
        // The parameter sets are the stream's own, byte for byte.
        let units = FFmpegReference.nalUnits(inAnnexB: made.annexB)
        let setTypes: Set<Int> = clip.ext == "h264" ? [7, 8] : [32, 33, 34]
        let streamSets = units.filter { setTypes.contains(clip.ext == "h264" ? Int($0[0] & 0x1F) : Int($0[0] >> 1)) }
        let hexes = (d["parameterSets"] as? [[String: Any]] ?? []).compactMap { $0["hex"] as? String }
        #expect(Set(hexes) == Set(streamSets.map { $0.map { String(format: "%02x", $0) }.joined() }))
        // The RFC 6381 codec string: H.264's is the SPS's bytes 1…3 in hex;
        // HEVC's starts with the profile and ends its fixed fields with the
        // Main-tier level (the FormatConv tests check every field).
        let codecString = try #require(d["codecString"] as? String)
        if clip.ext == "h264" {
            let spsHex = try #require(hexes.first { $0.hasPrefix("67") })
            #expect(codecString == "avc1." + spsHex.dropFirst(2).prefix(6))
        } else {
            let fields = codecString.split(separator: ".")
            #expect(fields.count >= 4)
            #expect(fields.first == "hvc1")
            #expect(fields.dropFirst().first.flatMap { Int($0) } == d["profile"] as? Int)
            #expect(fields.dropFirst(3).first == "L\(d["level"] as? Int ?? -1)")
        }
        let text = try runProcess(TestPaths.codecsExecutable.path, ["inspect", path])
        #expect(String(decoding: text.stdout, as: UTF8.self).contains("\n  codec string: \(codecString)\n"))
        // --nals lists every NAL unit with its start-code offset and size.
        let nals = try #require(report["nalUnits"] as? [[String: Any]])
        #expect(nals.count == units.count)
        #expect(nals.map { $0["size"] as? Int ?? -1 } == units.map(\.count))
        for nal in nals {
            let offset = try #require(nal["offset"] as? Int)
            let size = try #require(nal["size"] as? Int)
            let code = made.annexB[offset..<(offset + 3)] == [0, 0, 1] ? 3 : 4
            #expect(Array(made.annexB[(offset + code)..<(offset + code + size)]).count == size)
            if clip.ext == "hevc" {
                #expect(nal["layerId"] as? Int == 0)
                #expect(nal["temporalId"] != nil)
            }
        }
    }

    /// Standard input, and a file whose extension says nothing (the codec is
    /// guessed from the NAL unit headers).
    @Test(arguments: ["h264", "hevc"])
    func stdinAndSniffing(_ codec: String) throws {
        let made = try FFmpegReference.makeClip(
            width: 64, height: 64, frames: 3, pixelFormat: "yuv420p",
            encoderArgs: codec == "h264"
                ? ["-c:v", "libx264"] : ["-c:v", "libx265", "-x265-params", "log-level=error"],
            ext: codec)
        let viaStdin = try Self.inspect(["-", "--json"], stdin: Data(made.annexB))
        #expect(viaStdin.status == 0)
        #expect(viaStdin.json?["codec"] as? String == codec)
        #expect(viaStdin.json?["accessUnits"] as? Int == 3)
        let directory = try TemporaryDirectory()
        let path = directory.path("stream.bin")
        try Data(made.annexB).write(to: URL(fileURLWithPath: path))
        let sniffed = try Self.inspect([path, "--json"])
        #expect(sniffed.json?["codec"] as? String == codec)
        let text = try runProcess(TestPaths.codecsExecutable.path, ["inspect", path])
        #expect(text.status == 0)
        #expect(String(decoding: text.stdout, as: UTF8.self).contains("3 access units"))
    }

    @Test func errors() throws {
        #expect(try Self.inspect([]).status == 2)
        #expect(try Self.inspect(["--bogus", "x.h264"]).status == 2)
        #expect(try Self.inspect(["/nonexistent/file.h264"]).status == 1)
        #expect(try Self.inspect(["-", "--json"], stdin: Data([1, 2, 3, 4])).status == 1)
    }
}
