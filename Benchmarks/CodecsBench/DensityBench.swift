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

/// One pipeline's measurements, shared by its sending and receiving threads.
private final class PipelineLog: Sendable {
    struct State {
        var submitted: [Double]
        /// When each frame left the encoder, left the RTP sender, came out of
        /// the RTP receiver as a sample, and came out of the decoder.
        var encodedAt: [Double] = []
        var sentAt: [Double] = []
        var assembledAt: [Double] = []
        var pictureAt: [Double] = []
        var latencies: [Double] = []
        var decodedAt: [Double] = []
        var psnr: [Double] = []
        /// Receiving-thread CPU spent measuring PSNR (not the pipeline's work).
        var measuringCPU = 0.0
        var senderCPU = 0.0
        var receiverCPU = 0.0
        /// Seconds the sending and receiving threads waited on a run queue for a core.
        var waiting = 0.0
        var senderDone = false
        var failure: String?
    }
    let state: Mutex<State>
    init(frames: Int) {
        let unset = [Double](repeating: .nan, count: frames)
        state = Mutex(
            State(submitted: unset, encodedAt: unset, sentAt: unset, assembledAt: unset, pictureAt: unset))
    }
}

/// Counts the threads that have ended.
final class Finished: Sendable {
    let count = Mutex(0)
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
    var rawCosts: [String: (back: (encode: Double, decode: Double), paced: (encode: Double, decode: Double))] = [:]
    for (preset, count) in rows {
        let settings = liveSettings(preset: preset)
        if rawCosts[preset] == nil {
            // The raw libraries with the same settings, one thread, this run.
            let raw = try rawLibraryCost(frames, settings: settings)
            let paced = try rawLibraryCost(frames, settings: settings, paced: true)
            rawCosts[preset] = ((raw.encode, raw.decode), (paced.encode, paced.decode))
        }
        let (raw, rawPaced) = rawCosts[preset]!
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
                    + "paced %.2f), receiving threads %.2f (raw libavcodec %.2f, paced %.2f); ",
                ours.sendingMilliseconds, raw.encode, rawPaced.encode, ours.receivingMilliseconds, raw.decode,
                rawPaced.decode)
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
    encode: Double, decode: Double, encodeTimes: [Double], decodeTimes: [Double]
) {
    var encodeTimes: [Double] = []
    var start = monotonicNow()
    let encodeStart = threadCPUSeconds()
    _ = try rawX264Encode(frames, settings: settings) {
        encodeTimes.append($0)
        if paced { sleepUntil(start + Double(encodeTimes.count) / liveFrameRate) }
    }
    let encodeCPU = threadCPUSeconds() - encodeStart
    let stream = try encodeStream(frames, codec: .h264, settings: settings, label: "live")
    var decodeTimes: [Double] = []
    start = monotonicNow()
    let decodeStart = threadCPUSeconds()
    let decoded = try rawLibavcodecDecode(stream, threads: 1) {
        decodeTimes.append($0)
        if paced { sleepUntil(start + Double(decodeTimes.count) / liveFrameRate) }
    }
    let decodeCPU = threadCPUSeconds() - decodeStart
    return (
        encodeCPU * 1000 / Double(frames.count), decodeCPU * 1000 / Double(max(decoded, 1)), encodeTimes,
        decodeTimes
    )
}

