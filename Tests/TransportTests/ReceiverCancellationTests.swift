import FormatConv
import Foundation
import MediaCore
import MediaIO
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `MediaStreamReceiver` awaited as an `AsyncSequence` and ended by
/// `cancel()` or by cancelling its task: while an SRT listener waits for a
/// caller that never comes, while the connected sender is paused
/// (`SIGSTOP`), and after a whole stream whose frames match FFmpeg's.
@Suite(.serialized) struct ReceiverCancellationTests {
    /// How the consumer is stopped.
    enum Stop: String, CaseIterable, Sendable {
        case cancelMethod, taskCancellation
    }

    /// An SRT listener with default options (10 s timeouts) and no caller,
    /// read on a thread of its own; `cancel()` from the test's thread 0.5 s
    /// after the read began ends it with nil (no error: not the timeout)
    /// well before the timeout. Five runs; the figures (cancel to the end of
    /// the read, taken on the reading thread) are printed.
    @Test func anSRTListenerWithoutCallerEndsOnCancel() throws {
        var figures: [Double] = []
        for _ in 0..<5 {
            let receiver = try MediaStreamReceiver(url: "srt://127.0.0.1:\(try freePort(.udp))?mode=listener")
            let cancellation = receiver.cancellation
            let reading = Reading(receiver)
            let thread = Thread { reading.run() }
            thread.start()
            #expect(reading.began.wait(timeout: .now() + 10) == .success)
            Thread.sleep(forTimeInterval: 0.5)
            let cancelledAt = ContinuousClock.now
            cancellation.cancel()
            #expect(reading.ended.wait(timeout: .now() + 15) == .success)
            let (outcome, endedAt) = try #require(reading.outcome.withLock { $0 })
            let took = cancelledAt.duration(to: endedAt)
            figures.append(Double(took.components.attoseconds) / 1e18 + Double(took.components.seconds))
            #expect(outcome == "nil")
            #expect(cancellation.isCancelled)
            #expect(took < .seconds(5))
        }
        let median = figures.sorted()[figures.count / 2]
        print("SRT listener, cancel(): \(figures.map { String(format: "%.3f", $0) }) s, median \(median) s")
    }

    /// The same listener consumed by `for try await` in a task, ended by
    /// `cancel()` or by cancelling the task: no event, no error (the 10 s
    /// timeout would throw `.timedOut`), cancelled. The figures (stop to the
    /// task's end, which includes waiting for the task to be scheduled) are
    /// printed.
    @Test(arguments: Stop.allCases)
    func anAwaitedSRTListenerEndsOnCancel(_ stop: Stop) async throws {
        var figures: [Duration] = []
        for _ in 0..<3 {
            let receiver = try MediaStreamReceiver(url: "srt://127.0.0.1:\(try freePort(.udp))?mode=listener")
            let cancellation = receiver.cancellation
            let consumer = Task(executorPreference: DedicatedThreadExecutor()) {
                () throws -> (Int, ContinuousClock.Instant) in
                var events = 0
                for try await _ in receiver { events += 1 }
                return (events, ContinuousClock.now)
            }
            // The stop comes from a thread of its own too: this test's task
            // may wait on the busy cooperative pool longer than the
            // listener's 10 s timeout.
            let stopper = Task(executorPreference: DedicatedThreadExecutor()) {
                () throws -> ContinuousClock.Instant in
                try await Task.sleep(for: .milliseconds(500))
                let stoppedAt = ContinuousClock.now
                if stop == .cancelMethod { cancellation.cancel() } else { consumer.cancel() }
                return stoppedAt
            }
            let stoppedAt = try await stopper.value
            let (events, endedAt) = try await consumer.value
            #expect(events == 0)
            figures.append(stoppedAt.duration(to: endedAt))
            #expect(cancellation.isCancelled)
        }
        print("SRT listener awaited, \(stop): stop to end \(figures)")
    }

    /// FFmpeg sends the file in real time (SRT: twice, as its sender closes
    /// without waiting out the latency; UDP: once, the receiver ending on
    /// silence); the access units read with `for try await`, written as
    /// Annex-B, decode (by FFmpeg) to the frames of the file sent.
    @Test(arguments: ["srt", "udp"])
    func receivesFFmpegsStreamAsync(_ scheme: String) async throws {
        let sent = try Sent(codec: "h264")
        let (peer, url) = try Self.ffmpegSender(scheme, sending: sent, looping: scheme == "srt" ? 1 : 0)
        defer { peer.stop() }
        let receiver = try MediaStreamReceiver(
            url: url, options: StreamOptions(openTimeout: 10, ioTimeout: 1), idleTimeout: 2)
        // Read on a thread of its own, as an app's reader would be, so that
        // suites beside this one cannot starve it while SRT's buffer fills.
        let (bytes, samples, endNote) = try await Task(executorPreference: DedicatedThreadExecutor()) {
            () throws -> ([UInt8], Int, String?) in
            var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
            var bytes: [UInt8] = []
            var samples = 0
            for try await event in receiver {
                guard case .sample(let sample) = event else { continue }
                bytes += try writer.write(sample)
                samples += 1
                if samples == 30 { break }
            }
            return (bytes, samples, receiver.endNote)
        }.value
        #expect(samples == 30, "\(scheme): \(endNote ?? "")")
        let output = sent.directory.path("received.h264")
        try Data(bytes).write(to: URL(fileURLWithPath: output))
        #expect(try referenceHashes(output) == sent.hashes, "\(scheme)")
    }

