// Density: the live settings, the rows (ours against FFmpeg's pairs and the raw libraries), decode-only processes.
import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import Synchronization

/// The live settings every density figure uses, ours and FFmpeg's: x264
/// `preset` with the zero-latency tune (no look-ahead, no B-frames, one
/// frame in, one out), 1.5 Mbit/s CBR (HRD, filler, a one-second VBV), a
/// keyframe every 120 frames, one encoder thread and one decoder thread
/// per session (many sessions share the cores; see bench/README.md).
func liveSettings(preset: String, bitRate: Int = 1_500_000) -> EncodeSettings {
    EncodeSettings(
        preset: preset, keyint: 120, realTime: true, threadCount: 1, bitRate: bitRate, constantBitRate: true)
}

/// Frames per second of every live pipeline.
let liveFrameRate = 30.0
/// Luma PSNR every sampled frame of a real-time session must reach.
let densityPSNRFloor = 30.0

/// What N concurrent pipelines did.
struct DensityRun {
    var sessions: Int
    /// Pipelines: sessions meeting ``DensityCriterion``; decoders: real-time
    /// (every frame, 95 % within a frame interval of its due time).
    var realTime: Int
    /// Sessions that decoded every frame at ≥ 0.97 × 30 fps, latency aside.
    var keepingRate: Int
    /// CPU milliseconds per frame of the sending threads (encode, packetize,
    /// send) and of the receiving threads (receive, depacketize, decode).
    var sendingMilliseconds = 0.0
    var receivingMilliseconds = 0.0
    /// Of those, the kernel's (system CPU) per frame, and the threads'
    /// voluntary context switches (wake-ups) per frame.
    var sendingKernelMilliseconds = 0.0
    var receivingKernelMilliseconds = 0.0
    var sendingWakeUps = 0.0
    var receivingWakeUps = 0.0
    var cpuMillisecondsPerFrame: Double
    var residentBytesPerSession: Double
    var threadsPerSession: Double
    var latencyP50: Double
    var latencyP95: Double
    var latencyP99 = Double.nan
    var latencyMaximum = Double.nan
    /// Pipelines: each part of the criterion (nil for decoders).
    var tally: DensityTally?
    var load = DensityLoad()
    var minimumPSNR: Double
    var framesDecoded: Int
    var framesExpected: Int
    /// p50 seconds of each stage: submitted → encoded → sent → sample out of
    /// the RTP receiver → picture out of the decoder.
    var stages: [Double] = []
}

