// FFmpeg's side of a density row: N encoder → RTP → decoder process pairs, fed and timed on the bench's capture clock.
import Foundation
import MediaCore
import Sockets
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What FFmpeg's N process pairs (or decode processes) did.
struct FFmpegDensityRun {
    var sessions: Int
    /// Pairs meeting ``DensityCriterion`` (decode-only processes: real-time by speed and frames).
    var realTime: Int
    var cpuMillisecondsPerFrame: Double
    /// The pairs' sessions against the criterion (nil for decode-only processes).
    var tally: DensityTally?
    /// The bench's own CPU feeding the pairs' input pipes and reading their output, per frame decoded.
    var bridgeMillisecondsPerFrame = 0.0
    /// CPU the processes used starting up (before the first frame), all pairs, seconds; left out of the CPU per frame.
    var startUpSeconds = 0.0
    var load = DensityLoad()
    /// p50 and p99 seconds of the measured frames from capture to the end of
    /// their last RTP packet on the wire (the sender: reading the pipe,
    /// encoding, packetizing), and from there to the picture read back (the
    /// receiver: depacketizing, finding the frame's end, decoding, writing
    /// the pipe); nil for decode-only processes.
    var stages: (sender: (p50: Double, p99: Double), receiver: (p50: Double, p99: Double))?
    /// Each process's (pair's) final speed and frames, for the notes.
    var detail = ""
}

/// Where a run's time went: its wall time, the CPU it used, the whole
/// machine's busy CPU over the same time, and how long its threads waited
/// on a run queue for a core.
struct DensityLoad {
    var wallSeconds = 0.0
    var cpuSeconds = 0.0
    var machineBusySeconds = 0.0
    var runQueueWaitSeconds = 0.0
    var frames = 0

    /// "3.1 s: the run used 1.21 cores, other work 0.78 (machine busy 1.99 of 2); waited 9.8 ms per frame for a core".
    var summary: String {
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        return String(
            format: "%.1f s: the run used %.2f cores, other work %.2f (machine busy %.2f of %.0f); its threads waited "
                + "%.1f ms per frame for a core", wallSeconds, cpuSeconds / wallSeconds,
            max(machineBusySeconds - cpuSeconds, 0) / wallSeconds, machineBusySeconds / wallSeconds, cores,
            runQueueWaitSeconds * 1000 / Double(max(frames, 1)))
    }
}

/// One pair's record, shared by its writing and reading threads.
private final class PairLog: Sendable {
    let times: Mutex<DensitySessionTimes>
    /// When each frame's last RTP packet (marker bit) reached the observing socket.
    let onWire: Mutex<[Double]>
    let bridgeCPU = Mutex(0.0)
    init(frames: Int) {
        let unset = [Double](repeating: .nan, count: frames)
        times = Mutex(DensitySessionTimes(captured: unset, decoded: unset))
        onWire = Mutex(unset)
    }
}

