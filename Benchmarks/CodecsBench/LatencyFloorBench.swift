// The latency floor: one live pipeline's end-to-end p50 beside the raw libraries' per-frame encode and decode times.
import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore

/// The latency floor: the end-to-end p50 of one pipeline (0 frames of
/// delay) beside the p50 per-frame encode and decode times of the raw
/// libraries with the session's settings, measured in the same run: with
/// the frames paced at 30 fps as the pipeline's are (the target's
/// reference: each frame meets caches the rest of the machine used for 33
/// ms), and back to back (warm caches; printed beside it).
///
/// The raw loops and the pipeline alternate `rounds` times and the lowest
/// p50 of each is kept, as elsewhere in the bench, so that load from other
/// work on the machine hits both.
func benchmarkLatencyFloor(_ frames: [PixelBuffer], rounds: Int, report: Report) throws -> Double {
    let settings = liveSettings(preset: "ultrafast")
    var encode = Double.infinity
    var decode = Double.infinity
    var warmEncode = Double.infinity
    var warmDecode = Double.infinity
    var endToEnd = Double.infinity
    var stages: [Double] = []
    for _ in 0..<rounds {
        let warm = try rawLibraryCost(frames, settings: settings)
        warmEncode = min(warmEncode, percentile(warm.encodeTimes, 50) * 1000)
        warmDecode = min(warmDecode, percentile(warm.decodeTimes, 50) * 1000)
        let paced = try rawLibraryCost(frames, settings: settings, paced: true)
        encode = min(encode, percentile(paced.encodeTimes, 50) * 1000)
        decode = min(decode, percentile(paced.decodeTimes, 50) * 1000)
        let pipeline = try runPipelines(frames, count: 1, settings: settings)
        if pipeline.latencyP50 * 1000 < endToEnd { stages = pipeline.stages }
        endToEnd = min(endToEnd, pipeline.latencyP50 * 1000)
    }
    if stages.count == 4 {
        report.notes.append(
            String(
                format: "latency floor: the pipeline's stages, p50: encode %.2f ms, packetize and send %.2f ms, "
                    + "loopback to a sample out of the RTP receiver %.2f ms, decode %.2f ms",
                stages[0] * 1000, stages[1] * 1000, stages[2] * 1000, stages[3] * 1000))
    }
    // The sessions alone, frame by frame, for the note.
    let encoder = try CompressionSession(
        width: frames[0].width, height: frames[0].height, codec: .h264, encoder: .software,
        properties: settings.properties())
    var sessionEncode: [Double] = []
    var samples: [CompressedSample] = []
    let duration = MediaTime(value: 1, timescale: 30)
    for (index, frame) in frames.enumerated() {
        let start = monotonicNow()
        samples += try encoder.encode(frame, pts: duration * Int64(index), duration: duration)
        sessionEncode.append(monotonicNow() - start)
    }
    let decoder = try DecompressionSession(
        formatDescription: samples[0].formatDescription, decoder: .software, threadCount: 1)
    var sessionDecode: [Double] = []
    for sample in samples {
        let start = monotonicNow()
        _ = try decoder.decode(sample)
        sessionDecode.append(monotonicNow() - start)
    }
    report.notes.append(
        String(
            format: "latency floor: the sessions alone, frame by frame: encode p50 %.2f ms, decode p50 %.2f ms",
            percentile(sessionEncode, 50) * 1000, percentile(sessionDecode, 50) * 1000))
    let bound = 1.05 * (encode + decode) + 0.5
    let name = "latency floor p50 (720p30 x264 ultrafast 1.5 Mbit/s CBR over RTP, 0 frames of delay)"
    report.add(
        Figure(
            name: name, ours: endToEnd, reference: encode + decode,
            referenceName: "raw libx264 encode + libavcodec decode p50, 30 fps", unit: "ms", higherIsBetter: false,
            target: "≤ 1.05 × reference + 0.5 ms"))
    report.add(
        Figure(
            name: "\(name) vs the raw libraries back to back", ours: endToEnd, reference: warmEncode + warmDecode,
            referenceName: "raw libx264 encode + libavcodec decode p50, back to back", unit: "ms",
            higherIsBetter: false, target: nil))
    report.notes.append(
        String(
            format:
                "latency floor: end to end p50 %.2f ms; raw encode p50 %.2f ms + decode p50 %.2f ms = %.2f ms at "
                + "30 fps (back to back %.2f + %.2f = %.2f); bound 1.05 × (paced) + 0.5 = %.2f ms; end to end / "
                + "(encode + decode) = %.3f paced, %.3f back to back",
            endToEnd, encode, decode, encode + decode, warmEncode, warmDecode, warmEncode + warmDecode, bound,
            endToEnd / (encode + decode), endToEnd / (warmEncode + warmDecode))
            + (endToEnd <= bound ? " (within the bound)" : " (over the bound)"))
    return endToEnd
}