/// Runs `count` pipelines over `schedule` (frame k is `frames[k % frames.count]`;
/// by default every frame once, all measured) at 30 fps, started a 1/count
/// of a frame interval apart (cameras are not frame-locked), and measures
/// them against ``DensityCriterion``. `decoderThreads` nil leaves
/// libavcodec's thread count to the session's default (one per core).
func runPipelines(
    _ frames: [PixelBuffer], count: Int, settings: EncodeSettings, schedule: DensitySchedule? = nil,
    decoderThreads: Int? = 1
) throws -> DensityRun {
    let schedule = schedule ?? DensitySchedule(warmUp: 0, measured: frames.count, tail: 0)
    // Freed heap handed back first, so the growth is the sessions' own.
    trimHeap()
    let before = processStatus()
    let logs = (0..<count).map { _ in PipelineLog(frames: schedule.total) }
    var sides: [(Handoff<CompressionSession>, Handoff<RTPStreamSender>, Handoff<RTPStreamReceiver>)] = []
    for index in 0..<count {
        let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port,
            configuration: .init(packetizer: .init(codec: .h264, ssrc: 0xD000_0000 + UInt32(index))))
        let encoder = try CompressionSession(
            width: frames[0].width, height: frames[0].height, codec: .h264, encoder: .software,
            properties: settings.properties())
        sides.append((Handoff(encoder), Handoff(sender), Handoff(receiver)))
    }
    let finished = Finished()
    let start = monotonicNow() + 0.05
    let cpuBefore = processCPUSeconds()
    let machineBefore = machineBusySeconds()
    for (index, (encoder, sender, receiver)) in sides.enumerated() {
        let log = logs[index]
        let offset = Double(index) / Double(count) / liveFrameRate
        Thread {
            sendPipeline(
                frames, total: schedule.total, encoder: encoder.value, sender: sender.value, log: log,
                start: start + offset)
            finished.count.withLock { $0 += 1 }
        }.start()
        Thread {
            receivePipeline(frames, total: schedule.total, receiver: receiver.value, log: log, threads: decoderThreads)
            finished.count.withLock { $0 += 1 }
        }.start()
    }
    var peak = before
    while finished.count.withLock({ $0 }) < 2 * count {
        let now = processStatus()
        peak = (max(peak.residentBytes, now.residentBytes), max(peak.threads, now.threads))
        usleep(100_000)
    }
    let cpu = processCPUSeconds() - cpuBefore
    let wall = monotonicNow() - start
    let machine = machineBusySeconds() - machineBefore
    sides.removeAll()
    var run = summarize(
        logs, cpu: cpu, frames: schedule.total, count: count, before: before, peak: peak,
        latencyLimit: 2 / liveFrameRate, psnrFloor: densityPSNRFloor)
    // The criterion, on the capture and picture times of each frame.
    let tally = DensityTally(
        logs.map { log in
            let state = log.state.withLock { $0 }
            return DensityCriterion().judge(
                DensitySessionTimes(
                    captured: state.submitted, decoded: state.pictureAt, psnr: state.psnr, failure: state.failure),
                schedule: schedule)
        })
    run.tally = tally
    run.realTime = tally.meeting
    run.keepingRate = tally.keepingRate
    run.latencyP50 = tally.p50
    run.latencyP95 = NearestRank.percentile(95, of: tally.latencies) ?? .nan
    run.latencyP99 = tally.p99
    run.latencyMaximum = tally.maximum
    run.load = DensityLoad(
        wallSeconds: wall, cpuSeconds: cpu, machineBusySeconds: machine,
        runQueueWaitSeconds: logs.reduce(0) { $0 + $1.state.withLock { $0.waiting } }, frames: run.framesDecoded)
    return run
}

/// The sending thread: frame `i` (`frames[i % frames.count]`) is captured
/// at `start + i/30` (its capture time, whenever the thread gets to it),
/// handed to the encoder, and its samples to the RTP sender.
private func sendPipeline(
    _ frames: [PixelBuffer], total: Int, encoder: CompressionSession, sender: RTPStreamSender, log: PipelineLog,
    start: Double
) {
    let cpu = threadCPUSeconds()
    let waited = runQueueWaitSeconds() ?? 0
    defer {
        log.state.withLock {
            $0.senderCPU = threadCPUSeconds() - cpu
            $0.waiting += (runQueueWaitSeconds() ?? waited) - waited
        }
    }
    do {
        let duration = MediaTime(value: 1, timescale: Int32(liveFrameRate))
        for index in 0..<total {
            let due = start + Double(index) / liveFrameRate
            sleepUntil(due)
            log.state.withLock { $0.submitted[index] = due }
            let samples = try encoder.encode(
                frames[index % frames.count], pts: duration * Int64(index), duration: duration)
            let encoded = monotonicNow()
            for sample in samples { _ = try sender.send(sample) }
            let sent = monotonicNow()
            log.state.withLock {
                $0.encodedAt[index] = encoded
                $0.sentAt[index] = sent
            }
        }
        for sample in try encoder.finish() { _ = try sender.send(sample) }
        try sender.finish(lingering: 0)
    } catch {
        log.state.withLock { $0.failure = $0.failure ?? "sender: \(error)" }
    }
    log.state.withLock { $0.senderDone = true }
}

