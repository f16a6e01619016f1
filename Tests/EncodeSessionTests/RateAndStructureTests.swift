import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import EncodeSession

/// constantBitRate, minQP/maxQP, referenceBufferCount and
/// allowTemporalCompression, checked with ffprobe, FFmpeg's `trace_headers`
/// and `-debug qp`.
struct RateAndStructureTests {
    static func stream(
        _ codec: CodecType, in directory: TemporaryDirectory, frames: Int = 30,
        _ configure: (inout CompressionProperties) -> Void
    ) throws -> (path: String, samples: [CompressedSample]) {
        var properties = CompressionProperties()
        properties.threadCount = 1
        configure(&properties)
        let session = try CompressionSession(
            width: 320, height: 240, codec: codec, encoder: .software, properties: properties)
        let samples = try encodeClip(session, count: frames)
        let path = try writeAnnexBFile(try annexBStream(samples), codec: codec, in: directory)
        return (path, samples)
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func withoutTemporalCompressionEveryFrameIsAKeyframe(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.stream(codec, in: directory) { $0.allowTemporalCompression = false }
        #expect(samples.allSatisfy { $0.isKeyframe })
        let keys = try runChecked(
            "ffprobe", ["-v", "error", "-show_entries", "frame=key_frame", "-of", "csv=p=0", path])
        let flags = String(decoding: keys, as: UTF8.self).split(separator: "\n").map {
            $0.trimmingCharacters(in: CharacterSet(charactersIn: " ,"))
        }
        #expect(flags.count == 30 && flags.allSatisfy { $0 == "1" }, "\(flags)")
    }

    /// Every macroblock's QP as FFmpeg's decoder reports it (`-debug qp`),
    /// within the bounds (H.264: two digits per macroblock).
    @Test func qpBoundsHold() throws {
        let directory = try TemporaryDirectory()
        let (path, _) = try Self.stream(.h264, in: directory, frames: 10) {
            $0.minQP = 30
            $0.maxQP = 34
        }
        let log = try runProcess(
            "ffmpeg", ["-nostdin", "-loglevel", "repeat+debug", "-debug", "qp", "-i", path, "-f", "null", "-"]
        ).stderr
        var qps: [Int] = []
        for line in log.split(separator: "\n") {
            guard let match = line.firstMatch(of: /\[h264 @ [^\]]+\] +(\d+)$/) else { continue }
            let digits = Array(match.1)
            guard digits.count % 2 == 0 else { continue }
            for index in stride(from: 0, to: digits.count, by: 2) {
                qps.append(Int(String(digits[index...index + 1]))!)
            }
        }
        // 10 pictures of 20×15 macroblocks; log lines that come interleaved
        // with other debug output (more of them on a loaded machine) are skipped.
        #expect(qps.count >= 1_500 && qps.count <= 3_000, "\(qps.count) macroblock QPs")
        #expect(qps.min()! >= 30 && qps.max()! <= 34, "QP \(qps.min()!)…\(qps.max()!)")
        #expect(Set(qps).count > 1)
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func referenceBufferCountIsWritten(_ codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let (path, _) = try Self.stream(codec, in: directory, frames: 5) {
            $0.referenceBufferCount = 2
            $0.allowFrameReordering = false  // B-pyramids add references of their own
        }
        let trace = try runProcess(
            "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
        ).stderr
        if codec == .h264 {
            #expect(trace.contains(/max_num_ref_frames\s+\S+\s+=\s+2\b/), "no max_num_ref_frames = 2")
        } else {
            #expect(trace.contains(/sps_max_dec_pic_buffering_minus1\[0\]\s+\S+\s+=\s+[23]\b/))
        }
    }

    /// x264 CBR: HRD parameters with cbr_flag in the SPS, filler data (NAL
    /// type 12) in the samples, and every second of the stream within 10 %
    /// of the rate.
    @Test func constantBitRateHoldsTheRate() throws {
        let rate = 3_000_000  // above what the clip needs, so filler makes up the rest
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.stream(.h264, in: directory, frames: 90) {
            $0.averageBitRate = rate
            $0.constantBitRate = true
        }
        let trace = try runProcess(
            "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
        ).stderr
        #expect(trace.contains(/nal_hrd_parameters_present_flag\s+\S+\s+=\s+1\b/))
        #expect(trace.contains(/cbr_flag\[0\]\s+\S+\s+=\s+1\b/))
        let types = try samples.flatMap {
            try LengthPrefixed.nalUnits(in: $0.data, lengthSize: 4).map { $0.first! & 0x1F }
        }
        #expect(types.contains(12), "no filler data")
        for second in 0..<3 {
            let bytes = samples[(second * 30)..<(second * 30 + 30)].reduce(0) { $0 + $1.data.count }
            let bits = Double(bytes * 8)
            #expect(abs(bits - Double(rate)) / Double(rate) < 0.10, "second \(second): \(Int(bits)) bit/s")
        }
        var invalid = CompressionProperties()
        invalid.constantBitRate = true
        let refused = #expect(throws: MediaError.self) {
            try CompressionSession(width: 320, height: 240, codec: .h264, encoder: .software, properties: invalid)
        }
        #expect(refused?.code == .invalidArgument)
    }
}

