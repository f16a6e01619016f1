import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import EncodeSession

/// Low-latency mode, the frame delay a session reports, and slice size
/// bounds, checked by what the encoders do (frames held back, FFmpeg's
/// `trace_headers` and `ffprobe -show_frames`).
struct LowLatencyTests {
    static let width = 320
    static let height = 240

    /// How many `encode` calls return nothing before the first sample:
    /// the delay as the caller sees it.
    static func measuredDelay(_ session: CompressionSession, frames: Int = 80) throws -> Int {
        for index in 0..<frames {
            let samples = try session.encode(EncodeTest.frame(index), pts: EncodeTest.pts(index))
            if !samples.isEmpty { return index }
        }
        return frames
    }

    /// One frame thread (x265's count is verified with one; x264 reports its own).
    @Test(arguments: [CodecType.h264, .hevc], ["ultrafast", "medium"])
    func reportedDelayIsWhatTheEncoderHolds(_ codec: CodecType, preset: String) throws {
        for realTime in [false, true] {
            var properties = CompressionProperties()
            properties.realTime = realTime
            properties.preset = preset
            properties.threadCount = 1
            let session = try CompressionSession(
                width: Self.width, height: Self.height, codec: codec, encoder: .software, properties: properties)
            let measured = try Self.measuredDelay(session)
            #expect(session.maxFrameDelayCount == measured, "\(codec) realTime \(realTime)")
            if realTime { #expect(measured == 0) }
        }
    }

    @Test func aDelayLimitTheSettingsExceedIsRefused() throws {
        var properties = CompressionProperties()
        properties.maxFrameDelayCount = 2
        properties.maxBFrames = 3
        let error = #expect(throws: MediaError.self) {
            try CompressionSession(width: 320, height: 240, codec: .h264, encoder: .software, properties: properties)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("maxFrameDelayCount 2: x264 with these settings holds up to ") == true)
        properties.maxBFrames = nil
        properties.maxFrameDelayCount = 0
        let session = try CompressionSession(
            width: 320, height: 240, codec: .h264, encoder: .software, properties: properties)
        #expect(session.maxFrameDelayCount == 0)
        #expect(try Self.measuredDelay(session) == 0)
    }