/// Density (the method of Intel's media-delivery tables): for each row
/// (preset, N), N live 720p30 pipelines in this process, each
/// `CompressionSession` → `RTPStreamSender` → loopback → `RTPStreamReceiver`
/// → `DecompressionSession`, then N `ffmpeg` encoder/decoder process pairs
/// doing the same work, both fed the same frames on one capture clock and
/// held to one ``DensityCriterion``; then decoding alone for
/// `decoderCounts`. Returns the figures for the curves.
func benchmarkDensity(
    _ frames: [PixelBuffer], rows: [(preset: String, count: Int)], decoderCounts: [Int], defaultThreadsCount: Int?,
    warmUp: Int, report: Report, log: (String) -> Void
) throws -> (pipelines: [String: [(DensityRun, FFmpegDensityRun?)]], decoders: [(DensityRun, FFmpegDensityRun?)]) {
    var curves: [String: [(DensityRun, FFmpegDensityRun?)]] = [:]
    let schedule = DensitySchedule(warmUp: warmUp, measured: frames.count, tail: 10)
    report.notes.append(
        "density: every session, ours and FFmpeg's, runs \(schedule.total) frames at 30 fps (\(schedule.warmUp) "
            + "warm-up, \(schedule.measured) measured, \(schedule.tail) tail); it meets the criterion when every "
            + "warm-up and measured frame is decoded, the measured ones at ≥ 0.97 × 30 fps and each within 66.7 ms "
            + "of its capture, with every tenth picture's luma PSNR ≥ 30 dB")
    var rawCosts:
        [String: (
            back: (encode: Double, decode: Double), paced: (encode: Double, decode: Double),
            pacedKernel: (encode: Double, decode: Double)
        )] = [:]
    for (preset, count) in rows {
        let settings = liveSettings(preset: preset)
        if rawCosts[preset] == nil {
            // The raw libraries with the same settings, one thread, this run.
            let raw = try rawLibraryCost(frames, settings: settings)
            let paced = try rawLibraryCost(frames, settings: settings, paced: true)
            rawCosts[preset] = ((raw.encode, raw.decode), (paced.encode, paced.decode), paced.kernel)
        }
        let (raw, rawPaced, rawPacedKernel) = rawCosts[preset]!
        log("density: \(count) x264 \(preset) pipelines, then \(count) ffmpeg process pairs")
        let ours = try runPipelines(frames, count: count, settings: settings, schedule: schedule)
        var theirs: FFmpegDensityRun?
        do {
            theirs = try runFFmpegPacedPairs(frames, count: count, preset: preset, schedule: schedule)
        } catch {
            report.notes.append("density: ffmpeg reference for \(count) \(preset) not measured: \(error)")
        }
        curves[preset, default: []].append((ours, theirs))
        reportDensityRow(
            preset: preset, count: count, ours: ours, theirs: theirs, raw: raw.encode + raw.decode,
            rawPaced: rawPaced.encode + rawPaced.decode, report: report)
        report.notes.append(
            String(
                format: "density \(preset) ×\(count): ours: CPU ms per frame: sending threads %.2f (raw x264 %.2f, "
                    + "paced %.2f), receiving threads %.2f (raw libavcodec %.2f, paced %.2f); of them in the kernel "
                    + "%.3f and %.3f (raw paced %.3f and %.3f); wake-ups per frame %.2f and %.2f; ",
                ours.sendingMilliseconds, raw.encode, rawPaced.encode, ours.receivingMilliseconds, raw.decode,
                rawPaced.decode, ours.sendingKernelMilliseconds, ours.receivingKernelMilliseconds,
                rawPacedKernel.encode, rawPacedKernel.decode, ours.sendingWakeUps, ours.receivingWakeUps)
                + "stages p50 (encode, packetize and send, loopback to a sample, decode): "
                + ours.stages.map { String(format: "%.2f ms", $0 * 1000) }.joined(separator: ", ") + "; "
                + "run \(ours.load.summary)"
                + (theirs.map {
                    String(
                        format: "; ffmpeg: the bench's pipe threads %.2f CPU ms per frame (not in FFmpeg's figure), "
                            + "start-up %.2f CPU s for all processes (left out); ",
                        $0.bridgeMillisecondsPerFrame, $0.startUpSeconds)
                        + ($0.stages.map {
                            String(
                                format: "capture → last RTP packet on the wire p50 %.2f ms, p99 %.2f ms; wire → "
                                    + "picture read back p50 %.2f ms, p99 %.2f ms; ", $0.sender.p50 * 1000,
                                $0.sender.p99 * 1000, $0.receiver.p50 * 1000, $0.receiver.p99 * 1000)
                        } ?? "") + "run \($0.load.summary); \($0.detail)"
                } ?? ""))
    }

    // The same pipelines with the libraries' own thread counts (x264: 1.5 ×
    // the cores, sliced under zerolatency; libavcodec: one frame thread per
    // core), to show what each session's pool costs when many share a host.
    if let count = defaultThreadsCount {
        var settings = liveSettings(preset: "ultrafast")
        settings.threadCount = nil
        log("density: \(count) x264 ultrafast pipelines with the libraries' default thread counts")
        let run = try runPipelines(frames, count: count, settings: settings, schedule: schedule, decoderThreads: nil)
        let name = "density 720p30 x264 ultrafast 1.5 Mbit/s CBR, \(count) sessions, library-default threads"
        report.add(
            Figure(
                name: "\(name): sessions meeting the criterion", ours: Double(run.realTime), reference: nil,
                referenceName: nil,
                unit: "of \(count)", higherIsBetter: true, target: nil))
        report.add(
            Figure(
                name: "\(name): CPU per frame", ours: run.cpuMillisecondsPerFrame, reference: nil, referenceName: nil,
                unit: "CPU ms", higherIsBetter: false, target: nil))
        report.add(
            Figure(
                name: "\(name): threads per session", ours: run.threadsPerSession, reference: nil, referenceName: nil,
                unit: "threads", higherIsBetter: false, target: nil))
        report.add(
            Figure(
                name: "\(name): latency p50", ours: run.latencyP50 * 1000, reference: nil, referenceName: nil,
                unit: "ms", higherIsBetter: false, target: nil))
    }

    // Pacing by RTPStreamSender.poll(for:), as its documentation suggests,
    // instead of sleeping: what the waiting itself costs.
    do {
        let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port, configuration: .init(packetizer: .init(codec: .h264, ssrc: 7)))
        let cpu = threadCPUSeconds()
        let start = monotonicNow()
        for index in 1...30 { _ = try sender.poll(for: start + Double(index) / liveFrameRate - monotonicNow()) }
        report.notes.append(
            String(
                format: "density: pacing one second at 30 fps with RTPStreamSender.poll(for:) used %.1f CPU ms",
                (threadCPUSeconds() - cpu) * 1000))
    }

    // Decoding alone: a stream made with the ultrafast live settings.
    guard !decoderCounts.isEmpty else { return (curves, []) }
    let stream = try encodeStream(
        frames, codec: .h264, settings: liveSettings(preset: "ultrafast"), label: "x264 live")
    let annexBPath = FileManager.default.temporaryDirectory.appendingPathComponent("codecs-bench-\(getpid()).h264")
        .path
    try Data(stream.annexB).write(to: URL(fileURLWithPath: annexBPath))
    defer { try? FileManager.default.removeItem(atPath: annexBPath) }
    var decoders: [(DensityRun, FFmpegDensityRun?)] = []
    let rawStart = threadCPUSeconds()
    let rawFrames = try rawLibavcodecDecode(stream, threads: 1)
    let rawDecode = (threadCPUSeconds() - rawStart) * 1000 / Double(max(rawFrames, 1))
    for count in decoderCounts {
        log("density: \(count) paced decoders, then \(count) ffmpeg -re decode processes")
        let ours = try runDecoders(stream, count: count)
        var theirs: FFmpegDensityRun?
        do {
            theirs = try runFFmpegDecoders(path: annexBPath, frames: stream.samples.count, count: count)
        } catch {
            report.notes.append("density: ffmpeg decoders for \(count) not measured: \(error)")
        }
        decoders.append((ours, theirs))
        report.notes.append(
            String(
                format: "density decode-only ×%d: decoding threads %.2f CPU ms per frame, raw libavcodec "
                    + "back to back %.2f; ", count, ours.receivingMilliseconds, rawDecode)
                + "ffmpeg \(theirs?.detail ?? "-")")
        let name = "density decode-only 720p30 x264 ultrafast 1.5 Mbit/s, \(count) sessions"
        report.add(
            Figure(
                name: "\(name): real-time sessions", ours: Double(ours.realTime),
                reference: theirs.map { Double($0.realTime) }, referenceName: "ffmpeg -re decode processes",
                unit: "of \(count)", higherIsBetter: true, target: "≥ FFmpeg's"))
        if let theirs {
            report.add(
                Figure(
                    name: "\(name): CPU per frame", ours: ours.cpuMillisecondsPerFrame,
                    reference: theirs.cpuMillisecondsPerFrame, referenceName: "ffmpeg -re decode processes",
                    unit: "CPU ms", higherIsBetter: false, target: nil))
        }
    }
    return (curves, decoders)
}

