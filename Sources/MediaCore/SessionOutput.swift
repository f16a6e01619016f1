/// What an asynchronous session's output queue carries: a result, or the
/// failure that ended the session.
package enum SessionEvent<Element: Sendable>: Sendable {
    case element(Element)
    case failure(MediaError)
}

/// The output of an asynchronous compression or decompression session: the
/// samples or pictures in order, as a typed `AsyncSequence` that ends after
/// the session's `finish()` or `invalidate()`, or throws the failure that
/// stopped it.
///
/// The sequence reads a bounded queue (the session's `queueDepth`): while the
/// consumer does not read, the session's worker waits, and then so does the
/// producer — memory stays bounded, so consume concurrently with producing.
/// One iterator at a time.
public struct SessionOutput<Element: Sendable>: AsyncSequence, Sendable {
    /// Iteration throws only ``MediaError``, the failure that stopped the session.
    public typealias Failure = MediaError

    let channel: BoundedChannel<SessionEvent<Element>>

    package init(channel: BoundedChannel<SessionEvent<Element>>) { self.channel = channel }

    /// Returns the iterator; use one at a time.
    public func makeAsyncIterator() -> Iterator { Iterator(channel: channel) }

    /// Reads the session's output queue, waiting while it is empty.
    public struct Iterator: AsyncIteratorProtocol {
        /// Iteration throws only ``MediaError``, the failure that stopped the session.
        public typealias Failure = MediaError

        let channel: BoundedChannel<SessionEvent<Element>>

        /// The next result, waiting for one; nil once the session has finished or been invalidated. Throws the failure
        /// that stopped the session.
        public mutating func next() async throws(MediaError) -> Element? {
            try await Self.take(from: channel)
        }

        /// The next result, waiting for one on `actor`'s isolation; nil once the session has finished or been
        /// invalidated. Throws the failure that stopped the session.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MediaError) -> Element? {
            try await Self.take(from: channel)
        }

        private static func take(from channel: BoundedChannel<SessionEvent<Element>>) async throws(MediaError)
            -> Element?
        {
            switch await channel.receive() {
            case .element(let element): return element
            case .failure(let error): throw error
            case nil: return nil
            }
        }
    }
}

/// The check both asynchronous sessions apply to their queue depth.
package func checkQueueDepth(_ queueDepth: Int) throws(MediaError) {
    guard (1...1024).contains(queueDepth) else {
        throw .invalidArgument("queueDepth \(queueDepth): must be from 1 to 1024")
    }
}
