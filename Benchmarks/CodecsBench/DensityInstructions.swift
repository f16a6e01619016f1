// Density in instructions: one live pipeline against the raw libraries paced alike, counted by callgrind.
import CBenchSupport
import CX264
import Foundation
import MediaCore

/// `codecs-bench --density-instructions DIR` (run by
/// `scripts/density-instructions` under `valgrind --tool=callgrind
/// --callgrind-out-file=DIR/callgrind.out`): for each preset, one live
/// pipeline as the density section runs it (`CompressionSession` →
/// `RTPStreamSender` → 127.0.0.1 → `RTPStreamReceiver` →
/// `DecompressionSession`, its sending and receiving threads, the bench's
/// bookkeeping and the main thread's polling of `/proc`; the sampled PSNRs
/// left out, as the CPU figure leaves them out), then the raw libx264 loop
/// and the raw libavcodec loop paced alike, over the same frame sequence
/// (the density schedule: warm-up, measured frames, tail, the clip looped).
/// Each is a region of its own (see GateBench.swift): its dump holds the
/// instructions of every thread of the process over that span. CPU time
/// moves ±10 % on a shared machine; the codecs' instruction counts repeat
/// run to run, the pipeline's own part depends a little on how often its
/// waits time out under valgrind's slower clock. The sessions are made
/// before ours' region starts (as for the CPU figure); the raw encode
/// region includes `x264_encoder_open`.
func runDensityInstructions(directory: String, presets: [String], quick: Bool) throws {
    func log(_ text: String) {
        FileHandle.standardError.write(Data("codecs-bench density-instructions: \(text)\n".utf8))
    }
    let underValgrind = cbench_under_valgrind() != 0
    if !underValgrind { log("not running under valgrind: the regions run, but no instruction counts are recorded") }
    // The density section's frames and schedule (Run.swift).
    let frames = Array(syntheticFrames(width: 1280, height: 720, count: quick ? 60 : 300).prefix(quick ? 45 : 90))
    let schedule = DensitySchedule(warmUp: quick ? 15 : 30, measured: frames.count, tail: 10)
    let sequence = (0..<schedule.total).map { frames[$0 % frames.count] }
    var rows: [(preset: String, frames: Int)] = []
    for preset in presets {
        let settings = liveSettings(preset: preset)
        // Each library once, unmeasured, so that one-time set-up (static
        // tables) lands in neither side.
        let warm = try encodeStream(Array(frames.prefix(3)), codec: .h264, settings: settings, label: "warm")
        _ = try rawX264Encode(Array(frames.prefix(3)), settings: settings)
        _ = try rawLibavcodecDecode(warm, threads: 1)

        log("\(preset): one pipeline, \(schedule.total) frames")
        let run = try runPipelines(frames, count: 1, settings: settings, schedule: schedule, measuresPSNR: false) {
            started in
            if started { cbench_gate_region_begin() } else { cbench_gate_region_end("density ours \(preset)") }
        }
        guard run.framesDecoded == schedule.total else {
            throw MediaError.backendFailure(
                "density-instructions \(preset): the pipeline decoded \(run.framesDecoded) of \(schedule.total)")
        }

        log("\(preset): raw libx264 and libavcodec paced at 30 fps, \(schedule.total) frames")
        var encoded = 0
        var start = monotonicNow()
        cbench_gate_region_begin()
        _ = try rawX264Encode(sequence, settings: settings) { _ in
            encoded += 1
            sleepUntil(start + Double(encoded) / liveFrameRate)
        }
        cbench_gate_region_end("density raw encode \(preset)")
        // The raw encode region opens its encoder, ours' sessions are made
        // before its region: what opening (and closing) one costs, apart.
        var parameters = try rawX264Parameters(settings, width: frames[0].width, height: frames[0].height)
        cbench_gate_region_begin()
        if let encoder = CX264_encoder_open(&parameters) { x264_encoder_close(encoder) }
        cbench_gate_region_end("density raw x264 open \(preset)")
        let stream = try encodeStream(sequence, codec: .h264, settings: settings, label: "density \(preset)")
        var decodedCalls = 0
        start = monotonicNow()
        cbench_gate_region_begin()
        let decoded = try rawLibavcodecDecode(stream, threads: 1) { _ in
            decodedCalls += 1
            sleepUntil(start + Double(decodedCalls) / liveFrameRate)
        }
        cbench_gate_region_end("density raw decode \(preset)")
        guard encoded == schedule.total, decoded == schedule.total else {
            throw MediaError.backendFailure(
                "density-instructions \(preset): raw loops encoded \(encoded), decoded \(decoded) of \(schedule.total)")
        }
        rows.append((preset, schedule.total))

        // The reference the density section prints beside ours: the clip
        // once (warm-up, looping and tail left out), paced alike.
        encoded = 0
        start = monotonicNow()
        cbench_gate_region_begin()
        _ = try rawX264Encode(frames, settings: settings) { _ in
            encoded += 1
            sleepUntil(start + Double(encoded) / liveFrameRate)
        }
        cbench_gate_region_end("density raw encode \(preset), the clip once")
        let once = try encodeStream(frames, codec: .h264, settings: settings, label: "density \(preset) once")
        decodedCalls = 0
        start = monotonicNow()
        cbench_gate_region_begin()
        _ = try rawLibavcodecDecode(once, threads: 1) { _ in
            decodedCalls += 1
            sleepUntil(start + Double(decodedCalls) / liveFrameRate)
        }
        cbench_gate_region_end("density raw decode \(preset), the clip once")
    }
    guard underValgrind else { return }
    let counts = try callgrindRegionCounts(in: directory)
    print(
        "| preset | frames | ours (instructions/frame) | raw paced: libx264 + libavcodec | ours / raw "
            + "| x264 open + close | ours / raw, encoder opening out |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (preset, total) in rows {
        guard let ours = counts["density ours \(preset)"], let encode = counts["density raw encode \(preset)"],
            let decode = counts["density raw decode \(preset)"], let open = counts["density raw x264 open \(preset)"]
        else { throw GateError("no callgrind dumps for \(preset) in \(directory)") }
        let perFrame = { (value: Int64) in Double(value) / Double(total) / 1e6 }
        print(
            "| \(preset) | \(total) | "
                + String(
                    format: "%.3f M | %.3f M (%.3f M + %.3f M) | %.4f | %.3f M | %.4f |", perFrame(ours),
                    perFrame(encode + decode), perFrame(encode), perFrame(decode),
                    Double(ours) / Double(encode + decode),
                    perFrame(open), Double(ours) / Double(encode + decode - open)))
    }
    for (preset, _) in rows {
        if let encodeOnce = counts["density raw encode \(preset), the clip once"],
            let decodeOnce = counts["density raw decode \(preset), the clip once"]
        {
            let clip = Double(frames.count)
            print(
                String(
                    format: "\(preset): raw paced over the clip once (%d frames, the density section's reference): "
                        + "%.3f M instructions per frame (%.3f M + %.3f M)", frames.count,
                    Double(encodeOnce + decodeOnce) / clip / 1e6, Double(encodeOnce) / clip / 1e6,
                    Double(decodeOnce) / clip / 1e6))
        }
    }
}
