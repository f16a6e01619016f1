// WHEP fan-out: one WHEPServer in this process sending a pre-encoded 720p30 2 Mbit/s stream in real time to N light
// viewers in a child process (codecs-bench --whep-viewers), the server process's CPU over the run's wall time.
import FormatConv
import Foundation
import MediaCore
import Synchronization
import TestSupport
import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

/// One WHEP fan-out run's figures.
struct WHEPFanOutRun {
    var viewers: Int
    /// This process's CPU (user + system, every thread) over the stream's duration (cores).
    var cores: Double
    var frames: Int
    /// Frames sent more than one frame interval after their time.
    var lateFrames: Int
    /// Per viewer, what the server's sender sent: (packets, frames).
    var sent: [(packets: Int, frames: Int)]
    /// Per viewer, what it authenticated and counted.
    var received: [WHEPLoadViewers.Counts]
    /// Access units the server packetized (once each for every viewer).
    var packetized: Int
}

/// What the server thread hands back.
private final class WHEPServerShared: Sendable {
    struct State {
        var port: Int?
        var failure: String?
        var run: (cores: Double, late: Int, sent: [(packets: Int, frames: Int)], packetized: Int)?
    }
    let state = Mutex(State())
}

/// Rows `whep fan-out N viewers CPU (cores)` beside the RTP fan-out row at the same N (`reference`: the same stream
/// from one socket with sendmmsg and GSO, no SRTP). Viewers join first; then the stream (looped, re-timed) plays for
/// `seconds`, each access unit sent at its time; the server process's CPU is measured over that time.
func benchmarkWHEPFanOut(
    _ frames: [PixelBuffer], counts: [Int], seconds: Double, reference: [FanOutRun], report: Report,
    log: (String) -> Void
) throws {
    let stream = try encodeStream(
        frames, codec: .h264, settings: liveSettings(preset: "ultrafast", bitRate: 2_000_000), label: "x264 2 Mbit/s")
    for count in counts {
        log("whep fan-out: \(count) viewers in a child process, \(seconds) s at 30 fps")
        let run = try whepFanOut(stream.samples, viewers: count, seconds: seconds)
        let rtp = reference.first { $0.receivers == count }
        report.add(
            Figure(
                name: "whep fan-out \(count) viewers CPU (cores), 720p30 2 Mbit/s", ours: run.cores,
                reference: rtp?.cores, referenceName: rtp == nil ? nil : "RTP fan-out, no SRTP", unit: "cores",
                higherIsBetter: false, target: count == 200 ? "≤ 1 (200 viewers per core)" : nil))
        let sentPackets = run.sent.map(\.packets).reduce(0, +)
        let receivedPackets = run.received.map(\.packets).reduce(0, +)
        let below = run.received.filter { Double($0.frames) < 0.99 * Double(run.frames) }.count
        let rejected = run.received.map(\.rejected).reduce(0, +)
        report.notes.append(
            String(
                format: "whep fan-out %d: %.0f viewers per core; packets received %d of %d sent (%d rejected by SRTP); "
                    + "frames per viewer min %d of %d; viewers below real time (< 99 %% of the frames): %d; "
                    + "frames sent late by the server: %d; access units packetized: %d (for %d frames to each viewer)",
                count, Double(count) / max(run.cores, 1e-9), receivedPackets, sentPackets, rejected,
                run.received.map(\.frames).min() ?? 0, run.frames, below, run.lateFrames, run.packetized,
                run.sent.map(\.frames).max() ?? 0))
    }
}

/// One run: the server on a thread of this process, the viewers in a child process.
private func whepFanOut(_ samples: [CompressedSample], viewers: Int, seconds: Double) throws -> WHEPFanOutRun {
    let shared = WHEPServerShared()
    let total = Int(seconds * liveFrameRate)
    let format = try VideoStreamFormat(samples[0].formatDescription)
    Thread { serveFanOut(samples, format: format, viewers: viewers, total: total, shared: shared) }.start()
    var port: Int?
    while port == nil {
        let state = shared.state.withLock { $0 }
        if let failure = state.failure { throw ProcessError("whep fan-out server: \(failure)") }
        port = state.port
        usleep(10_000)
    }
    let (status, output) = try spawnViewers([
        "--whep-viewers", String(viewers), "--port", String(port!), "--seconds", String(Int(seconds) + 120),
    ])
    var run: (cores: Double, late: Int, sent: [(packets: Int, frames: Int)], packetized: Int)?
    while run == nil {
        let state = shared.state.withLock { $0 }
        if let failure = state.failure { throw ProcessError("whep fan-out server: \(failure)") }
        run = state.run
        usleep(10_000)
    }
    guard status == 0 else { throw ProcessError("whep fan-out viewers exited with status \(status)") }
    let received = try JSONDecoder().decode([WHEPLoadViewers.Counts].self, from: output)
    return WHEPFanOutRun(
        viewers: viewers, cores: run!.cores, frames: total, lateFrames: run!.late, sent: run!.sent,
        received: received, packetized: run!.packetized)
}

