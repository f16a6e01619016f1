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
    func add(
        _ name: String, _ ours: Double, _ reference: Double?, _ referenceName: String?, _ unit: String,
        target: String? = nil
    ) {
        report.add(
            Figure(
                name: name, ours: ours, reference: reference, referenceName: referenceName, unit: unit,
                higherIsBetter: false, target: target))
    }

    // Encode: the session against the plain x264 loop, same frames.
    let session = try CompressionSession(
        width: frames[0].width, height: frames[0].height, codec: .h264, encoder: .software,
        properties: EncodeSettings(preset: "veryfast").properties())
    let (oursEncode, encodePeak) = try steadyState(count: frames.count, warmUp: warmUp) { index in
        _ = try session.encode(
            frames[index], pts: MediaTime(value: Int64(index), timescale: 30),
            duration: MediaTime(value: 1, timescale: 30))
    }
    _ = try session.finish()
    let rawEncode = try allocationsPerFrame(frames: frames.count, warmUp: warmUp) { limit in
        _ = try rawX264Encode(Array(frames.prefix(limit)), settings: EncodeSettings(preset: "veryfast"))
    }
    add("encode x264 heap allocations per frame", oursEncode, rawEncode, "plain libx264 loop", "allocs/frame")
    add("encode x264 peak RSS growth", encodePeak, nil, nil, "MiB")

    // Decode.
    let decoder = try DecompressionSession(formatDescription: stream.description, decoder: .software, threadCount: 1)
    let (oursDecode, decodePeak) = try steadyState(count: stream.samples.count, warmUp: warmUp) { index in
        _ = try decoder.decode(stream.samples[index])
    }
    _ = try decoder.finish()
    let rawDecode = try allocationsPerFrame(frames: stream.samples.count, warmUp: warmUp) { limit in
        var partial = stream
        partial.samples = Array(stream.samples.prefix(limit))
        _ = try rawLibavcodecDecode(partial, threads: 1)
    }
    add("decode heap allocations per frame", oursDecode, rawDecode, "plain libavcodec loop", "allocs/frame")
    add("decode peak RSS growth", decodePeak, nil, nil, "MiB")

    // FormatConv conversions, per access unit, with one reused output buffer.
    var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
    var reused: [UInt8] = []
    let (toAnnexB, _) = try steadyState(count: stream.samples.count, warmUp: warmUp) { index in
        try writer.write(stream.samples[index], into: &reused)
    }
    let filter = try BitstreamFilter(codec: stream.codec, record: stream.description.record)
    let bank = try PacketBank(stream.samples.map(\.data))
    _ = try filter.run(bank)
    let filterAllocations = try allocations { _ = try filter.run(bank) }
    add(
        "length-prefixed→Annex-B heap allocations per sample", toAnnexB,
        filterAllocations / Double(stream.samples.count), "mp4toannexb (av_bsf)", "allocs/sample", target: "0")

    // The gather list on samples whose bytes are their own (copied first,
    // outside the count): only keyframes allocate (the list of sets to
    // insert and their bytes).
    var copies = stream.samples.map { sample in
        var copy = sample
        copy.data = distinctCopy(sample.data)
        return copy
    }
    var lists: [AnnexBGatherList] = []
    lists.reserveCapacity(copies.count)
    var gatherer = AnnexBWriter(policy: .beforeEveryKeyframe)
    let placeholder = CompressedSample(
        data: [], formatDescription: stream.description, pts: .zero, dts: .zero, duration: .zero, isKeyframe: false)
    let gatherAllocations = try allocations {
        for index in copies.indices {
            var sample = placeholder
            swap(&sample, &copies[index])
            lists.append(try gatherer.gather(consume sample))
        }
    }
    add(
        "length-prefixed→Annex-B gather list heap allocations per sample",
        gatherAllocations / Double(stream.samples.count), filterAllocations / Double(stream.samples.count),
        "mp4toannexb (av_bsf)", "allocs/sample")

    let codec = stream.codec
    let (toLength, _) = try steadyState(count: stream.annexBUnits.count, warmUp: warmUp) { index in
        _ = try stream.annexBUnits[index].withUnsafeBytes {
            try AnnexB.lengthPrefixed(from: $0, codec: codec, into: &reused)
        }
    }
    // The C converter counted the same way: warm-up steps, then the rest.
    let cConverter = CConverter(codec: codec)
    let (cToLength, _) = try steadyState(count: stream.annexBUnits.count, warmUp: warmUp) { index in
        _ = cConverter.convert(stream.annexBUnits[index])
    }
    add(
        "Annex-B→length-prefixed heap allocations per access unit", toLength, cToLength, CConverter.name,
        "allocs/unit", target: "0")
}

/// Runs `step` for indices `0..<count`; returns the heap allocations per step
/// after the first `warmUp` steps, and the peak RSS growth in MiB over the
/// RSS before the first step (which already holds the inputs).
func steadyState(count: Int, warmUp: Int, _ step: (Int) throws -> Void) throws -> (
    allocationsPerStep: Double, peakGrowth: Double
) {
    _ = cbench_reset_peak_rss()
    let baseline = cbench_current_rss_kb()
    var before = cbench_allocation_count()
    for index in 0..<count {
        if index == warmUp { before = cbench_allocation_count() }
        try step(index)
    }
    let allocations = Double(cbench_allocation_count() - before) / Double(max(1, count - warmUp))
    return (allocations, Double(cbench_peak_rss_kb() - baseline) / 1024)
}

/// Heap allocations made while `body` runs.
func allocations(_ body: () throws -> Void) rethrows -> Double {
    let before = cbench_allocation_count()
    try body()
    return Double(cbench_allocation_count() - before)
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
