// Density, our side: N live pipelines (encode, RTP over the loopback, decode) and N paced decoders in this process.
import DecodeSession
import EncodeSession
import Foundation
import MediaCore
import MediaIO
import RTPPayload
import Synchronization

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
        /// Kernel CPU seconds and voluntary context switches (wake-ups) of
        /// the sending and receiving threads.
        var senderKernel = 0.0
        var receiverKernel = 0.0
        var senderWakeUps = 0
        var receiverWakeUps = 0
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

/// Runs `count` pipelines over `schedule` (frame k is `frames[k % frames.count]`;
/// by default every frame once, all measured) at 30 fps, started a 1/count
/// of a frame interval apart (cameras are not frame-locked), and measures
/// them against ``DensityCriterion``. `decoderThreads` nil leaves
/// libavcodec's thread count to the session's default (one per core).
/// `measuresPSNR` false leaves the sampled PSNRs out (then no session meets
/// the criterion); `measured` is called when the measured span of the run
/// starts (sessions made, threads not started) and when it ends (every
/// thread done), where the CPU figures start and stop.
func runPipelines(
    _ frames: [PixelBuffer], count: Int, settings: EncodeSettings, schedule: DensitySchedule? = nil,
    decoderThreads: Int? = 1, measuresPSNR: Bool = true, measured: ((_ started: Bool) -> Void)? = nil
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
    measured?(true)
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
            receivePipeline(
                frames, total: schedule.total, receiver: receiver.value, log: log, threads: decoderThreads,
                measuresPSNR: measuresPSNR)
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
    measured?(false)
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
    let kernel = threadKernelUsage()
    let waited = runQueueWaitSeconds() ?? 0
    defer {
        let kernelNow = threadKernelUsage()
        log.state.withLock {
            $0.senderCPU = threadCPUSeconds() - cpu
            $0.senderKernel = kernelNow.systemSeconds - kernel.systemSeconds
            $0.senderWakeUps = kernelNow.voluntarySwitches - kernel.voluntarySwitches
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
    _ frames: [PixelBuffer], total: Int, receiver: RTPStreamReceiver, log: PipelineLog, threads: Int?,
    measuresPSNR: Bool
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
            if measuresPSNR, DensitySchedule.samplesPSNR(index) {
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
    let kernel = threadKernelUsage()
    let waited = runQueueWaitSeconds() ?? 0
    defer {
        let kernelNow = threadKernelUsage()
        log.state.withLock {
            $0.receiverCPU = threadCPUSeconds() - cpu - $0.measuringCPU
            $0.receiverKernel = kernelNow.systemSeconds - kernel.systemSeconds
            $0.receiverWakeUps = kernelNow.voluntarySwitches - kernel.voluntarySwitches
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
    var kernel = (sending: 0.0, receiving: 0.0)
    var wakeUps = (sending: 0, receiving: 0)
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
        kernel.sending += state.senderKernel
        kernel.receiving += state.receiverKernel
        wakeUps.sending += state.senderWakeUps
        wakeUps.receiving += state.receiverWakeUps
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
    var run = DensityRun(
        sessions: count, realTime: realTime, keepingRate: keepingRate,
        sendingMilliseconds: sending * 1000 / Double(max(decoded, 1)),
        receivingMilliseconds: receiving * 1000 / Double(max(decoded, 1)),
        cpuMillisecondsPerFrame: (cpu - measuring) * 1000 / Double(max(decoded, 1)),
        residentBytesPerSession: Double(peak.residentBytes - before.residentBytes) / Double(count),
        threadsPerSession: Double(peak.threads - before.threads) / Double(count),
        latencyP50: percentile(latencies, 50), latencyP95: percentile(latencies, 95),
        minimumPSNR: psnrFloor == nil ? 0 : minimumPSNR, framesDecoded: decoded, framesExpected: frames * count,
        stages: spans.map { percentile($0, 50) })
    let frames = Double(max(decoded, 1))
    run.sendingKernelMilliseconds = kernel.sending * 1000 / frames
    run.receivingKernelMilliseconds = kernel.receiving * 1000 / frames
    run.sendingWakeUps = Double(wakeUps.sending) / frames
    run.receivingWakeUps = Double(wakeUps.receiving) / frames
    return run
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
