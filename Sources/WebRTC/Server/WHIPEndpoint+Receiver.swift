import FormatConv
import MediaCore
import Synchronization

// The receiver: the access units publishers send as an AsyncSequence, which
// a thread-safe cancel() or the iterating task's cancellation ends.
extension WHIPEndpoint {
    /// Ends a ``Receiver`` from any thread or task.
    public final class Cancellation: Sendable {
        private let flag = Atomic(false)

        /// A flag not yet set.
        public init() {}

        /// Ends the receiver: its iteration returns nil within one poll
        /// interval, after the access units already taken.
        public func cancel() { flag.store(true, ordering: .releasing) }

        /// Whether ``cancel()`` was called.
        public var isCancelled: Bool { flag.load(ordering: .acquiring) }
    }

    /// The access units publishers send, in decode order, as they arrive:
    /// `for try await sample in endpoint.receiver() { … }`. Each step polls
    /// the endpoint (HTTP, media, timers) for at most
    /// ``pollInterval`` while it waits, so iterate from one task and do not
    /// poll the endpoint elsewhere meanwhile.
    ///
    /// The sequence ends (nil) after the access units received so far once
    /// ``cancel()`` (or ``cancellation``'s, from any thread or task) is
    /// called, once the iterating task is cancelled, or once every publisher
    /// that connected has left (``WHIPEndpoint/publishersHaveLeft``, with
    /// `endsWhenPublishersLeave`). It throws what
    /// ``WHIPEndpoint/poll(timeoutMilliseconds:)`` throws. The endpoint
    /// stays open: ``WHIPEndpoint/close()`` it when done.
    public struct Receiver: AsyncSequence {
        /// An access unit, as a publisher sent it.
        public typealias Element = CompressedSample

        let endpoint: WHIPEndpoint
        /// How long one poll waits for input; a cancel takes effect within it.
        public let pollInterval: Duration
        /// Whether the sequence ends once every publisher that connected has left.
        public let endsWhenPublishersLeave: Bool
        /// Ends the sequence from any thread or task.
        public let cancellation: Cancellation

        /// Ends the sequence (thread-safe): the same as `cancellation.cancel()`.
        public func cancel() { cancellation.cancel() }

        /// An iterator that polls the endpoint.
        public func makeAsyncIterator() -> Iterator {
            Iterator(receiver: self)
        }

        /// Polls the endpoint until an access unit is there or the sequence ends.
        public struct Iterator: AsyncIteratorProtocol {
            let receiver: Receiver
            var pending: [CompressedSample] = []
            var index = 0

            /// The next access unit, or nil once the sequence ended.
            public mutating func next() async throws -> CompressedSample? {
                let endpoint = receiver.endpoint
                let milliseconds = Int32(
                    clamping: receiver.pollInterval.components.seconds * 1000
                        + receiver.pollInterval.components.attoseconds / 1_000_000_000_000_000)
                while true {
                    if index < pending.count {
                        defer { index += 1 }
                        return pending[index]
                    }
                    pending = endpoint.takeReceivedSamples()
                    index = 0
                    if !pending.isEmpty { continue }
                    if receiver.cancellation.isCancelled || Task.isCancelled { return nil }
                    if receiver.endsWhenPublishersLeave && endpoint.publishersHaveLeft { return nil }
                    try endpoint.poll(timeoutMilliseconds: Swift.max(0, milliseconds))
                    // Let other tasks of this executor run between polls.
                    await Task.yield()
                }
            }
        }
    }

    /// The access units publishers send, as an `AsyncSequence` (see ``Receiver``).
    ///
    /// - Parameters:
    ///   - pollInterval: how long one poll waits for input (10 ms by
    ///     default); a cancel takes effect within it.
    ///   - endsWhenPublishersLeave: end once every publisher that connected
    ///     has left (true by default), as `codecs stream receive whip://` does.
    ///   - cancellation: the flag that ends it; a new one by default.
    public func receiver(
        pollInterval: Duration = .milliseconds(10), endsWhenPublishersLeave: Bool = true,
        cancellation: Cancellation = Cancellation()
    ) -> Receiver {
        Receiver(
            endpoint: self, pollInterval: pollInterval, endsWhenPublishersLeave: endsWhenPublishersLeave,
            cancellation: cancellation)
    }

    /// The synchronous form of one step of ``Receiver``: the access units
    /// already received, else those that arrive while it waits up to
    /// `milliseconds` (empty when none did); nil once every publisher that
    /// connected has left and nothing is left to take.
    public func receive(waitingUpTo milliseconds: Int32) throws(MediaError) -> [CompressedSample]? {
        let ready = takeReceivedSamples()
        if !ready.isEmpty { return ready }
        if publishersHaveLeft { return nil }
        try poll(timeoutMilliseconds: Swift.max(0, milliseconds))
        return takeReceivedSamples()
    }

    /// The next access unit a publisher sent, one at a time, waiting for it
    /// in steps of 20 ms: nil once every publisher that connected has left
    /// and nothing is left to take, or as soon as `stopRequested` says so.
    ///
    /// - Throws: `MediaError.Code.timedOut` ("no publisher within N s") when
    ///   `firstPublisherWithin` has passed since the endpoint opened and no
    ///   publisher has made an offer; the endpoint's own errors otherwise.
    public func nextSample(
        firstPublisherWithin deadline: Duration? = nil, stopRequested: () -> Bool = { false }
    ) throws(MediaError) -> CompressedSample? {
        while pendingSamples.isEmpty {
            guard !stopRequested(), let samples = try receive(waitingUpTo: 20) else { return nil }
            pendingSamples = samples
            if let deadline, pendingSamples.isEmpty, publishersFinished == 0, publisherCount == 0,
                ContinuousClock.now - openedAt > deadline
            {
                let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
                throw MediaError(.timedOut, "no publisher within \(seconds) s")
            }
        }
        return pendingSamples.removeFirst()
    }
}