    /// One frame in, one out; intra refresh: only the first frame is a
    /// keyframe though the refresh period is 15; in H.264 a recovery-point
    /// SEI (payload type 6) marks each sweep and the SPS says no reordering;
    /// FFmpeg decodes every frame.
    @Test(arguments: [CodecType.h264, .hevc])
    func lowLatencyIsOneInOneOutWithIntraRefresh(_ codec: CodecType) throws {
        var properties = CompressionProperties()
        properties.lowLatency = true
        properties.averageBitRate = 600_000
        properties.maxKeyFrameInterval = 15
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software, properties: properties)
        #expect(session.maxFrameDelayCount == 0)
        let count = 45
        var samples: [CompressedSample] = []
        for index in 0..<count {
            let out = try session.encode(EncodeTest.frame(index), pts: EncodeTest.pts(index))
            #expect(out.count == 1, "frame \(index) held back")
            samples += out
        }
        samples += try session.finish()
        #expect(samples.count == count)
        let directory = try TemporaryDirectory()
        let path = try writeAnnexBFile(try annexBStream(samples), codec: codec, in: directory)
        let frames = try runChecked(
            "ffprobe", ["-v", "error", "-show_entries", "frame=key_frame", "-of", "csv=p=0", path])
        let keys = String(decoding: frames, as: UTF8.self).split(separator: "\n").map {
            $0.trimmingCharacters(in: CharacterSet(charactersIn: " ,"))
        }
        #expect(keys.count == count)
        #expect(keys.first == "1" && keys.dropFirst().allSatisfy { $0 == "0" }, "\(keys)")
        let trace = try runProcess(
            "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
        ).stderr
        if codec == .h264 {
            let recoveryPoints = trace.matches(of: /last_payload_type_byte\s+\S+\s+=\s+6\b/).count
            #expect(recoveryPoints >= 2, "recovery-point SEIs: \(recoveryPoints)")
            #expect(trace.contains(/max_num_reorder_frames\s+\S+\s+=\s+0\b/))
        }
        let sizes = samples.map(\.data.count)
        let mean = Double(sizes.reduce(0, +)) / Double(sizes.count)
        print(
            "low latency \(codec): largest access unit \(sizes.max()!) bytes, mean \(Int(mean)) (\(Double(sizes.max()!) / mean)×)"
        )
    }

    /// Where a decoder may start in a low-latency stream (no IDR after the
    /// first). H.264: each sample with x264's recovery-point SEI is a
    /// keyframe of the session (`isKeyframe`), and the sweep from it rebuilds the
    /// picture exactly — FFmpeg decoding the stream from the sample at frame
    /// 30 (parameter sets put in front) gives, from frame 45 (one refresh
    /// period later) on, the same pictures as the whole stream. HEVC: x265's
    /// intra refresh does not (its refreshed columns still depend on the
    /// rest of the picture), which is why no recovery-point SEI is written
    /// for it and HEVC receivers start at IRAP pictures only.
    @Test(arguments: [CodecType.h264, .hevc])
    func aRecoveryPointRebuildsThePictureOnlyWithX264(_ codec: CodecType) throws {
        var properties = CompressionProperties()
        properties.lowLatency = true
        properties.maxKeyFrameInterval = 15
        properties.threadCount = 1
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software, properties: properties)
        let count = 90
        var samples: [CompressedSample] = []
        for index in 0..<count { samples += try session.encode(EncodeTest.frame(index), pts: EncodeTest.pts(index)) }
        samples += try session.finish()
        #expect(samples.count == count)
        let keyframes = samples.indices.filter { samples[$0].isKeyframe }
        let directory = try TemporaryDirectory()
        let fullPath = try writeAnnexBFile(try annexBStream(samples), codec: codec, in: directory, name: "full")
        let full = try ffmpegFrameMD5(path: fullPath, everyFrame: true)
        #expect(full.count == count)

        let start = 30
        if codec == .h264 {
            let recoveryPoints = try samples.indices.filter { index in
                try LengthPrefixed.nalUnits(in: samples[index].data, lengthSize: 4).contains {
                    $0.first! & 0x1F == 6 && H264SEI.containsRecoveryPoint($0)
                }
            }
            // The sample with a recovery point is where decoding may start: a keyframe.
            #expect(recoveryPoints.contains(start), "recovery points at \(recoveryPoints)")
            #expect(keyframes == [0] + recoveryPoints.filter { $0 > 0 }, "keyframes \(keyframes)")
        } else {
            let trace = try runProcess(
                "ffmpeg",
                ["-nostdin", "-i", fullPath, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
            ).stderr
            #expect(keyframes == [0], "keyframes \(keyframes)")
            #expect(!trace.contains(/last_payload_type_byte\s+\S+\s+=\s+6\b/), "x265 wrote a recovery point")
        }
        var cut: [UInt8] = []
        for set in samples[0].formatDescription.parameterSets { cut += [0, 0, 0, 1] + set }
        cut += try annexBStream(samples[start...])
        let fromStart = try ffmpegFrameMD5(
            path: try writeAnnexBFile(cut, codec: codec, in: directory, name: "cut"),
            extraInputArgs: [
                "-flags2", "showall",
            ], everyFrame: true)
        #expect(fromStart.count == count - start)
        let compared = (start + 15)..<count
        let equal = compared.filter { fromStart[$0 - start] == full[$0] }.count
        if codec == .h264 {
            #expect(equal == compared.count, "\(equal) of \(compared.count) pictures equal")
        } else {
            #expect(equal < compared.count / 2, "\(equal) of \(compared.count) pictures equal")
        }
    }

    /// x264 `slice-max-size`: every slice NAL unit within the bound, and
    /// pictures split into several slices to get there. x265 refuses it.
    @Test func maxSliceBytesBoundsEverySlice() throws {
        var properties = CompressionProperties()
        properties.maxSliceBytes = 800
        properties.constantQP = 18
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .software, properties: properties)
        let samples = try encodeClip(session, count: 10)
        var slicesPerPicture: [Int] = []
        for sample in samples {
            let nals = try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4)
            let slices = nals.filter { (1...5).contains($0.first! & 0x1F) }
            #expect(slices.allSatisfy { $0.count <= 800 }, "\(slices.map(\.count))")
            slicesPerPicture.append(slices.count)
        }
        #expect(slicesPerPicture.max()! > 1)
        let error = #expect(throws: MediaError.self) {
            try CompressionSession(width: 320, height: 240, codec: .hevc, encoder: .software, properties: properties)
        }
        #expect(error?.code == .unsupported)
    }

    /// Constrained High: profile_idc 100 with constraint_set4 and
    /// constraint_set5 (trace_headers), no B-slices (ffprobe), and Constrained
    /// Baseline as before: profile_idc 66 with constraint_set1.
    @Test func constrainedProfilesAreSignalled() throws {
        let directory = try TemporaryDirectory()
        for (profile, idc, flags) in [
            (CompressionProperties.Profile.constrainedHigh, "100", ["constraint_set4_flag", "constraint_set5_flag"]),
            (.baseline, "66", ["constraint_set1_flag"]),
        ] {
            var properties = CompressionProperties()
            properties.profile = profile
            let session = try CompressionSession(
                width: Self.width, height: Self.height, codec: .h264, encoder: .software, properties: properties)
            let samples = try encodeClip(session, count: 20)
            let path = try writeAnnexBFile(
                try annexBStream(samples), codec: .h264, in: directory, name: profile.rawValue)
            let trace = try runProcess(
                "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
            ).stderr
            #expect(trace.contains(try Regex("profile_idc\\s+\\S+\\s+=\\s+\(idc)\\b")), "\(profile)")
            for flag in flags {
                #expect(trace.contains(try Regex("\(flag)\\s+\\S+\\s+=\\s+1\\b")), "\(profile): \(flag)")
            }
            let types = try runChecked(
                "ffprobe", ["-v", "error", "-show_entries", "frame=pict_type", "-of", "csv=p=0", path])
            let pictures = String(decoding: types, as: UTF8.self).split(separator: "\n")
            #expect(pictures.count == 20)
            #expect(!pictures.contains { $0.hasPrefix("B") }, "\(profile): B-pictures")
        }
    }
}
