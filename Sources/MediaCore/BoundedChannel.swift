import Synchronization

/// A first-in first-out queue between tasks with a fixed capacity: `send`
/// suspends while the queue is full (back-pressure), `receive` suspends while
/// it is empty. One receiver at a time.
///
/// Elements carry the channel's *generation*: ``purge()`` empties the queue
/// and starts a new generation, and a `send` tagged with an older one is
/// refused, so nothing from before a purge gets in after it.
///
/// Both asynchronous sessions run on two of these: the input queue (frames
/// or samples waiting for the encoder or decoder) and the output queue behind
/// ``SessionOutput`` (samples or pictures waiting for the consumer).
package final class BoundedChannel<Element: Sendable>: Sendable {
    private struct State {
        var buffer: [Element] = []
        var head = 0
        var generation = 0
        var finished = false
        var receiver: CheckedContinuation<Element?, Never>?
        var waitingSenders: [CheckedContinuation<Void, Never>] = []

        var count: Int { buffer.count - head }

        mutating func popFirst() -> Element? {
            guard head < buffer.count else { return nil }
            let element = buffer[head]
            head += 1
            if head > 64, head * 2 > buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return element
        }
    }

    private enum SendStep {
        case done
        case refused
        case handOff(CheckedContinuation<Element?, Never>)
        case wait
    }

    private enum ReceiveStep {
        case value(Element, CheckedContinuation<Void, Never>?)
        case end
        case waiting
    }

    package let capacity: Int
    private let state = Mutex(State())

    package init(capacity: Int) {
        precondition(capacity >= 1)
        self.capacity = capacity
    }

    /// The current generation (for tagging sends).
    package var generation: Int { state.withLock { $0.generation } }

    /// Appends `element`, waiting while the queue is full. Returns false (and
    /// drops nothing else) when the channel is finished or `generation` is
    /// given and is no longer current.
    package func send(_ element: Element, generation: Int? = nil) async -> Bool {
        while true {
            let step = state.withLock { s -> SendStep in
                if s.finished { return .refused }
                if let generation, generation != s.generation { return .refused }
                if let receiver = s.receiver, s.count == 0 {
                    s.receiver = nil
                    return .handOff(receiver)
                }
                if s.count < capacity {
                    s.buffer.append(element)
                    return .done
                }
                return .wait
            }
            switch step {
            case .done: return true
            case .refused: return false
            case .handOff(let receiver):
                receiver.resume(returning: element)
                return true
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { s -> Bool in
                        if s.finished || s.count < capacity { return true }
                        s.waitingSenders.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
    }

    /// The next element, or nil once the channel is finished and empty.
    package func receive() async -> Element? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
            let step = state.withLock { s -> ReceiveStep in
                if let element = s.popFirst() {
                    let sender = s.waitingSenders.isEmpty ? nil : s.waitingSenders.removeFirst()
                    return .value(element, sender)
                }
                if s.finished { return .end }
                precondition(s.receiver == nil, "BoundedChannel allows one receiver at a time")
                s.receiver = continuation
                return .waiting
            }
            switch step {
            case .value(let element, let sender):
                sender?.resume()
                continuation.resume(returning: element)
            case .end:
                continuation.resume(returning: nil)
            case .waiting:
                break
            }
        }
    }

    /// Empties the queue, starts a new generation and returns what was queued.
    package func purge() -> [Element] {
        let (removed, senders) = state.withLock { s -> ([Element], [CheckedContinuation<Void, Never>]) in
            var removed: [Element] = []
            while let element = s.popFirst() { removed.append(element) }
            s.generation += 1
            let senders = s.waitingSenders
            s.waitingSenders = []
            return (removed, senders)
        }
        for sender in senders { sender.resume() }
        return removed
    }

    /// Ends the channel: queued elements are still received, then nil;
    /// further sends are refused.
    package func finish() {
        let (receiver, senders) = state.withLock {
            s -> (CheckedContinuation<Element?, Never>?, [CheckedContinuation<Void, Never>]) in
            s.finished = true
            let receiver = s.count == 0 ? s.receiver : nil
            if receiver != nil { s.receiver = nil }
            let senders = s.waitingSenders
            s.waitingSenders = []
            return (receiver, senders)
        }
        receiver?.resume(returning: nil)
        for sender in senders { sender.resume() }
    }
}
