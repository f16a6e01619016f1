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
    public typealias Failure = MediaError

    let channel: BoundedChannel<SessionEvent<Element>>

    package init(channel: BoundedChannel<SessionEvent<Element>>) { self.channel = channel }

    public func makeAsyncIterator() -> Iterator { Iterator(channel: channel) }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Failure = MediaError

        let channel: BoundedChannel<SessionEvent<Element>>

        public mutating func next() async throws(MediaError) -> Element? {
            try await Self.take(from: channel)
        }

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
