// A shaped path: our RTP sender (congestion control on) and receiver in a network namespace whose loopback is a
// tc tbf bottleneck of 1 Mb/s, then 0.5 Mb/s; the send rate follows it and every frame that arrives decodes.
import CongestionControl
import Dispatch
import EncodeSession
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs code on a thread of its own inside a new network namespace (whose loopback is down until brought up).
enum NetworkNamespace {
    private typealias Unshare = @convention(c) (Int32) -> Int32
    private typealias SetNS = @convention(c) (Int32, Int32) -> Int32
    private static let newNetwork: Int32 = 0x4000_0000  // CLONE_NEWNET

    /// Why a namespace with a tbf qdisc cannot be made here, or nil when it can (checked once by running
    /// `unshare -n` with `ip` and `tc`, as root or with CAP_NET_ADMIN).
    static let unavailableReason: String? = {
        for tool in ["unshare", "ip", "tc"] where findExecutable(tool) == nil { return "\(tool) is not installed" }
        let probe = "ip link set lo up && tc qdisc add dev lo root tbf rate 1mbit burst 16kbit latency 300ms"
        guard let result = try? runProcess("unshare", ["-n", "sh", "-c", probe]) else {
            return "unshare could not be started"
        }
        guard result.status == 0 else {
            return "unshare -n with a tbf qdisc failed (not root, no CAP_NET_ADMIN?): \(result.stderr)"
        }
        return nil
    }()

    private final class Outcome: @unchecked Sendable {
        var error: (any Error)?
    }

    /// Runs `body` on a new thread moved into a new network namespace, then moves the thread back. Sockets made
    /// in `body` stay in the namespace; processes it starts are in it too.
    static func run(_ body: @escaping @Sendable () throws -> Void) throws {
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            let handle = dlopen(nil, RTLD_NOW)
            guard let unshareSymbol = dlsym(handle, "unshare"), let setnsSymbol = dlsym(handle, "setns") else {
                outcome.error = ProcessError("unshare/setns are not in the C library")
                return
            }
            let unshare = unsafeBitCast(unshareSymbol, to: Unshare.self)
            let setns = unsafeBitCast(setnsSymbol, to: SetNS.self)
            let original = open("/proc/thread-self/ns/net", O_RDONLY)
            guard original >= 0, unshare(newNetwork) == 0 else {
                outcome.error = ProcessError("unshare(CLONE_NEWNET) failed: errno \(errno)")
                return
            }
            defer {
                _ = setns(original, newNetwork)
                close(original)
            }
            do { try body() } catch { outcome.error = error }
        }
        thread.stackSize = 8 << 20
        thread.start()
        done.wait()
        if let error = outcome.error { throw error }
    }

    /// Runs `command` with `sh -c` (in the calling thread's namespace); throws when it fails.
    static func shell(_ command: String) throws {
        let result = try runProcess("sh", ["-c", command])
        guard result.status == 0 else { throw ProcessError("\(command): exit \(result.status): \(result.stderr)") }
    }
}

struct LiveRTPCongestionPathTests {
    /// The figures of one run.
    final class Run: @unchecked Sendable {
        var samples: [RTPSenderCongestionStatistics.Sample] = []
        var phaseChange = 0.0
        var end = 0.0
        var received = 0
        var losses = 0
        var decodedFrames = 0
        var pipeline: LivePipeline.Statistics?
        var largestSample = 0
        var congestion: RTPSenderCongestionStatistics?
        var outbound: RTPOutboundStreamStatistics?
    }

    /// The mean send rate (bits per second) between `from` and `to` seconds, from the sender's samples.
    static func rate(_ samples: [RTPSenderCongestionStatistics.Sample], from: Double, to: Double) -> Double {
        guard let first = samples.first(where: { $0.seconds >= from }),
            let last = samples.last(where: { $0.seconds <= to }), last.seconds > first.seconds
        else { return 0 }
        return Double(last.bytesSent - first.bytesSent) * 8 / (last.seconds - first.seconds)
    }