/// `calculatePSNR`: the encoder's own figures for each picture (Y, U, V and
/// all samples together) agree within 0.2 dB (chroma 0.4) with the PSNR of
/// FFmpeg's decode of that picture against the frame given (x264 and x265
/// measure their reconstruction with their own SSD routines). VA-API
/// refuses it.
struct EncoderPSNRTests {
    @Test(arguments: [CodecType.h264, .hevc])
    func encoderPSNRMatchesTheDecodedPictures(_ codec: CodecType) throws {
        var properties = CompressionProperties()
        properties.calculatePSNR = true
        properties.threadCount = 1
        let session = try CompressionSession(
            width: 320, height: 240, codec: codec, encoder: .software, properties: properties)
        let count = 12
        let samples = try encodeClip(session, count: count)
        #expect(samples.allSatisfy { $0.encoderPSNR != nil })
        let decoded = try EncodeTest.decode(try annexBStream(samples), codec: codec)
        let frameSize = 320 * 240 * 3 / 2
        #expect(decoded.count == count * frameSize)
        for sample in samples {
            let index = Int(sample.pts.converted(toTimescale: 30).value)
            let start = decoded.startIndex + index * frameSize
            let picture = [UInt8](decoded[start..<start + frameSize])
            let source = EncodeTest.frame(index).packedBytes()
            let luma = 320 * 240
            let chroma = luma / 4
            // Each plane, and every sample of the three together (the average).
            let measured = [
                psnr(Array(source[..<luma]), Array(picture[..<luma])),
                psnr(Array(source[luma..<luma + chroma]), Array(picture[luma..<luma + chroma])),
                psnr(Array(source[(luma + chroma)...]), Array(picture[(luma + chroma)...])),
                psnr(source, picture),
            ]
            let reported = try #require(sample.encoderPSNR)
            // x264's chroma figures run up to 0.31 dB below the decoded
            // pictures' on this clip; luma and the average within 0.1 dB.
            let tolerances = [0.2, 0.4, 0.4, 0.2]
            let reportedDB = [reported.y, reported.u, reported.v, reported.average]
            for (plane, (decodedDB, encoderDB)) in zip(measured, reportedDB).enumerated() {
                #expect(
                    abs(decodedDB - encoderDB) < tolerances[plane],
                    "\(codec) frame \(index): decoded \(measured) dB, encoder says \(reported)")
            }
        }
        var refused = CompressionProperties()
        refused.calculatePSNR = true
        #expect(throws: MediaError.self) {
            try CompressionSession(
                width: 320, height: 240, codec: .h264, encoder: .hardware, properties: refused)
        }
    }
}