/// Runs this executable with `arguments`, its stdout read to the end: the exit status and what it wrote. With
/// `posix_spawn` and one pipe only (Foundation's `Process` fails under valgrind, which keeps descriptors of its own).
private func spawnViewers(_ arguments: [String]) throws -> (Int32, Data) {
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { throw ProcessError("pipe: errno \(errno)") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
    posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
    posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
    let path = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var child: pid_t = 0
    let spawned = posix_spawn(&child, path, &actions, nil, argv, environ)
    close(pipeEnds[1])
    guard spawned == 0 else {
        close(pipeEnds[0])
        throw ProcessError("posix_spawn \(path): \(spawned)")
    }
    let output = FileHandle(fileDescriptor: pipeEnds[0], closeOnDealloc: true).readDataToEndOfFile()
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    return ((status >> 8) & 0xFF, output)
}

/// The server thread: waits for `viewers` connected viewers, plays `total` frames of the looped stream at 30 a
/// second, ends the stream, and reports its CPU and what each viewer was sent.
private func serveFanOut(
    _ samples: [CompressedSample], format: VideoStreamFormat, viewers: Int, total: Int, shared: WHEPServerShared
) {
    do {
        var configuration = WHEPServer.Configuration()
        configuration.maximumViewers = viewers + 8
        configuration.limits.maximumPendingOffersPerAddress = viewers + 8
        configuration.limits.handshakeTimeout = 60
        let server = try WHEPServer(configuration)
        server.setLive(format)
        shared.state.withLock { $0.port = server.httpPort }
        let joinDeadline = monotonicNow() + 120
        while server.connectedViewerCount < viewers {
            guard monotonicNow() < joinDeadline else {
                throw ProcessError("\(server.connectedViewerCount) of \(viewers) viewers connected within 120 s")
            }
            try server.poll(timeoutMilliseconds: 20)
            _ = server.takeKeyframeRequest()
        }
        let loop = MediaTime(value: Int64(samples.count), timescale: 30)
        let start = monotonicNow() + 0.1
        var late = 0
        var cpu = 0.0
        for index in 0..<total {
            let due = start + Double(index) / liveFrameRate
            while true {
                let left = due - monotonicNow()
                if left <= 0 { break }
                try server.poll(timeoutMilliseconds: Int32(max(1, min(20, left * 1000))))
            }
            if index == 0 { cpu = processCPUSeconds() }
            if monotonicNow() - due > 1 / liveFrameRate { late += 1 }
            var sample = samples[index % samples.count]
            let shift = MediaTime(value: loop.value * Int64(index / samples.count), timescale: 30)
            sample.pts = sample.pts + shift
            sample.dts = sample.dts.isValid ? sample.dts + shift : sample.dts
            server.send(sample)
            _ = server.takeKeyframeRequest()
        }
        try server.poll(timeoutMilliseconds: Int32(1000 / liveFrameRate))
        // Per second of stream: what keeping up in real time takes, even where the loaded machine made it late.
        let cores = (processCPUSeconds() - cpu) / (Double(total) / liveFrameRate)
        let sent = server.allViewers.map {
            (packets: $0.sender.statistics.packetsSent, frames: $0.sender.statistics.framesSent)
        }
        server.endStream()
        let end = monotonicNow() + 0.5
        while monotonicNow() < end { try server.poll(timeoutMilliseconds: 20) }
        server.close()
        let packetized = server.accessUnitsPacketized
        shared.state.withLock { $0.run = (cores, late, sent, packetized) }
    } catch {
        shared.state.withLock { $0.failure = "\(error)" }
    }
}

/// The child mode (`codecs-bench --whep-viewers N --port P --seconds S`): N light viewers join the WHEP server on
/// 127.0.0.1:P and count until the server ends every stream or S seconds pass; their counts go to stdout as JSON.
func runWHEPViewers(_ arguments: [String]) -> Never {
    func value(_ name: String) -> Int? {
        arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil }
    }
    guard let count = value("--whep-viewers"), count > 0, let port = value("--port") else {
        fatalUsage("--whep-viewers needs a count and --port")
    }
    let seconds = Double(value("--seconds") ?? 180)
    do {
        let viewers = try WHEPLoadViewers(count: count)
        try viewers.join(port: port)
        let deadline = monotonicNow() + seconds
        while viewers.endedCount < count, monotonicNow() < deadline { viewers.pump(timeoutMilliseconds: 20) }
        let data = try JSONEncoder().encode(viewers.counts)
        FileHandle.standardOutput.write(data)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("codecs-bench: whep viewers: \(error)\n".utf8))
        exit(1)
    }
}