    /// 640x360 at 30 fps encoded live from 2 Mb/s (noise: it needs every bit) into a path shaped by tbf to
    /// 1 Mb/s for 18 s, then 0.5 Mb/s for 18 s. The sender's mean rate over the second half of each phase is
    /// 0.6 … 1.0 × the tbf rate; the receiver's Annex-B output decodes with ffmpeg into exactly as many frames as
    /// samples arrived; no frame is larger than half a second of the highest target (the encoder's VBV buffer).
    @Test(
        .enabled(
            if: NetworkNamespace.unavailableReason == nil,
            "needs unshare -n and tc tbf (root or CAP_NET_ADMIN); the reason is printed by the probe"))
    func theSendRateFollowsATBFBottleneck() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("noise.y4m")
        let generated = try runProcess(
            "ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-vf", "noise=alls=30:allf=t",
                "-t", "3", "-pix_fmt", "yuv420p", "-y", clip,
            ])
        try #require(generated.status == 0, "\(generated.stderr)")
        let output = directory.path("received.h264")
        let run = Run()
        let phase = 18.0
        try NetworkNamespace.run {
            try NetworkNamespace.shell(
                "ip link set lo up && tc qdisc add dev lo root tbf rate 1mbit burst 16kbit latency 300ms")
            try Self.stream(clip: clip, output: output, phase: phase, run: run)
        }
        let first = Self.rate(run.samples, from: phase / 2, to: phase)
        let second = Self.rate(run.samples, from: run.phaseChange + phase / 2, to: run.end)
        let timeline = stride(from: 0, to: run.samples.count, by: 4).map { index in
            let sample = run.samples[index]
            let rate = Self.rate(run.samples, from: sample.seconds - 2, to: sample.seconds)
            return "\(Int(sample.seconds))s: target \(sample.targetBitrate / 1000)k sent \(Int(rate) / 1000)k"
        }
        print("send rate over 2 s and target every 2 s: " + timeline.joined(separator: "; "))
        print("tbf 1 Mb/s: mean send rate \(Int(first)) b/s; tbf 0.5 Mb/s: \(Int(second)) b/s")
        print(
            "received \(run.received) samples, \(run.losses) losses, dropped before the encoder \(run.pipeline?.framesDroppedForSendQueue ?? 0)"
        )
        #expect((600_000...1_000_000).contains(first), "first phase \(first)")
        #expect((300_000...500_000).contains(second), "second phase \(second)")
        #expect(run.received > 0)
        let decoded = try runProcess("ffmpeg", ["-v", "error", "-f", "h264", "-i", output, "-f", "framemd5", "-"])
        let frames = String(decoding: decoded.stdout, as: UTF8.self).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.count
        #expect(frames == run.received)
        let congestion = try #require(run.congestion)
        print("outbound: \(String(describing: run.outbound)); pipeline: \(String(describing: run.pipeline))")
        print("controller: \(congestion.controller); retransmissions skipped \(congestion.retransmissionsSkipped)")
        #expect(congestion.controller.feedbackReports > 0)
        let highest = run.samples.map(\.targetBitrate).max() ?? 0
        #expect(run.largestSample * 8 <= highest / 5, "largest sample \(run.largestSample) bytes")
    }

    /// The receiver and its output, used by the receiving thread only (after the test thread made them).
    final class ReceivingEnd: @unchecked Sendable {
        let receiver: RTPStreamReceiver
        let writer: SampleSink
        init(receiver: RTPStreamReceiver, writer: SampleSink) {
            self.receiver = receiver
            self.writer = writer
        }
    }

    /// The sender, the receiver (on a thread of its own) and the live pipeline, in the namespace.
    static func stream(clip: String, output: String, phase: Double, run: Run) throws {
        let receiver = try RTPStreamReceiver(
            host: "127.0.0.1", port: 0,
            configuration: .init(
                codec: .h264,
                transportFeedback: .init(extensionID: RTPStreamSender.defaultTransportSequenceNumberExtensionID)))
        let writer = try SampleSink(path: output, kind: MediaFileKind(path: output, standardStream: nil)!)
        let ends = ReceivingEnd(receiver: receiver, writer: writer)
        let stopReceiving = Atomic<Bool>(false)
        let receiverDone = DispatchSemaphore(value: 0)
        let receiving = Thread {
            defer { receiverDone.signal() }
            func take(_ events: [RTPStreamReceiver.Event]) {
                for event in events {
                    switch event {
                    case .sample(let sample):
                        run.largestSample = max(run.largestSample, sample.data.count)
                        if (try? ends.writer.write(sample)) != nil { run.received += 1 }
                    case .loss: run.losses += 1
                    }
                }
            }
            while !stopReceiving.load(ordering: .relaxed) { take((try? ends.receiver.receive(waiting: 0.02)) ?? []) }
            take((try? ends.receiver.finish()) ?? [])
        }
        receiving.start()
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port, configuration: .init(packetizer: .init(codec: .h264, ssrc: 0xCC)),
            congestionControl: CongestionControlConfiguration(
                startRate: 2_000_000, minimumRate: 100_000, maximumRate: 4_000_000))
        var configuration = LivePipeline.Configuration()
        configuration.encoder.backend = .software
        configuration.encoder.bitRate = 2_000_000
        configuration.encoder.properties.preset = "ultrafast"
        configuration.encoder.properties.dataRateLimits = .init(maxBitRate: 2_000_000, bufferSize: 400_000)
        let pipeline = try LivePipeline(
            source: .y4m(path: clip, loop: true), sink: sender, configuration: configuration)
        let start = LivePipeline.monotonicSeconds()
        var changed = false
        while true {
            let elapsed = LivePipeline.monotonicSeconds() - start
            if !changed, elapsed >= phase {
                try NetworkNamespace.shell("tc qdisc change dev lo root tbf rate 500kbit burst 16kbit latency 300ms")
                run.phaseChange = sender.congestionStatistics?.samples.last?.seconds ?? elapsed
                changed = true
            }
            if elapsed >= 2 * phase { break }
            guard try pipeline.step() != .finished else { break }
        }
        run.end = sender.congestionStatistics?.samples.last?.seconds ?? 0
        try pipeline.finish()
        stopReceiving.store(true, ordering: .relaxed)
        receiverDone.wait()
        try writer.finish()
        run.samples = sender.congestionStatistics?.samples ?? []
        run.congestion = sender.congestionStatistics
        run.outbound = sender.statistics
        run.pipeline = pipeline.statistics
    }
}