/// The receiving thread: samples from the RTP receiver into a decoder; each
/// frame's latency from its submission, and the PSNR of every tenth frame
/// against its source (the CPU that takes is counted apart).
private func receivePipeline(
    _ frames: [PixelBuffer], total: Int, receiver: RTPStreamReceiver, log: PipelineLog, threads: Int?
) {
    var decoder: DecompressionSession?
    var firstPTS: MediaTime?
    var firstSamplePTS: MediaTime?
    func take(_ decoded: [DecodedFrame]) {
        let now = monotonicNow()
        for frame in decoded {
            let first = firstPTS ?? frame.pts
            firstPTS = first
            let index = Int(((frame.pts - first).seconds * liveFrameRate).rounded())
            guard index >= 0, index < total else { continue }
            var psnr: Double?
            var measuring = 0.0
            if DensitySchedule.samplesPSNR(index) {
                let cpu = threadCPUSeconds()
                psnr = PictureQuality.psnr(frame.pixelBuffer, frames[index % frames.count]).y
                measuring = threadCPUSeconds() - cpu
            }
            log.state.withLock { state in
                state.pictureAt[index] = now
                state.latencies.append(now - state.submitted[index])
                state.decodedAt.append(now)
                if let psnr { state.psnr.append(psnr) }
                state.measuringCPU += measuring
            }
        }
    }
    func handle(_ events: [RTPStreamReceiver.Event]) throws {
        for event in events {
            switch event {
            case .sample(let sample):
                let now = monotonicNow()
                let first = firstSamplePTS ?? sample.pts
                firstSamplePTS = first
                let index = Int(((sample.pts - first).seconds * liveFrameRate).rounded())
                if index >= 0, index < total { log.state.withLock { $0.assembledAt[index] = now } }
                if decoder == nil {
                    decoder = try DecompressionSession(
                        formatDescription: sample.formatDescription, decoder: .software, threadCount: threads)
                }
                take(try decoder!.decode(sample))
            case .loss(let loss):
                if let decoder { take(try decoder.reportLoss(loss.description)) }
            }
        }
    }
    let cpu = threadCPUSeconds()
    let waited = runQueueWaitSeconds() ?? 0
    defer {
        log.state.withLock {
            $0.receiverCPU = threadCPUSeconds() - cpu - $0.measuringCPU
            $0.waiting += (runQueueWaitSeconds() ?? waited) - waited
        }
    }
    do {
        while !receiver.isEnded {
            try handle(receiver.receive(waiting: 0.05))
            if log.state.withLock({ $0.senderDone }) && receiver.secondsSinceLastPacket > 1 { break }
        }
        try handle(receiver.finish())
        if let decoder { take(try decoder.finish()) }
    } catch {
        log.state.withLock { $0.failure = $0.failure ?? "receiver: \(error)" }
    }
}

