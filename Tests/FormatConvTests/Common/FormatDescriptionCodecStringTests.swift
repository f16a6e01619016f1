import FormatConv
import Foundation
import TestSupport
import Testing

/// RFC 6381 codec strings against FFmpeg: H.264 strings equal the `CODECS`
/// attribute of FFmpeg's HLS master playlist; HEVC strings are checked field
/// by field against what `-bsf:v trace_headers` reads from the SPS.
struct FormatDescriptionCodecStringTests {
    /// An x264 profile and the pixel format it needs.
    struct H264Case: Sendable, CustomStringConvertible {
        var profile: String
        var pixelFormat: String
        var description: String { profile }
    }

    static let h264Cases = [
        H264Case(profile: "baseline", pixelFormat: "yuv420p"),
        H264Case(profile: "main", pixelFormat: "yuv420p"),
        H264Case(profile: "high", pixelFormat: "yuv420p"),
        H264Case(profile: "high10", pixelFormat: "yuv420p10le"),
        H264Case(profile: "high422", pixelFormat: "yuv422p"),
        H264Case(profile: "high444", pixelFormat: "yuv444p"),
    ]

    /// The description of the first access unit of an Annex-B file.
    static func description(path: String, codec: CodecType) throws -> FormatDescription {
        let stream = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        return try #require(samples(assemble(stream, codec: codec)).first?.formatDescription)
    }

