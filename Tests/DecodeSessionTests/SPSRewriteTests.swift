import DecodeSession
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

/// `H264SequenceParameterSet.rewritingForNoReordering(nal:)` and
/// `FormatDescription.withoutReordering()`, checked with FFmpeg's
/// `trace_headers` (field by field) and by decoding.
struct SPSRewriteTests {
    /// The SPS fields FFmpeg's `trace_headers` prints for the first SPS of
    /// an Annex-B stream, as `name = value`.
    static func tracedSPS(_ stream: [UInt8], in directory: TemporaryDirectory) throws -> [String] {
        let path = try writeAnnexBFile(stream, codec: .h264, in: directory, name: "traced")
        let result = try runProcess(
            "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        var fields: [String] = []
        var inSPS = false
        for line in result.stderr.split(separator: "\n") {
            if line.contains("Sequence Parameter Set") {
                if inSPS { break }
                inSPS = true
                continue
            }
            guard inSPS else { continue }
            if line.contains("Parameter Set") || line.contains("Slice") || line.contains("Supplemental") { break }
            // "[trace_headers @ 0x…] 123  name   0101 = 5": keep "name = 5".
            let words = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let equals = words.lastIndex(of: "="), equals >= 5, equals + 1 < words.count else { continue }
            fields.append("\(words[4]) = \(words[equals + 1])")
        }
        return fields
    }

    /// The stream's SPS (rewritten or not), then the rest of its first access unit.
    static func firstAccessUnit(_ samples: [CompressedSample], sps: [UInt8]) throws -> [UInt8] {
        let description = samples[0].formatDescription
        let pps = description.parameterSets.filter { $0[0] & 0x1F == 8 }
        var stream: [UInt8] = []
        for nal in [sps] + pps + (try LengthPrefixed.nalUnits(in: samples[0].data, lengthSize: 4).map(Array.init)) {
            stream += [0, 0, 0, 1] + nal
        }
        return stream
    }

    /// x264 with B-frames writes a VUI with `max_num_reorder_frames` 2: the
    /// rewrite sets it to 0 and `max_dec_frame_buffering` to at least
    /// `max_num_ref_frames`; FFmpeg reads every other field unchanged.
    @Test func aVUIWithARestrictionKeepsEverythingElse() throws {
        let directory = try TemporaryDirectory()
        let path = try TestStreams.make("bframes", in: directory, codec: .h264, frames: 5, encoderArgs: ["-bf", "3"])
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let sps = try #require(samples[0].formatDescription.parameterSets.first { $0[0] & 0x1F == 7 })
        let rewritten = try H264SequenceParameterSet.rewritingForNoReordering(nal: sps)
        let before = try Self.tracedSPS(try Self.firstAccessUnit(samples, sps: sps), in: directory)
        let after = try Self.tracedSPS(try Self.firstAccessUnit(samples, sps: rewritten), in: directory)
        #expect(before.contains("max_num_reorder_frames = 2"), "\(before)")
        #expect(after.contains("max_num_reorder_frames = 0"), "\(after)")
        let references = try #require(before.first { $0.hasPrefix("max_num_ref_frames = ") })
        let buffering = before.first { $0.hasPrefix("max_dec_frame_buffering = ") }
        #expect(after.contains(buffering ?? ""))
        #expect(
            Int(references.split(separator: " ").last!)! <= Int(buffering!.split(separator: " ").last!)!)
        // (The shorter code for 0 moves the byte boundary: alignment bits differ.)
        let unchanged = { (fields: [String]) in
            fields.filter { !$0.hasPrefix("max_num_reorder_frames") && !$0.hasPrefix("rbsp_alignment_zero_bit") }
        }
        #expect(unchanged(before) == unchanged(after))
        // Rewriting again changes nothing.
        #expect(try H264SequenceParameterSet.rewritingForNoReordering(nal: rewritten) == rewritten)
    }

