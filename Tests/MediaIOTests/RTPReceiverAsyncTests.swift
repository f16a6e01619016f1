import MediaCore
import MediaIO
import RTPPayload
import Synchronization
import TestSupport
import Testing

/// `RTPStreamReceiver` awaited as an `AsyncSequence`: it hands out the
/// samples sent to it, waits on while the sender is silent (it has no idle
/// timeout of its own), and ends, without an error, when its task is
/// cancelled.
struct RTPReceiverAsyncTests {
    final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    @Test func anAwaitedReceiverEndsWhenItsTaskIsCancelled() async throws {
        let samples = try StreamFeedbackTests.samples()
        let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port, configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED)))
        let cancellation = receiver.cancellation
        let received = Count()
        // On a thread of its own: the figure is the receiver's, not the
        // time the cooperative pool (busy with other suites) takes to run it.
        let consumer = Task(executorPreference: DedicatedThreadExecutor()) {
            () throws -> ([Int], ContinuousClock.Instant) in
            var sizes: [Int] = []
            for try await event in receiver {
                guard case .sample(let sample) = event else { continue }
                sizes.append(sample.data.count)
                received.value.store(sizes.count, ordering: .releasing)
            }
            return (sizes, ContinuousClock.now)
        }
        for sample in samples { _ = try sender.send(sample) }
        // Every sample handed out (the jitter buffer's delay), then silence.
        for _ in 0..<500 where received.value.load(ordering: .acquiring) < samples.count {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(300))
        let stoppedAt = ContinuousClock.now
        consumer.cancel()
        let (sizes, endedAt) = try await consumer.value
        let took = stoppedAt.duration(to: endedAt)
        #expect(sizes.count == samples.count)
        #expect(cancellation.isCancelled)
        #expect(took < .seconds(2))
        print("RTP receiver, task cancelled: stop to end \(took)")
    }
}
