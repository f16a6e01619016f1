import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore

/// Per-frame latency of encode → Annex-B → assemble → decode in one thread,
/// with zero-latency settings, and the frames of delay it adds.
func benchmarkRoundTrip(_ frames: [PixelBuffer], report: Report) throws {
    let settings = EncodeSettings(preset: "veryfast", realTime: true)
    let encoder = try CompressionSession(
        width: frames[0].width, height: frames[0].height, codec: .h264, encoder: .software,
        properties: settings.properties())
    var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
    var assembler = AccessUnitAssembler(codec: .h264, frameDuration: MediaTime(value: 1, timescale: 30))
    var decoder: DecompressionSession?
    var started: [Int64: ContinuousClock.Instant] = [:]
    var latencies: [Double] = []
    var delays: [Int] = []

    func consume(_ outputs: [AssemblerOutput], inputIndex: Int) throws {
        for case .sample(let sample) in outputs {
            if decoder == nil {
                decoder = try DecompressionSession(
                    formatDescription: sample.formatDescription, decoder: .software, threadCount: 1)
            }
            for frame in try decoder!.decode(sample) {
                let index = frame.pts.converted(toTimescale: 30).value
                if let start = started[index] {
                    let elapsed = start.duration(to: .now)
                    latencies.append(
                        Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) * 1e-15)
                    delays.append(inputIndex - Int(index))
                }
            }
        }
    }

    for (index, frame) in frames.enumerated() {
        started[Int64(index)] = .now
        let samples = try encoder.encode(
            frame, pts: MediaTime(value: Int64(index), timescale: 30), duration: MediaTime(value: 1, timescale: 30))
        for sample in samples {
            try consume(assembler.append(try writer.write(sample)), inputIndex: index)
            // The transport knows where each access unit ends (one send per
            // unit), so the receiver need not wait for the next one.
            try consume(assembler.endAccessUnit(), inputIndex: index)
        }
    }
    // After the last input, what is still held anywhere counts against the
    // last input's index.
    let last = frames.count - 1
    for sample in try encoder.finish() { try consume(assembler.append(try writer.write(sample)), inputIndex: last) }
    try consume(assembler.finish(), inputIndex: last)
    if let decoder {
        for frame in try decoder.finish() {
            let index = frame.pts.converted(toTimescale: 30).value
            delays.append(last - Int(index))
        }
    }
    let size = "\(frames[0].width)x\(frames[0].height)"
    report.add(
        Figure(
            name: "round trip \(size) zero-latency p50", ours: percentile(latencies, 50), reference: nil,
            referenceName: nil, unit: "ms", higherIsBetter: false, target: nil))
    report.add(
        Figure(
            name: "round trip \(size) zero-latency p95", ours: percentile(latencies, 95), reference: nil,
            referenceName: nil, unit: "ms", higherIsBetter: false, target: nil))
    // Frames of delay over every frame: p50, p99 (nearest rank) and the most.
    for (label, value, target) in [
        ("p50", NearestRank.percentile(50, of: delays), "0"), ("p99", NearestRank.percentile(99, of: delays), "≤ 1"),
        ("max", delays.max(), nil),
    ] {
        report.add(
            Figure(
                name: "round trip \(size) frames of delay (\(label))", ours: Double(value ?? -1), reference: nil,
                referenceName: nil, unit: "frames", higherIsBetter: false, target: target))
    }
    if delays.count != frames.count {
        report.notes.append("round trip: \(delays.count) of \(frames.count) frames came back")
    }
}
