// MediaStreamReceiver as an AsyncSequence: each blocking read runs on the
// receiver's own thread while the awaiting task is suspended.

import MediaCore

extension MediaStreamReceiver: AsyncSequence {
    /// An event of the stream.
    public typealias Element = Event
    /// What a read that no reconnection cures throws.
    public typealias Failure = MediaError

    /// Reads the receiver's events, one ``MediaStreamReceiver/next()`` at a
    /// time, off the awaiting task's thread.
    ///
    /// Cancelling the awaiting task flips the receiver's
    /// ``MediaStreamReceiver/cancellation``: the wait in progress ends within
    /// about 0.1 s, what RTP's jitter buffer or TCP's assembler held is
    /// handed out, then the sequence ends (nil, no error). One iterator at a
    /// time per receiver.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let receiver: MediaStreamReceiver

        /// The next event; nil once the stream ended or was cancelled.
        public mutating func next() async throws(MediaError) -> Event? {
            try await Self.read(HandOver(value: receiver))
        }

        /// The next event; nil once the stream ended or was cancelled.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MediaError) -> Event? {
            try await Self.read(HandOver(value: receiver))
        }

        private static func read(_ receiver: HandOver<MediaStreamReceiver>) async throws(MediaError) -> Event? {
            try await awaitBlocking(on: receiver.value.worker, cancellation: receiver.value.cancellation) {
                () throws(MediaError) -> Event? in
                try receiver.value.next()
            }
        }
    }

    /// An iterator over the events; the receiver is read by one at a time.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(receiver: self) }
}
