// RTPStreamReceiver as an AsyncSequence of its events, read in short poll
// slices on the receiver's own thread so that a cancel ends it at once.

import MediaCore

extension RTPStreamReceiver: AsyncSequence {
    /// A sample or a loss, in order.
    public typealias Element = Event
    /// What a socket error throws.
    public typealias Failure = MediaError

    /// Reads the receiver's events: ``RTPStreamReceiver/receive(waiting:)``
    /// in slices of 50 ms, off the awaiting task's thread, until the sender
    /// said BYE and everything before it was handed out, or until
    /// ``RTPStreamReceiver/cancel()`` or the awaiting task's cancellation
    /// (then it ends within about 50 ms; ``RTPStreamReceiver/finish()``
    /// still hands out what the jitter buffer holds). It has no idle
    /// timeout of its own: a silent sender is waited for until cancelled.
    /// One iterator at a time per receiver.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let receiver: RTPStreamReceiver
        var pending: [Event] = []

        /// The next event; nil once the stream ended or was cancelled.
        public mutating func next() async throws(MediaError) -> Event? {
            if pending.isEmpty { pending = try await Self.read(HandOver(value: receiver)) }
            return pending.isEmpty ? nil : pending.removeFirst()
        }

        /// The next event; nil once the stream ended or was cancelled.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MediaError) -> Event? {
            if pending.isEmpty { pending = try await Self.read(HandOver(value: receiver)) }
            return pending.isEmpty ? nil : pending.removeFirst()
        }

        /// The events of the next receive that gave any; empty at the end.
        private static func read(_ receiver: HandOver<RTPStreamReceiver>) async throws(MediaError) -> [Event] {
            try await awaitBlocking(on: receiver.value.worker, cancellation: receiver.value.cancellation) {
                () throws(MediaError) -> [Event] in
                let stream = receiver.value
                while !stream.isEnded, !stream.cancellation.isCancelled {
                    let events = try stream.receive(waiting: 0.05)
                    if !events.isEmpty { return events }
                }
                return []
            }
        }
    }

    /// An iterator over the events; the receiver is read by one at a time.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(receiver: self) }
}