    /// A connected SRT or UDP stream whose FFmpeg sender is paused
    /// (`SIGSTOP`) after 10 access units; the receiver, consumed with
    /// `for try await`, is cancelled 0.5 s later and ends (no error) well
    /// before its 10 s I/O timeout. The figure (stop to end) is printed.
    @Test(arguments: ["srt", "udp"])
    func aPausedSenderIsCancelled(_ scheme: String) async throws {
        let sent = try Sent(codec: "h264")
        let (peer, url) = try Self.ffmpegSender(scheme, sending: sent, looping: -1)
        defer { peer.stop() }
        let receiver = try MediaStreamReceiver(url: url, options: StreamOptions(openTimeout: 10, ioTimeout: 10))
        let cancellation = receiver.cancellation
        let stoppedAt = Stamp()
        // The reader and the canceller on threads of their own: the figure
        // is the receiver's, not the busy cooperative pool's.
        let pid = peer.process.processIdentifier
        let (samples, ended, canceller, cancelled) = try await Task(executorPreference: DedicatedThreadExecutor()) {
            () throws -> (Int, ContinuousClock.Instant, Task<Void, any Error>?, Bool) in
            var samples = 0
            var canceller: Task<Void, any Error>?
            for try await event in receiver {
                guard case .sample = event else { continue }
                samples += 1
                if samples == 10 {
                    kill(pid, SIGSTOP)
                    canceller = Task(executorPreference: DedicatedThreadExecutor()) {
                        try await Task.sleep(for: .milliseconds(500))
                        stoppedAt.instant.withLock { $0 = .now }
                        cancellation.cancel()
                    }
                }
            }
            return (samples, ContinuousClock.now, canceller, receiver.isCancelled)
        }.value
        try await canceller?.value
        kill(peer.process.processIdentifier, SIGCONT)
        let from = try #require(stoppedAt.instant.withLock { $0 })
        #expect(samples >= 10)
        #expect(cancelled)
        #expect(from.duration(to: ended) < .seconds(2))
        print("paused \(scheme) sender: stop to end \(from.duration(to: ended))")
    }

    /// The synchronous API: `stopRequested` set after the stream opened,
    /// while the FFmpeg sender is paused (`SIGSTOP`) and a read waits,
    /// ends that read within 2 s (it waited for SRT's peer timeout, about
    /// 4.6 s, and for UDP the 10 s I/O timeout, when the closure was only
    /// asked at open).
    @Test(arguments: ["srt", "udp"])
    func aStopRequestedMidStreamEndsAWaitingRead(_ scheme: String) throws {
        let sent = try Sent(codec: "h264")
        let (peer, url) = try Self.ffmpegSender(scheme, sending: sent, looping: -1)
        defer { peer.stop() }
        let receiver = try MediaStreamReceiver(url: url, options: StreamOptions(openTimeout: 10, ioTimeout: 10))
        var samples = 0
        while samples < 10, let event = try receiver.next() {
            if case .sample = event { samples += 1 }
        }
        kill(peer.process.processIdentifier, SIGSTOP)
        defer { kill(peer.process.processIdentifier, SIGCONT) }
        let due = ContinuousClock.now + .milliseconds(500)
        receiver.stopRequested = { ContinuousClock.now >= due }
        while try receiver.next() != nil {}
        let took = due.duration(to: .now)
        #expect(samples == 10)
        #expect(took < .seconds(2))
        print("paused \(scheme) sender, stopRequested set mid-stream: stop to end \(took)")
    }

    /// FFmpeg sending `sent` in real time over `scheme` (`-stream_loop`
    /// `looping`), and the URL our receiver opens.
    static func ffmpegSender(_ scheme: String, sending sent: Sent, looping: Int) throws -> (Peer, String) {
        let ffmpeg = [
            "-nostdin", "-v", "error", "-re", "-stream_loop", "\(looping)", "-i", sent.encoded, "-c", "copy", "-f",
            "mpegts",
        ]
        let port = try freePort(.udp)
        if scheme == "srt" {
            let peer = try Peer(
                "ffmpeg", ffmpeg + ["srt://127.0.0.1:\(port)?mode=listener&latency=20000"], seconds: 30)
            try waitUntilBound(.udp, port: port, by: peer)
            return (peer, "srt://127.0.0.1:\(port)?latency=20000")
        }
        // MPEG-TS datagrams to our port, a second after it is bound.
        let peer = try Peer(
            "sh", ["-c", "sleep 1; exec ffmpeg \"$@\"", "ffmpeg"] + ffmpeg + ["udp://127.0.0.1:\(port)?pkt_size=1316"],
            seconds: 30)
        return (peer, "udp://127.0.0.1:\(port)")
    }
}

/// When something happened, set from another task.
final class Stamp: Sendable {
    let instant = Mutex<ContinuousClock.Instant?>(nil)
}

/// One blocking `next()` of a receiver on a thread of its own: when it
/// began, when it ended and what it gave ("nil", "an event" or the error).
final class Reading: @unchecked Sendable {
    private let receiver: MediaStreamReceiver
    let began = DispatchSemaphore(value: 0)
    let ended = DispatchSemaphore(value: 0)
    let outcome = Mutex<(String, ContinuousClock.Instant)?>(nil)

    init(_ receiver: MediaStreamReceiver) { self.receiver = receiver }

    func run() {
        began.signal()
        var result = "nil"
        do {
            if try receiver.next() != nil { result = "an event" }
        } catch {
            result = "\(error)"
        }
        outcome.withLock { $0 = (result, .now) }
        ended.signal()
    }
}
