import DecodeSession
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

/// `frameFilter` against FFmpeg's `-skip_frame`: the same pictures, bit for
/// bit, and every sample left out listed as `.filtered`.
struct FrameFilterTests {
    static func ffmpegMD5s(_ path: String, skip: String) throws -> [String] {
        let output = try runChecked(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-skip_frame", skip, "-i", path, "-fps_mode", "passthrough", "-pix_fmt",
                "yuv420p", "-f", "framemd5", "-",
            ])
        return parseFrameMD5(String(decoding: output, as: UTF8.self))
    }

    static func decode(_ samples: [CompressedSample], filter: FrameFilter) throws -> (
        md5s: [String], session: DecompressionSession
    ) {
        let session = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        session.frameFilter = filter
        let frames = try decodeAll(session, samples)
        let stats = session.statistics
        #expect(stats.submitted == stats.decoded + stats.dropped + stats.pending)
        #expect(session.drops.allSatisfy { $0.kind == .filtered }, "\(session.drops.prefix(3))")
        #expect(stats.decoded + session.drops.count == samples.count)
        return (frames.map { md5Hex($0.pixelBuffer) }, session)
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func keyframesAndIntraPicturesAreFFmpegs(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        // A keyframe every 10, and scene-cut-free I-frames in between from x264's/x265's own choice.
        let path = try TestStreams.make(
            "filter", in: directory, codec: codec, frames: 40, encoderArgs: ["-bf", "2", "-g", "10"])
        let samples = try TestStreams.samples(ofFile: path, codec: codec)
        let keyframes = try Self.decode(samples, filter: .keyframes)
        #expect(keyframes.md5s == (try Self.ffmpegMD5s(path, skip: "nokey")))
        #expect(keyframes.md5s.count == samples.filter(\.isKeyframe).count)
        let intra = try Self.decode(samples, filter: .intra)
        #expect(intra.md5s == (try Self.ffmpegMD5s(path, skip: "nointra")))
        #expect(!intra.md5s.isEmpty)
        let all = try Self.decode(samples, filter: .all)
        #expect(all.md5s == (try Self.ffmpegMD5s(path, skip: "default")))
    }

    /// H.264: FFmpeg's `noref` skips exactly the pictures with `nal_ref_idc`
    /// 0. HEVC (where FFmpeg's `noref` skips nothing): the pictures that
    /// come out are the full decode's, minus one per sub-layer non-reference
    /// sample (told here from the NAL unit type, counted independently).
    @Test(arguments: [CodecType.h264, .hevc])
    func nonDroppablePictures(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let path = try TestStreams.make(
            "nonref", in: directory, codec: codec, frames: 30,
            encoderArgs: codec == .h264 ? ["-bf", "2", "-g", "15"] : ["-bf", "2", "-g", "15"])
        let samples = try TestStreams.samples(ofFile: path, codec: codec)
        let result = try Self.decode(samples, filter: .nonDroppable)
        if codec == .h264 {
            #expect(result.md5s == (try Self.ffmpegMD5s(path, skip: "noref")))
        } else {
            let full = Set(try Self.ffmpegMD5s(path, skip: "default"))
            #expect(result.md5s.allSatisfy { full.contains($0) })
            let nonReference = try samples.filter { sample in
                let nal = try #require(try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4).first)
                let type = (nal.first! >> 1) & 0x3F
                return type < 16 && type % 2 == 0
            }.count
            #expect(nonReference > 0)
            #expect(result.md5s.count == samples.count - nonReference)
        }
    }
}
