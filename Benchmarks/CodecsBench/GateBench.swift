import CBenchSupport
import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import RTPPayload

/// `codecs-bench --gate`: the deterministic regions of `make bench-gate`.
///
/// Run under `valgrind --tool=callgrind`, each region sits between
/// `cbench_gate_region_begin` (counters of every thread zeroed) and
/// `cbench_gate_region_end(name)` (a profile dump triggered by "name"), so
/// each dump holds that region's instructions alone. Inputs are small and
/// every library runs with one thread, so the counts repeat run to run.
/// What the regions did (frames, samples, bytes, allocation counts) is
/// written to `resultPath` for `--gate-compare`.
func runGate(resultPath: String) throws {
    func log(_ text: String) { FileHandle.standardError.write(Data("codecs-bench gate: \(text)\n".utf8)) }
    if cbench_under_valgrind() == 0 {
        log("not running under valgrind: the regions run, but no instruction counts are recorded")
    }
    var result = GateRun()
    let frames = syntheticFrames(width: GateRun.width, height: GateRun.height, count: GateRun.frameCount)

    // Encoding: the session against the plain library loop, same frames and
    // settings, one thread each. Each library runs once first, unmeasured:
    // x265 fills static tables on first use (BitCost::setQP, 21 M
    // instructions here), which would otherwise land in whichever side ran first.
    let x264 = EncodeSettings(preset: "veryfast", threadCount: 1)
    _ = try rawX264Encode(frames, settings: x264)
    var samples: [CompressedSample] = []
    try region("encode x264 session", units: frames.count, unit: "frame", into: &result) {
        samples = try gateSessionEncode(frames, codec: .h264, settings: x264)
    }
    var rawBytes = 0
    try region("encode x264 raw", units: frames.count, unit: "frame", into: &result) {
        rawBytes = try rawX264Encode(frames, settings: x264)
    }
    result.notes.append(sameSettingsNote("x264", samples, rawBytes: rawBytes))

    let hevcFrames = Array(frames.prefix(GateRun.hevcFrameCount))
    let x265 = EncodeSettings(preset: "ultrafast", threadCount: 1)
    _ = try rawX265Encode(hevcFrames, settings: x265)
    var hevcSamples: [CompressedSample] = []
    try region("encode x265 session", units: hevcFrames.count, unit: "frame", into: &result) {
        hevcSamples = try gateSessionEncode(hevcFrames, codec: .hevc, settings: x265)
    }
    var rawHEVCBytes = 0
    try region("encode x265 raw", units: hevcFrames.count, unit: "frame", into: &result) {
        rawHEVCBytes = try rawX265Encode(hevcFrames, settings: x265)
    }
    result.notes.append(sameSettingsNote("x265", hevcSamples, rawBytes: rawHEVCBytes))

    // Decoding the x264 stream: the session against libavcodec's own loop.
    let stream = try CodedStream(label: "gate x264", samples: samples)
    _ = try rawLibavcodecDecode(stream, threads: 1)
    var sessionFrames = 0
    try region("decode session", units: samples.count, unit: "frame", into: &result) {
        let session = try DecompressionSession(
            formatDescription: stream.description, decoder: .software, threadCount: 1)
        for sample in stream.samples { sessionFrames += try session.decode(sample).count }
        sessionFrames += try session.finish().count
    }
    var rawFrames = 0
    try region("decode raw", units: samples.count, unit: "frame", into: &result) {
        rawFrames = try rawLibavcodecDecode(stream, threads: 1)
    }
    guard sessionFrames == rawFrames, sessionFrames == frames.count else {
        throw MediaError.backendFailure("gate decode: session \(sessionFrames) frames, libavcodec \(rawFrames)")
    }

    // FormatConv and RTP over the same stream, one reused output each.
    var sink = 0
    var reused: [UInt8] = []
    try region("length-prefixed to Annex-B", units: samples.count, unit: "sample", into: &result) {
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        for sample in stream.samples {
            try writer.write(sample, into: &reused)
            sink &+= reused.count
        }
    }
    let codec = stream.codec
    try region("Annex-B to length-prefixed", units: stream.annexBUnits.count, unit: "unit", into: &result) {
        for unit in stream.annexBUnits {
            _ = try unit.withUnsafeBytes { try AnnexB.lengthPrefixed(from: $0, codec: codec, into: &reused) }
            sink &+= reused.count
        }
    }
    try region("AccessUnitAssembler", units: stream.annexBUnits.count, unit: "unit", into: &result) {
        var assembler = AccessUnitAssembler(codec: codec)
        stream.annexB.withUnsafeBufferPointer { all in
            var offset = 0
            while offset < all.count {
                let end = min(offset + 65536, all.count)
                sink &+= assembler.append(UnsafeBufferPointer(rebasing: all[offset..<end])).count
                offset = end
            }
        }
        sink &+= assembler.finish().count
    }
    var packets = 0
    try region("RTP packetize", units: samples.count, unit: "sample", into: &result) {
        var packetizer = RTPPacketizer(codec: codec, ssrc: 0x1234_5678)
        var batch = RTPPacketBatch()
        for sample in stream.samples {
            batch.removeAll()
            try packetizer.packetize(sample, into: &batch)
            packets += batch.count
        }
    }
    result.notes.append("RTP: \(packets) packets; FormatConv checksum \(sink)")

    // Heap allocations per decoded frame after a warm-up, ours and
    // libavcodec's own loop, counted by the interposed allocator (the same
    // helpers as `--only memory`).
    let warmUp = samples.count / 3
    let decoder = try DecompressionSession(formatDescription: stream.description, decoder: .software, threadCount: 1)
    let (oursAllocations, _) = try steadyState(count: samples.count, warmUp: warmUp) { index in
        _ = try decoder.decode(stream.samples[index])
    }
    _ = try decoder.finish()
    let rawAllocations = try allocationsPerFrame(frames: samples.count, warmUp: warmUp) { limit in
        var partial = stream
        partial.samples = Array(stream.samples.prefix(limit))
        _ = try rawLibavcodecDecode(partial, threads: 1)
    }
    result.allocations["decode session"] = oursAllocations
    result.allocations["decode raw"] = rawAllocations
    log("decode heap allocations per frame: session \(oursAllocations), libavcodec loop \(rawAllocations)")

    let data = try JSONEncoder.sorted.encode(result)
    try data.write(to: URL(fileURLWithPath: resultPath))
}