/// `count` FFmpeg pairs held to `criterion` over `schedule`. Each pair: a
/// receiver started first, `ffmpeg … -i SESSION.sdp … -f rawvideo pipe:1`
/// (decoding one thread, every picture written to its standard output as it
/// is decoded), and a sender `ffmpeg -f rawvideo … -i pipe:0 <the live x264
/// settings> -f rtp rtp://127.0.0.1:PORT`. The bench writes frame k into the
/// sender's standard input at its capture time (start + k/30, the pairs 1/N
/// of a frame interval apart, as our pipelines are) and reads the receiver's
/// pictures as they come: frame k's latency is its picture's arrival less its
/// capture time, the same clock and the same definition as ours. Every tenth
/// picture's luma PSNR is measured against its source. The sender also sends
/// a copy of its RTP stream (FFmpeg's `tee` muxer, a second RTP muxer) to a
/// socket of the bench that notes when each frame's last packet arrived,
/// which splits each frame's latency into the sender's part and the
/// receiver's; the copy is off the measured path. CPU per frame is the
/// processes' CPU after they started (their start-up, read from
/// `/proc/PID/stat` just before the first frame, is left out, as our
/// sessions' creation is) over the frames encoded (the receivers hold their
/// last frames when the stream ends).
func runFFmpegPacedPairs(
    _ frames: [PixelBuffer], count: Int, preset: String, schedule: DensitySchedule,
    criterion: DensityCriterion = DensityCriterion()
) throws -> FFmpegDensityRun {
    signal(SIGPIPE, SIG_IGN)
    let width = frames[0].width
    let height = frames[0].height
    let sources = frames.map { $0.packedBytes() }
    let frameBytes = sources[0].count
    let directory = FileManager.default.temporaryDirectory
    let logs = (0..<count).map { _ in PairLog(frames: schedule.total) }
    var receivers: [Process] = []
    var senders: [Process] = []
    var inputs: [Pipe] = []
    var outputs: [Pipe] = []
    var sdpPaths: [String] = []
    defer { for path in sdpPaths { try? FileManager.default.removeItem(atPath: path) } }
    let cpuBefore = childrenCPUSeconds()
    func ffmpeg(_ arguments: [String], input: Pipe?, output: Pipe?) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-hide_banner", "-nostdin", "-loglevel", "error"] + arguments
        process.standardInput = input ?? FileHandle.nullDevice
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
    var ports: [Int] = []
    for index in 0..<count {
        let port = try freeRTPPort()
        ports.append(port)
        let sdp = """
            v=0
            o=- 0 0 IN IP4 127.0.0.1
            s=density
            c=IN IP4 127.0.0.1
            t=0 0
            m=video \(port) RTP/AVP 96
            a=rtpmap:96 H264/90000
            a=fmtp:96 packetization-mode=1

            """
        let path = directory.appendingPathComponent("codecs-bench-\(getpid())-\(index).sdp").path
        try sdp.write(toFile: path, atomically: true, encoding: .utf8)
        sdpPaths.append(path)
        let output = Pipe()
        _ = fcntl(output.fileHandleForReading.fileDescriptor, 1031 /* F_SETPIPE_SZ */, 1 << 20)
        outputs.append(output)
        // Probing kept to the least (the picture size comes from the first
        // keyframe's SPS), no reorder queue, the decoder's low-delay flag;
        // every picture passed through and flushed as it is decoded.
        receivers.append(
            try ffmpeg(
                [
                    "-protocol_whitelist", "file,udp,rtp", "-buffer_size", "4194304", "-probesize", "32",
                    "-analyzeduration", "1", "-reorder_queue_size", "0", "-flags", "low_delay", "-threads", "1",
                    "-i", path, "-fps_mode", "passthrough",
                    "-flush_packets", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "pipe:1",
                ], input: nil, output: output))
    }
    var observers: [UDPSocket] = []
    defer { for observer in observers { observer.close() } }
    for port in ports {
        let observer = try UDPSocket(bindingTo: "127.0.0.1")
        observers.append(observer)
        let input = Pipe()
        _ = fcntl(input.fileHandleForWriting.fileDescriptor, 1031 /* F_SETPIPE_SZ */, 1 << 20)
        inputs.append(input)
        senders.append(
            try ffmpeg(
                [
                    "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(width)x\(height)", "-framerate", "30",
                    "-probesize", "32", "-i", "pipe:0",
                ] + ffmpegLiveEncoderArguments(preset: preset) + [
                    "-map", "0:v", "-f", "tee",
                    "[f=rtp:payload_type=96]rtp://127.0.0.1:\(port)?pkt_size=1212|[f=rtp:payload_type=96]"
                        + "rtp://127.0.0.1:\(observer.localAddress.port)?pkt_size=1212",
                ], input: input, output: nil))
    }
    // The processes start, bind their ports and wait for input.
    usleep(useconds_t(600_000 + 100_000 * count))
    let pids = (receivers + senders).map(\.processIdentifier)
    let startUp = pids.reduce(0) { $0 + (liveProcessCPUSeconds($1) ?? 0) }
    let sampler = RunQueueSampler()
    sampler.sample(pids, asBaseline: true)
    let machineBefore = machineBusySeconds()
    let ownBefore = processCPUSeconds()
    let start = monotonicNow() + 0.05
    let finished = Finished()
    let observing = Mutex(true)
    for index in 0..<count {
        let log = logs[index]
        let observer = observers[index]
        Thread {
            let cpu = threadCPUSeconds()
            var buffer = [UInt8](repeating: 0, count: 2048)
            var base: UInt32?
            while observing.withLock({ $0 }) {
                guard let (got, _) = try? observer.receive(into: &buffer, timeout: .milliseconds(100)), got >= 12
                else { continue }
                let now = monotonicNow()
                let timestamp = buffer[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                let first = base ?? timestamp
                base = first
                // 90 kHz at 30 fps: 3000 ticks a frame.
                let position = Int((timestamp &- first) / 3000)
                if buffer[1] & 0x80 != 0, position < schedule.total {
                    log.onWire.withLock { if !$0[position].isFinite { $0[position] = now } }
                }
            }
            log.bridgeCPU.withLock { $0 += threadCPUSeconds() - cpu }
            finished.count.withLock { $0 += 1 }
        }.start()
        let offset = Double(index) / Double(count) / liveFrameRate
        let writing = Handoff(inputs[index].fileHandleForWriting)
        let reading = Handoff(outputs[index].fileHandleForReading)
        Thread {
            let cpu = threadCPUSeconds()
            let descriptor = writing.value.fileDescriptor
            for position in 0..<schedule.total {
                let due = start + offset + Double(position) / liveFrameRate
                sleepUntil(due)
                log.times.withLock { $0.captured[position] = due }
                let written = sources[position % sources.count].withUnsafeBytes { writeAll(descriptor, $0) }
                if !written {
                    log.times.withLock { $0.failure = $0.failure ?? "the sender's input closed at frame \(position)" }
                    break
                }
            }
            try? writing.value.close()
            log.bridgeCPU.withLock { $0 += threadCPUSeconds() - cpu }
            finished.count.withLock { $0 += 1 }
        }.start()
        Thread {
            let cpu = threadCPUSeconds()
            var measuring = 0.0
            let descriptor = reading.value.fileDescriptor
            var picture = [UInt8](repeating: 0, count: frameBytes)
            var position = 0
            while picture.withUnsafeMutableBytes({ readAll(descriptor, $0) }) {
                let now = monotonicNow()
                if position < schedule.total {
                    var psnr: Double?
                    if DensitySchedule.samplesPSNR(position) {
                        let measureStart = threadCPUSeconds()
                        psnr = lumaPSNR(picture, sources[position % sources.count], count: width * height)
                        measuring += threadCPUSeconds() - measureStart
                    }
                    log.times.withLock { times in
                        times.decoded[position] = now
                        if let psnr { times.psnr.append(psnr) }
                    }
                }
                position += 1
            }
            log.bridgeCPU.withLock { $0 += threadCPUSeconds() - cpu - measuring }
            finished.count.withLock { $0 += 1 }
        }.start()
    }
    // Sample the processes' run-queue waits while they run; once the senders
    // have ended, give the receivers a second, then stop them.
    let needed = schedule.warmUp + schedule.measured
    var sendersEnded: Double?
    while receivers.contains(where: \.isRunning) {
        sampler.sample(pids)
        usleep(50_000)
        if sendersEnded == nil, !senders.contains(where: \.isRunning) { sendersEnded = monotonicNow() }
        guard let ended = sendersEnded else { continue }
        let complete = logs.allSatisfy { log in log.times.withLock { $0.decoded[needed - 1].isFinite } }
        if complete || monotonicNow() - ended > 1 {
            for receiver in receivers where receiver.isRunning { receiver.interrupt() }
            usleep(500_000)
            for receiver in receivers where receiver.isRunning { kill(receiver.processIdentifier, SIGKILL) }
        }
    }
    for process in senders + receivers { process.waitUntilExit() }
    observing.withLock { $0 = false }
    while finished.count.withLock({ $0 }) < 3 * count { usleep(10_000) }
    let wall = monotonicNow() - start
    let machine = machineBusySeconds() - machineBefore
    let own = processCPUSeconds() - ownBefore
    let cpu = childrenCPUSeconds() - cpuBefore - startUp
    let sessions = logs.map { $0.times.withLock { $0 } }
    let tally = DensityTally(sessions.map { criterion.judge($0, schedule: schedule) })
    let decoded = sessions.reduce(0) { $0 + $1.decoded.count { $0.isFinite } }
    // Per frame encoded: every frame written was encoded, while the
    // receivers hold their last frames (ours decode every frame they encode).
    let encoded = sessions.reduce(0) { $0 + $1.captured.count { $0.isFinite } }
    let bridge = logs.reduce(0) { $0 + $1.bridgeCPU.withLock { $0 } }
    var senderPart: [Double] = []
    var receiverPart: [Double] = []
    for (log, session) in zip(logs, sessions) {
        let onWire = log.onWire.withLock { $0 }
        for position in schedule.measuredRange where onWire[position].isFinite {
            senderPart.append(onWire[position] - session.captured[position])
            if session.decoded[position].isFinite { receiverPart.append(session.decoded[position] - onWire[position]) }
        }
    }
    func p(_ values: [Double], _ rank: Int) -> Double { NearestRank.percentile(rank, of: values) ?? .nan }
    var detail: [String] = []
    for (index, sender) in senders.enumerated() {
        let out = sessions[index].decoded.count { $0.isFinite }
        detail.append("tx \(sender.terminationStatus)/rx \(receivers[index].terminationStatus)/\(out)")
    }
    return FFmpegDensityRun(
        sessions: count, realTime: tally.meeting,
        cpuMillisecondsPerFrame: cpu * 1000 / Double(max(encoded, decoded, 1)),
        tally: tally, bridgeMillisecondsPerFrame: bridge * 1000 / Double(max(encoded, decoded, 1)),
        startUpSeconds: startUp,
        load: DensityLoad(
            wallSeconds: wall, cpuSeconds: cpu + own, machineBusySeconds: machine,
            runQueueWaitSeconds: sampler.waited, frames: decoded),
        stages: ((p(senderPart, 50), p(senderPart, 99)), (p(receiverPart, 50), p(receiverPart, 99))),
        detail: "exit status and pictures per pair " + detail.joined(separator: " "))
}

/// Writes every byte of `bytes` to `descriptor`; false when it failed (the reader went away).
private func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return false }
        offset += written
    }
    return true
}

/// Fills `buffer` from `descriptor`; false at the end of the stream before it was full.
private func readAll(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Bool {
    var offset = 0
    while offset < buffer.count {
        let got = read(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if got < 0 && errno == EINTR { continue }
        guard got > 0 else { return false }
        offset += got
    }
    return true
}

/// Luma PSNR of two packed 8-bit pictures whose first `count` bytes are the
/// luma plane (as `PictureQuality.psnr(_:_:).y` computes it on PixelBuffers).
private func lumaPSNR(_ a: [UInt8], _ b: [UInt8], count: Int) -> Double {
    var error: UInt64 = 0
    a.withUnsafeBufferPointer { a in
        b.withUnsafeBufferPointer { b in
            for index in 0..<count {
                let difference = Int(a[index]) - Int(b[index])
                error &+= UInt64(difference * difference)
            }
        }
    }
    guard error > 0 else { return .infinity }
    return 10 * log10(255.0 * 255.0 / (Double(error) / Double(count)))
}
