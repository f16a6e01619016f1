import CBenchSupport
import CX264
import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore

/// Heap allocations per frame in steady state (after a warm-up) and peak RSS,
/// ours beside the plain library loops.
func benchmarkMemory(_ frames: [PixelBuffer], stream: CodedStream, report: Report) throws {
    let warmUp = min(30, frames.count / 3)

    // Encode: the session against the plain x264 loop, same frames. Peak RSS
    // is reported as growth over the RSS before the phase, which already
    // holds the pre-generated frames and streams.
    _ = cbench_reset_peak_rss()
    var baseline = cbench_current_rss_kb()
    let session = try CompressionSession(
        width: frames[0].width, height: frames[0].height, codec: .h264, encoder: .software,
        properties: EncodeSettings(preset: "veryfast").properties())
    var before: UInt64 = 0
    for (index, frame) in frames.enumerated() {
        if index == warmUp { before = cbench_allocation_count() }
        _ = try session.encode(
            frame, pts: MediaTime(value: Int64(index), timescale: 30), duration: MediaTime(value: 1, timescale: 30))
    }
    let oursEncode = Double(cbench_allocation_count() - before) / Double(frames.count - warmUp)
    _ = try session.finish()
    let encodePeak = Double(cbench_peak_rss_kb() - baseline) / 1024
    let rawEncode = try allocationsPerFrame(frames: frames.count, warmUp: warmUp) { limit in
        _ = try rawX264Encode(Array(frames.prefix(limit)), settings: EncodeSettings(preset: "veryfast"))
    }
    report.add(
        Figure(
            name: "encode x264 heap allocations per frame", ours: oursEncode, reference: rawEncode,
            referenceName: "plain libx264 loop", unit: "allocs/frame", higherIsBetter: false, target: nil))
    report.add(
        Figure(
            name: "encode x264 peak RSS growth", ours: encodePeak, reference: nil, referenceName: nil, unit: "MiB",
            higherIsBetter: false, target: nil))

    // Decode.
    _ = cbench_reset_peak_rss()
    baseline = cbench_current_rss_kb()
    let decoder = try DecompressionSession(formatDescription: stream.description, decoder: .software, threadCount: 1)
    for (index, sample) in stream.samples.enumerated() {
        if index == warmUp { before = cbench_allocation_count() }
        _ = try decoder.decode(sample)
    }
    let oursDecode = Double(cbench_allocation_count() - before) / Double(stream.samples.count - warmUp)
    _ = try decoder.finish()
    let decodePeak = Double(cbench_peak_rss_kb() - baseline) / 1024
    let rawDecode = try allocationsPerFrame(frames: stream.samples.count, warmUp: warmUp) { limit in
        var partial = stream
        partial.samples = Array(stream.samples.prefix(limit))
        _ = try rawLibavcodecDecode(partial, threads: 1)
    }
    report.add(
        Figure(
            name: "decode heap allocations per frame", ours: oursDecode, reference: rawDecode,
            referenceName: "plain libavcodec loop", unit: "allocs/frame", higherIsBetter: false, target: nil))
    report.add(
        Figure(
            name: "decode peak RSS growth", ours: decodePeak, reference: nil, referenceName: nil, unit: "MiB",
            higherIsBetter: false, target: nil))

    // FormatConv conversions, per sample, in steady state.
    var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
    var reused: [UInt8] = []
    for sample in stream.samples.prefix(warmUp) { try writer.write(sample, into: &reused) }
    before = cbench_allocation_count()
    for sample in stream.samples.dropFirst(warmUp) { try writer.write(sample, into: &reused) }
    let toAnnexB = Double(cbench_allocation_count() - before) / Double(stream.samples.count - warmUp)
    let filter = try BitstreamFilter(codec: stream.codec, record: stream.description.record)
    let bank = try PacketBank(stream.samples.map(\.data))
    _ = try filter.run(bank)
    before = cbench_allocation_count()
    _ = try filter.run(bank)
    let filterAllocations = Double(cbench_allocation_count() - before) / Double(stream.samples.count)
    report.add(
        Figure(
            name: "length-prefixed→Annex-B heap allocations per sample", ours: toAnnexB, reference: filterAllocations,
            referenceName: "mp4toannexb (av_bsf)", unit: "allocs/sample", higherIsBetter: false, target: "0"))

    let codec = stream.codec
    for unit in stream.annexBUnits.prefix(warmUp) {
        _ = try unit.withUnsafeBytes { try AnnexB.lengthPrefixed(from: $0, codec: codec, into: &reused) }
    }
    before = cbench_allocation_count()
    for unit in stream.annexBUnits.dropFirst(warmUp) {
        _ = try unit.withUnsafeBytes { try AnnexB.lengthPrefixed(from: $0, codec: codec, into: &reused) }
    }
    let toLength = Double(cbench_allocation_count() - before) / Double(stream.annexBUnits.count - warmUp)
    before = cbench_allocation_count()
    for unit in stream.annexBUnits { _ = libavcodecScannerToLengthPrefixed(unit, codec: stream.codec) }
    let scannerAllocations = Double(cbench_allocation_count() - before) / Double(stream.annexBUnits.count)
    report.add(
        Figure(
            name: "Annex-B→length-prefixed heap allocations per access unit (non-keyframe)", ours: toLength,
            reference: scannerAllocations, referenceName: "avpriv_find_start_code + copy",
            unit: "allocs/unit", higherIsBetter: false, target: "0"))
}

/// Allocations per frame of `body` beyond the first `warmUp` frames: the
/// difference between running `frames` and `warmUp` frames.
func allocationsPerFrame(frames: Int, warmUp: Int, _ body: (Int) throws -> Void) throws -> Double {
    var before = cbench_allocation_count()
    try body(warmUp)
    let short = cbench_allocation_count() - before
    before = cbench_allocation_count()
    try body(frames)
    let long = cbench_allocation_count() - before
    return Double(Int64(long) - Int64(short)) / Double(frames - warmUp)
}