    /// An SPS without a VUI (x264's, cut before it with the bits copied by
    /// hand) gets one holding only the restriction; FFmpeg reads the fields
    /// before it unchanged.
    @Test func anSPSWithoutAVUIGetsOne() throws {
        let directory = try TemporaryDirectory()
        let path = try TestStreams.make("novui", in: directory, codec: .h264, frames: 3, encoderArgs: ["-bf", "0"])
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let sps = try #require(samples[0].formatDescription.parameterSets.first { $0[0] & 0x1F == 7 })
        let parsed = try H264SequenceParameterSet(nal: sps)
        let stripped = Self.withoutVUI(sps, vuiFlagBit: parsed.vuiPresentFlagBit)
        #expect(try H264SequenceParameterSet(nal: stripped).vui == nil)
        let rewritten = try H264SequenceParameterSet.rewritingForNoReordering(nal: stripped)
        let vui = try #require(try H264SequenceParameterSet(nal: rewritten).vui)
        #expect(vui.bitstream_restriction_flag && vui.max_num_reorder_frames == 0)
        #expect(vui.max_dec_frame_buffering == parsed.max_num_ref_frames)
        let before = try Self.tracedSPS(try Self.firstAccessUnit(samples, sps: stripped), in: directory)
        let after = try Self.tracedSPS(try Self.firstAccessUnit(samples, sps: rewritten), in: directory)
        let flag = try #require(before.firstIndex(of: "vui_parameters_present_flag = 0"))
        #expect(Array(after.prefix(flag)) == Array(before.prefix(flag)))
        #expect(after.contains("vui_parameters_present_flag = 1"))
        #expect(after.contains("max_num_reorder_frames = 0"), "\(after)")
        #expect(after.contains("bitstream_restriction_flag = 1"), "\(after)")
    }

    /// The SPS bits before `vui_parameters_present_flag`, the flag at 0, trailing bits.
    static func withoutVUI(_ sps: [UInt8], vuiFlagBit: Int) -> [UInt8] {
        let rbsp = RBSP.unescape(sps.dropFirst())
        var bits: [Bool] = (0..<vuiFlagBit).map { rbsp[$0 / 8] & (0x80 >> UInt8($0 % 8)) != 0 }
        bits += [false, true]
        while bits.count % 8 != 0 { bits.append(false) }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: bits.count, by: 8) {
            bytes.append(bits[index..<index + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) })
        }
        return [sps[0]] + RBSP.escape(bytes)
    }

    /// A stream without reordering whose SPS says nothing about it (no VUI):
    /// with the rewritten description each decode call returns its own
    /// picture at once (no delay), and the pictures are FFmpeg's.
    @Test func theRewrittenDescriptionDecodesWithoutDelay() throws {
        let directory = try TemporaryDirectory()
        let path = try TestStreams.make("nodelay", in: directory, codec: .h264, frames: 12, encoderArgs: ["-bf", "0"])
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let md5s = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        let original = samples[0].formatDescription
        let sps = try #require(original.parameterSets.first { $0[0] & 0x1F == 7 })
        let stripped = Self.withoutVUI(sps, vuiFlagBit: try H264SequenceParameterSet(nal: sps).vuiPresentFlagBit)
        let pps = original.parameterSets.filter { $0[0] & 0x1F == 8 }
        let noVUI = try FormatDescription(h264ParameterSets: [stripped] + pps)
        let description = try noVUI.withoutReordering()
        #expect(description.parameterSets.count == noVUI.parameterSets.count)
        let session = try DecompressionSession(
            formatDescription: description, decoder: .software, threadCount: 1)
        var frames: [DecodedFrame] = []
        for sample in samples {
            var sample = sample
            sample.formatDescription = description
            let out = try session.decode(sample)
            #expect(out.count == 1, "a picture held back at pts \(sample.pts)")
            frames += out
        }
        frames += try session.finish()
        #expect(frames.map { md5Hex($0.pixelBuffer) } == md5s)
        #expect(throws: MediaError.self) {
            _ = try FormatDescription(hevcParameterSets: []).withoutReordering()
        }
    }
}