/// CPU milliseconds per frame of the raw libraries with `settings`, one
/// thread each: libx264 encoding `frames`, libavcodec decoding the result;
/// and their per-frame times (seconds) for the latency floor. `paced`:
/// each loop sleeps after every frame until the next is due at 30 fps, as
/// a live session waits for its next frame (caches go cold in between);
/// otherwise the frames go back to back.
func rawLibraryCost(_ frames: [PixelBuffer], settings: EncodeSettings, paced: Bool = false) throws -> (
    encode: Double, decode: Double, encodeTimes: [Double], decodeTimes: [Double],
    kernel: (encode: Double, decode: Double)
) {
    var encodeTimes: [Double] = []
    var start = monotonicNow()
    let encodeStart = threadCPUSeconds()
    let encodeKernel = threadKernelUsage().systemSeconds
    _ = try rawX264Encode(frames, settings: settings) {
        encodeTimes.append($0)
        if paced { sleepUntil(start + Double(encodeTimes.count) / liveFrameRate) }
    }
    let encodeCPU = threadCPUSeconds() - encodeStart
    let encodeKernelCPU = threadKernelUsage().systemSeconds - encodeKernel
    let stream = try encodeStream(frames, codec: .h264, settings: settings, label: "live")
    var decodeTimes: [Double] = []
    start = monotonicNow()
    let decodeStart = threadCPUSeconds()
    let decodeKernel = threadKernelUsage().systemSeconds
    let decoded = try rawLibavcodecDecode(stream, threads: 1) {
        decodeTimes.append($0)
        if paced { sleepUntil(start + Double(decodeTimes.count) / liveFrameRate) }
    }
    let decodeCPU = threadCPUSeconds() - decodeStart
    let decodeKernelCPU = threadKernelUsage().systemSeconds - decodeKernel
    let perFrame = 1000 / Double(frames.count)
    let perPicture = 1000 / Double(max(decoded, 1))
    return (
        encodeCPU * perFrame, decodeCPU * perPicture, encodeTimes, decodeTimes,
        (encodeKernelCPU * perFrame, decodeKernelCPU * perPicture)
    )
}