/// Whether the session and the plain loop made the same stream, byte count
/// for byte count: the session puts the version SEI that the encoder returns
/// with its headers in front of the first picture, the plain loop (headers
/// not repeated) never writes it, so the first sample's leading SEI NAL units
/// are left out of the session's count.
private func sameSettingsNote(_ name: String, _ samples: [CompressedSample], rawBytes: Int) -> String {
    let total = samples.reduce(0) { $0 + $1.data.count }
    var seiBytes = 0
    if let first = samples.first, first.formatDescription.nalUnitHeaderLength == 4 {
        let bytes = Array(first.data)
        let hevc = first.formatDescription.codec == .hevc
        var offset = 0
        while offset + 5 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let header = bytes[offset + 4]
            let isSEI = hevc ? (header >> 1) & 0x3F == 39 : header & 0x1F == 6
            guard isSEI else { break }
            seiBytes += 4 + length
            offset += 4 + length
        }
    }
    let verdict =
        total - seiBytes == rawBytes
        ? "the same stream" : "DIFFERENT streams: the settings differ, so the ratio compares different work"
    return "\(name): session \(total) bytes (\(seiBytes) of them the leading version SEI), plain loop "
        + "\(rawBytes) bytes: \(verdict)"
}

/// Runs `body` as one measured region named `name`.
private func region(
    _ name: String, units: Int, unit: String, into result: inout GateRun, _ body: () throws -> Void
) throws {
    cbench_gate_region_begin()
    try body()
    cbench_gate_region_end(name)
    result.regions.append(GateRun.Region(name: name, units: units, unit: unit))
}

/// CompressionSession over `frames`, as the encode figures run it.
private func gateSessionEncode(_ frames: [PixelBuffer], codec: CodecType, settings: EncodeSettings) throws
    -> [CompressedSample]
{
    let session = try CompressionSession(
        width: frames[0].width, height: frames[0].height, codec: codec, encoder: .software,
        properties: settings.properties())
    var samples: [CompressedSample] = []
    for (index, frame) in frames.enumerated() {
        samples += try session.encode(
            frame, pts: MediaTime(value: Int64(index), timescale: 30), duration: MediaTime(value: 1, timescale: 30))
    }
    samples += try session.finish()
    return samples
}

/// What `--gate` ran, for `--gate-compare`.
struct GateRun: Codable {
    static let width = 640
    static let height = 360
    static let frameCount = 30
    static let hevcFrameCount = 8

    struct Region: Codable {
        var name: String
        /// Frames, samples or access units the region went through.
        var units: Int
        var unit: String
    }
    var regions: [Region] = []
    /// Heap allocations per decoded frame in steady state.
    var allocations: [String: Double] = [:]
    var notes: [String] = []
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }
}