/// Real-time sessions and the per-frame figures of a run.
private func summarize(
    _ logs: [PipelineLog], cpu: Double, frames: Int, count: Int, before: (residentBytes: Int, threads: Int),
    peak: (residentBytes: Int, threads: Int), latencyLimit: Double, psnrFloor: Double?
) -> DensityRun {
    var realTime = 0
    var keepingRate = 0
    var sending = 0.0
    var receiving = 0.0
    var latencies: [Double] = []
    var measuring = 0.0
    var minimumPSNR = Double.infinity
    var decoded = 0
    var spans: [[Double]] = [[], [], [], []]
    for log in logs {
        let state = log.state.withLock { $0 }
        let times = [state.submitted, state.encodedAt, state.sentAt, state.assembledAt, state.pictureAt]
        for stage in 0..<4 {
            for frame in 0..<state.submitted.count {
                let span = times[stage + 1][frame] - times[stage][frame]
                if span.isFinite { spans[stage].append(span) }
            }
        }
        latencies += state.latencies
        measuring += state.measuringCPU
        decoded += state.latencies.count
        let lowest = state.psnr.min() ?? 0
        minimumPSNR = min(minimumPSNR, lowest)
        let span = (state.decodedAt.last ?? 0) - (state.decodedAt.first ?? 0)
        let rate = span > 0 ? Double(state.decodedAt.count - 1) / span : 0
        sending += state.senderCPU
        receiving += state.receiverCPU
        if state.failure == nil, state.latencies.count == frames, rate >= liveFrameRate * 0.97 { keepingRate += 1 }
        if state.failure == nil, state.latencies.count == frames, rate >= liveFrameRate * 0.97,
            percentile(state.latencies, 95) < latencyLimit, psnrFloor.map({ lowest >= $0 }) ?? true
        {
            realTime += 1
        }
        if let failure = state.failure {
            FileHandle.standardError.write(Data("codecs-bench: density: \(failure)\n".utf8))
        }
    }
    return DensityRun(
        sessions: count, realTime: realTime, keepingRate: keepingRate,
        sendingMilliseconds: sending * 1000 / Double(max(decoded, 1)),
        receivingMilliseconds: receiving * 1000 / Double(max(decoded, 1)),
        cpuMillisecondsPerFrame: (cpu - measuring) * 1000 / Double(max(decoded, 1)),
        residentBytesPerSession: Double(peak.residentBytes - before.residentBytes) / Double(count),
        threadsPerSession: Double(peak.threads - before.threads) / Double(count),
        latencyP50: percentile(latencies, 50), latencyP95: percentile(latencies, 95),
        minimumPSNR: psnrFloor == nil ? 0 : minimumPSNR, framesDecoded: decoded, framesExpected: frames * count,
        stages: spans.map { percentile($0, 50) })
}

/// `count` decoders, each fed the stream's samples at 30 fps (sample `i`
/// due at `start + i/30`), one thread each; a session is real-time when it
/// decodes every frame and 95 % of them are out within one frame interval
/// of their due time.
func runDecoders(_ stream: CodedStream, count: Int) throws -> DensityRun {
    // Freed heap handed back first, so the growth is the sessions' own.
    trimHeap()
    let before = processStatus()
    let logs = (0..<count).map { _ in PipelineLog(frames: stream.samples.count) }
    let finished = Finished()
    let start = monotonicNow() + 0.05
    let cpuBefore = processCPUSeconds()
    let samples = stream.samples
    let description = stream.description
    for index in 0..<count {
        let log = logs[index]
        let offset = Double(index) / Double(count) / liveFrameRate
        Thread {
            let cpu = threadCPUSeconds()
            defer { log.state.withLock { $0.receiverCPU = threadCPUSeconds() - cpu } }
            do {
                let decoder = try DecompressionSession(
                    formatDescription: description, decoder: .software, threadCount: 1)
                var next = 0
                func take(_ decoded: [DecodedFrame]) {
                    let now = monotonicNow()
                    log.state.withLock { state in
                        for _ in decoded {
                            state.latencies.append(now - state.submitted[next])
                            state.decodedAt.append(now)
                            next += 1
                        }
                    }
                }
                for (position, sample) in samples.enumerated() {
                    let due = start + offset + Double(position) / liveFrameRate
                    sleepUntil(due)
                    log.state.withLock { $0.submitted[position] = due }
                    take(try decoder.decode(sample))
                }
                take(try decoder.finish())
            } catch {
                log.state.withLock { $0.failure = "decoder: \(error)" }
            }
            finished.count.withLock { $0 += 1 }
        }.start()
    }
    var peak = before
    while finished.count.withLock({ $0 }) < count {
        let now = processStatus()
        peak = (max(peak.residentBytes, now.residentBytes), max(peak.threads, now.threads))
        usleep(100_000)
    }
    let cpu = processCPUSeconds() - cpuBefore
    return summarize(
        logs, cpu: cpu, frames: samples.count, count: count, before: before, peak: peak,
        latencyLimit: 1 / liveFrameRate, psnrFloor: nil)
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