/// The x264 options of ``liveSettings(preset:bitRate:)`` as ffmpeg's
/// libx264 wrapper takes them.
func ffmpegLiveEncoderArguments(preset: String, bitRate: Int = 1_500_000) -> [String] {
    let kbps = "\(bitRate / 1000)k"
    return [
        "-c:v", "libx264", "-preset", preset, "-tune", "zerolatency", "-threads", "1", "-b:v", kbps, "-maxrate",
        kbps, "-bufsize", kbps, "-x264-params", "nal-hrd=cbr:filler=1", "-g", "120", "-sc_threshold", "0", "-bf",
        "0",
    ]
}

/// N `ffmpeg -re -f h264 -framerate 30 -threads 1 -i STREAM -f null -`:
/// real-time when it decoded every frame at a final `speed` of at least 0.97.
private func runFFmpegDecoders(path: String, frames: Int, count: Int) throws -> FFmpegDensityRun {
    let cpuBefore = childrenCPUSeconds()
    let children = try (0..<count).map { index in
        try FFmpegChild(
            ["-re", "-f", "h264", "-framerate", "30", "-threads", "1", "-i", path, "-f", "null", "-"],
            tag: "dec\(index)")
    }
    for child in children { child.process.waitUntilExit() }
    let cpu = childrenCPUSeconds() - cpuBefore
    var realTime = 0
    var decoded = 0
    var detail: [String] = []
    for child in children {
        let values = child.progress()
        let got = Int(values["frame"] ?? "") ?? 0
        decoded += got
        detail.append(String(format: "%.2fs/", child.wallSeconds) + "\(values["speed"] ?? "?")/\(got)")
        if child.process.terminationStatus == 0, speed(values["speed"]) >= 0.97, got >= frames {
            realTime += 1
        }
        child.remove()
    }
    return FFmpegDensityRun(
        sessions: count, realTime: realTime, cpuMillisecondsPerFrame: cpu * 1000 / Double(max(decoded, 1)),
        detail: "wall/speed/frames " + detail.joined(separator: " "))
}

/// `"1.02x"` → 1.02 (0 when absent).
private func speed(_ text: String?) -> Double {
    Double(text?.trimmingCharacters(in: CharacterSet(charactersIn: "x ")) ?? "") ?? 0
}

/// An even UDP port on the loopback with the one above it free (RTP and RTCP).
func freeRTPPort() throws -> Int {
    for _ in 0..<64 {
        let socket = try UDPSocket(bindingTo: "127.0.0.1")
        let port = Int(socket.localAddress.port)
        guard port % 2 == 0, port < 65534, let above = try? UDPSocket(bindingTo: "127.0.0.1", port: UInt16(port + 1))
        else { continue }
        socket.close()
        above.close()
        return port
    }
    throw MediaError.unavailable("no free pair of UDP ports on the loopback")
}
