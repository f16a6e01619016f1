// WHIPEndpoint's receiver as an AsyncSequence: what a WHIPClient publishes
// comes out of `for try await`, byte for byte; cancel() and the task's
// cancellation end it while it waits; the endpoint's messages carry "whip".
import FormatConv
import Foundation
import MediaCore
import Synchronization
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct WHIPEndpointReceiverTests {
    /// Publishes `samples` from a thread of its own (not the task pool's:
    /// it blocks) to `port`/`path`, then ends the stream (BYE) and, with
    /// `deletes`, DELETEs the session; how the session ended (nil without
    /// the DELETE) once the thread is done.
    final class Publisher: Sendable {
        private let outcome = Mutex<Result<WHIPClient.Ending?, MediaError>?>(nil)

        init(port: Int, path: String, samples: [CompressedSample], deletes: Bool) {
            Thread { [self] in
                let result = Result { () throws(MediaError) -> WHIPClient.Ending? in
                    let client = try WHIPClient(
                        url: "http://127.0.0.1:\(port)\(path)", profileLevelID: [0x42, 0xC0, 0x1E])
                    try client.connect(timeoutSeconds: 60)
                    for sample in samples {
                        try client.send(sample)
                        try client.poll(timeoutMilliseconds: 5)
                    }
                    client.endStream()
                    for _ in 0..<20 { try client.poll(timeoutMilliseconds: 5) }
                    return deletes ? try client.finish() : nil
                }
                outcome.withLock { $0 = result }
            }.start()
        }

        /// The outcome once the thread is done, awaited without blocking a
        /// thread of the task pool (the receiver needs one).
        func outcome() async -> Result<WHIPClient.Ending?, MediaError> {
            while true {
                if let result = outcome.withLock({ $0 }) { return result }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// What the endpoint's receiver yielded while a ``Publisher`` sent the clip.
    struct Outcome {
        var samples: [CompressedSample]
        var received: [CompressedSample]
        var ending: Result<WHIPClient.Ending?, MediaError>
        var publishersFinished: Int
        var messages: [LogMessage]
        /// Whether the sequence ended without a cancel.
        var endedByItself: Bool
    }

    static func receive(deletes: Bool) async throws -> Outcome {
        let samples = try WHIPClientSessionTests.samples()
        // Generous deadlines for a loaded machine.
        var configuration = WHIPEndpoint.Configuration(path: "/live")
        configuration.handshakeTimeout = 60
        let endpoint = try WHIPEndpoint(configuration)
        let port = endpoint.httpPort
        let messages = Mutex<[LogMessage]>([])
        endpoint.core.logObserver = { message in messages.withLock { $0.append(message) } }
        // Without the DELETE the sequence ends by itself at the publisher's
        // BYE; with it, it goes on (answering the DELETE) until cancelled.
        let receiver = endpoint.receiver(endsWhenPublishersLeave: !deletes)
        let cancellation = receiver.cancellation
        // The receiver's own thread: sync tests running in parallel may hold
        // every thread of the task pool for many seconds.
        let receiving = Task(executorPreference: DedicatedThreadExecutor()) { () throws -> ([CompressedSample], Int) in
            var received: [CompressedSample] = []
            for try await sample in receiver { received.append(sample) }
            return (received, receiver.endpoint.publishersFinished)
        }
        let ending = await Publisher(port: port, path: "/live", samples: samples, deletes: deletes).outcome()
        // With the DELETE (or when publishing failed) nothing else ends the
        // receiver; without, a watchdog ends it if it does not end by itself.
        var failed = false
        if case .failure = ending { failed = true }
        let watchdog: Task<Void, Never>?
        if deletes || failed {
            cancellation.cancel()
            watchdog = nil
        } else {
            watchdog = Task {
                try? await Task.sleep(for: .seconds(20))
                cancellation.cancel()
            }
        }
        let (received, finished) = try await receiving.value
        let endedByItself = !cancellation.isCancelled
        watchdog?.cancel()
        return Outcome(
            samples: samples, received: received, ending: ending, publishersFinished: finished,
            messages: messages.withLock { $0 }, endedByItself: endedByItself)
    }

    @Test func theReceiverYieldsWhatAPublisherSendsAndEndsAtItsBye() async throws {
        let outcome = try await Self.receive(deletes: false)
        #expect(outcome.samples.count == 10)
        #expect(outcome.ending == .success(nil))
        #expect(outcome.endedByItself, "the publisher's BYE ends the sequence")
        #expect(outcome.publishersFinished == 1)
        #expect(outcome.received.count == outcome.samples.count)
        let equal = outcome.received.map(\.data) == outcome.samples.map(\.data)
        #expect(equal, "the access units received are the bytes sent")
        #expect(outcome.messages.allSatisfy { $0.subsystem == "whip" })
        let joined = outcome.messages.filter { $0.level == .info && $0.message.contains(" joined from 127.0.0.1:") }
        #expect(joined.count == 1)
        let left = outcome.messages.filter { $0.level == .info && $0.message.contains(" left: the publisher ended") }
        #expect(left.count == 1, "\(outcome.messages)")
    }

    @Test func aReceiverThatOutlivesItsPublisherAnswersTheDeleteUntilCancelled() async throws {
        let outcome = try await Self.receive(deletes: true)
        // 404 when the endpoint read the BYE (which ends the session) before
        // the DELETE came, 200 when not.
        #expect([.success(.deleted(status: 404)), .success(.deleted(status: 200))].contains(outcome.ending))
        #expect(outcome.publishersFinished == 1)
        let equal = outcome.received.map(\.data) == outcome.samples.map(\.data)
        #expect(equal, "the access units received are the bytes sent")
    }

    /// Starts a receiver with no publisher, waits until it has polled a
    /// while, ends it with `stop`; the time from `stop` to the loop's end.
    static func stopWaitingReceiver(
        _ stop: (WHIPEndpoint.Cancellation, Task<(Int, ContinuousClock.Instant), any Error>) -> Void
    ) async throws -> (count: Int, elapsed: Duration) {
        let endpoint = try WHIPEndpoint(.init(path: "/live"))
        let receiver = endpoint.receiver()
        let cancellation = receiver.cancellation
        // On a thread of its own, and the end taken there, so that the
        // figure is the receiver's and not the wait for a thread of a busy
        // task pool.
        let task = Task(executorPreference: DedicatedThreadExecutor()) {
            () throws -> (Int, ContinuousClock.Instant) in
            var count = 0
            for try await _ in receiver { count += 1 }
            return (count, ContinuousClock.now)
        }
        try await Task.sleep(for: .milliseconds(200))
        let start = ContinuousClock.now
        stop(cancellation, task)
        let (count, end) = try await task.value
        return (count, start.duration(to: end))
    }

    @Test func cancelEndsAReceiverWaitingForAPublisher() async throws {
        let (count, elapsed) = try await Self.stopWaitingReceiver { cancellation, _ in cancellation.cancel() }
        #expect(count == 0)
        // A generous bound that only says it stopped; the figure is printed.
        #expect(elapsed < .seconds(2))
        print("WHIPEndpoint receiver: cancel() ended the iteration in \(elapsed)")
    }

    @Test func taskCancellationEndsAReceiverWaitingForAPublisher() async throws {
        let (count, elapsed) = try await Self.stopWaitingReceiver { _, task in task.cancel() }
        #expect(count == 0)
        #expect(elapsed < .seconds(2))
        print("WHIPEndpoint receiver: task cancellation ended the iteration in \(elapsed)")
    }

    @Test func aPathThatIsNotANameIsRefused() {
        #expect(throws: MediaError.invalidArgument("WHIP path live: expected /NAME")) {
            try WHIPEndpoint(.init(path: "live"))
        }
        #expect(throws: MediaError.self) { try WHIPEndpoint(.init(path: "/")) }
    }
}