    /// The `CODECS` attribute of the only `EXT-X-STREAM-INF` in a master playlist.
    static func hlsCodecs(masterPlaylist path: String) throws -> String? {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let range = text.range(of: "CODECS=\"") else { return nil }
        let rest = text[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    @Test(arguments: h264Cases)
    func h264EqualsFFmpegHLSCodecsAttribute(_ c: H264Case) throws {
        let directory = try TemporaryDirectory()
        // hlsenc writes STREAM-INF (and CODECS) only when it knows a bit rate.
        try ffmpegTestPattern(
            size: "176x144", rate: 25, frames: 10,
            arguments: [
                "-c:v", "libx264", "-b:v", "300k", "-profile:v", c.profile, "-pix_fmt", c.pixelFormat, "-f", "hls",
                "-master_pl_name", "master.m3u8", "-hls_segment_filename", directory.path("segment%d.ts"),
            ], to: directory.path("media.m3u8"))
        let codecs = try #require(try Self.hlsCodecs(masterPlaylist: directory.path("master.m3u8")))
        // The elementary stream of the same segment, copied out.
        let stream = directory.path("stream.h264")
        try runChecked(
            "ffmpeg",
            ["-loglevel", "error", "-nostdin", "-i", directory.path("segment0.ts"), "-c", "copy", "-f", "h264", stream])
        let description = try Self.description(path: stream, codec: .h264)
        #expect(description.codecString == codecs)
        #expect(description.codecString(parameterSetsInBand: true) == "avc3" + codecs.dropFirst(4))
    }

    /// The profile_tier_level() of the first SPS as `trace_headers` prints it:
    /// each syntax element's value, and the 80 bits from
    /// `general_profile_compatibility_flag[0]` to just before `general_level_idc`.
    struct TracedProfileTierLevel {
        var values: [String: Int] = [:]
        var flagBits = ""
    }

    static func traceSPSProfileTierLevel(path: String) throws -> TracedProfileTierLevel {
        let result = try runProcess(
            "ffmpeg",
            ["-hide_banner", "-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        var traced = TracedProfileTierLevel()
        var inSPS = false
        var inFlags = false
        for line in result.stderr.split(separator: "\n") where line.contains("[trace_headers") {
            guard let close = line.firstIndex(of: "]") else { continue }
            let body = line[line.index(after: close)...].trimmingCharacters(in: .whitespaces)
            if body == "Sequence Parameter Set" {
                if !traced.values.isEmpty { break }
                inSPS = true
                continue
            }
            guard inSPS else { continue }
            // "<bit position> <name> <bits> = <value>"
            let fields = body.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, let value = Int(fields[fields.count - 1]) else { continue }
            let name = String(fields[1])
            if name == "general_level_idc" {
                traced.values[name] = value
                break
            }
            if name.hasPrefix("general_profile_compatibility_flag") { inFlags = true }
            if inFlags { traced.flagBits += fields[2] }
            traced.values[name] = value
        }
        return traced
    }

    /// An x265 stream by its ffmpeg pixel format.
    struct HEVCCase: Sendable, CustomStringConvertible {
        var name: String
        var pixelFormat: String
        var profileIdc: Int
        var description: String { name }
    }

    static let hevcCases = [
        HEVCCase(name: "Main", pixelFormat: "yuv420p", profileIdc: 1),
        HEVCCase(name: "Main 10", pixelFormat: "yuv420p10le", profileIdc: 2),
        HEVCCase(name: "Main 4:2:2 10", pixelFormat: "yuv422p10le", profileIdc: 4),
        HEVCCase(name: "Monochrome", pixelFormat: "gray", profileIdc: 4),
        HEVCCase(name: "Main 4:4:4", pixelFormat: "yuv444p", profileIdc: 4),
    ]

    @Test(arguments: hevcCases)
    func hevcFieldsEqualTraceHeaders(_ c: HEVCCase) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("stream.hevc")
        try ffmpegTestPattern(
            size: "176x144", rate: 25, frames: 3,
            arguments: ["-c:v", "libx265", "-pix_fmt", c.pixelFormat, "-x265-params", "log-level=error", "-f", "hevc"],
            to: path)
        let description = try Self.description(path: path, codec: .hevc)
        let traced = try Self.traceSPSProfileTierLevel(path: path)
        let string = description.codecString
        let fields = string.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(fields.count >= 4, "\(string)")
        #expect(fields[0] == "hvc1")
        #expect(description.codecString(parameterSetsInBand: true) == "hev1" + string.dropFirst(4))

        // 1: profile space (0 → no letter) and general_profile_idc.
        #expect(traced.values["general_profile_space"] == 0)
        #expect(traced.values["general_profile_idc"] == c.profileIdc)
        #expect(fields[1] == String(try #require(traced.values["general_profile_idc"])))

        // 2: the compatibility flags, flag j in bit j, hex without leading zeros.
        var compatibility: UInt32 = 0
        for j in 0..<32 {
            let flag = try #require(traced.values["general_profile_compatibility_flag[\(j)]"], "flag \(j)")
            compatibility |= UInt32(flag) << UInt32(j)
        }
        #expect(UInt32(fields[2], radix: 16) == compatibility)
        #expect(fields[2] == String(compatibility, radix: 16, uppercase: true))

        // 3: tier and level.
        let tier = try #require(traced.values["general_tier_flag"]) == 0 ? "L" : "H"
        #expect(fields[3] == tier + String(try #require(traced.values["general_level_idc"])))

        // 4…: the 48 constraint bits (after the 32 compatibility bits) as
        // bytes, trailing zero bytes dropped.
        #expect(traced.flagBits.count == 80)
        let constraintBits = Array(traced.flagBits.dropFirst(32))
        var bytes = (0..<6).map { UInt8(String(constraintBits[$0 * 8..<$0 * 8 + 8]), radix: 2)! }
        while bytes.last == 0 { bytes.removeLast() }
        #expect(fields.dropFirst(4).map { UInt8($0, radix: 16) } == bytes.map { Optional($0) })
        #expect(traced.values["general_progressive_source_flag"] == Int(bytes.first ?? 0) >> 7)
    }

    /// FFmpeg 5.1's HLS muxer writes an HEVC `CODECS` attribute only for an
    /// `hvc1` tag, as `hvc1.<profile>.4.L<level>.B01`: profile and level come
    /// from the stream, the compatibility flags and constraint bytes are fixed
    /// text. Our profile and tier/level fields must equal its.
    @Test func hevcProfileAndLevelEqualFFmpegHLS() throws {
        let directory = try TemporaryDirectory()
        try ffmpegTestPattern(
            size: "176x144", rate: 25, frames: 10,
            arguments: [
                "-c:v", "libx265", "-b:v", "300k", "-tag:v", "hvc1", "-x265-params", "log-level=error", "-f", "hls",
                "-hls_segment_type", "fmp4", "-master_pl_name", "master.m3u8",
                "-hls_fmp4_init_filename", "init.mp4", "-hls_segment_filename", directory.path("segment%d.m4s"),
            ], to: directory.path("media.m3u8"))
        let codecs = try #require(try Self.hlsCodecs(masterPlaylist: directory.path("master.m3u8")))
        let stream = directory.path("stream.hevc")
        let concatenated = directory.path("whole.mp4")
        let initBytes = try Data(contentsOf: URL(fileURLWithPath: directory.path("init.mp4")))
        let segment = try Data(contentsOf: URL(fileURLWithPath: directory.path("segment0.m4s")))
        try (initBytes + segment).write(to: URL(fileURLWithPath: concatenated))
        try runChecked(
            "ffmpeg", ["-loglevel", "error", "-nostdin", "-i", concatenated, "-c", "copy", "-f", "hevc", stream])
        let ours = try Self.description(path: stream, codec: .hevc).codecString.split(separator: ".")
        let theirs = codecs.split(separator: ".")
        #expect(theirs.count == 5, "\(codecs)")
        #expect(ours[0] == theirs[0])
        #expect(ours[1] == theirs[1])
        #expect(ours[3] == theirs[3])
        // x265 Main: compatible with Main and Main 10 (flags 1, 2); progressive, frame only.
        #expect(ours.joined(separator: ".") == "hvc1.1.6.L60.90")
    }

    /// Profile space letters and trailing-zero trimming, from hand-made fields.
    @Test func hevcProfileSpaceHighTierAndConstraintTrimming() throws {
        let fields = PTL(
            profileSpace: 2, tier: 1, profileIDC: 3, compatibility: 0x2000_0000, constraints: 0x90_00_00_00_01_00,
            level: 186)
        var ptl = try HEVCVideoParameterSet(nal: hevcVPS(id: 0, subLayersMinus1: 0, ptl: fields)).profileTierLevel
        #expect(ptl.codecString() == "hvc1.B3.4.H186.90.0.0.0.1")
        ptl.general_constraint_indicator_flags = 0
        ptl.general_profile_space = 0
        #expect(ptl.codecString(sampleEntry: "hev1") == "hev1.3.4.H186")
    }
}
