/// The messages waiting for one WebSocket client, and the rule that keeps a
/// slow client from holding up the stream or memory: a client more than a GOP
/// behind skips to the newest keyframe.
///
/// Messages are whole frames (header and payload). The one at the head may be
/// partly written; it is always finished, so the client sees whole frames.
/// When a keyframe is queued while an earlier keyframe is still waiting
/// unwritten, the client is more than a GOP behind: every access unit not yet
/// started is dropped and the new keyframe is next (one skip, its access
/// units counted). When the queued bytes pass ``maximumBytes``, the access
/// units not yet started are dropped and the client waits for the next
/// keyframe (one skip). Configuration and control messages are never dropped;
/// they are bounded instead: ``appendControl(_:)`` says when the control bytes
/// waiting pass ``maximumControlBytes`` (a client that asks for replies and
/// does not read them), and the server then closes the client.
///
/// No I/O: the server hands it messages and takes bytes off its head.
public struct ClientQueue: Sendable {
    /// What a queued message is.
    public enum Kind: Sendable, Hashable {
        case accessUnit(isKeyframe: Bool)
        /// Configuration, pong, close, stats: never dropped.
        case control
    }

    private struct Message: Sendable {
        var bytes: [UInt8]
        var kind: Kind
    }

    /// The most bytes queued before the client is made to skip.
    public let maximumBytes: Int
    /// The most bytes of control messages (pongs, replies, close frames)
    /// waiting before ``appendControl(_:)`` reports an overflow.
    public let maximumControlBytes: Int
    private var messages: [Message] = []
    private var head = 0
    /// Bytes of the head message already written.
    private var headOffset = 0
    /// Whether access units are dropped until the next keyframe (a new
    /// client, or one that overflowed).
    public private(set) var waitingForKeyframe = true
    /// Whether the client ever started (got its first keyframe).
    public private(set) var started = false
    /// Times the client skipped to a keyframe.
    public private(set) var skips = 0
    /// Access units dropped by skips (not the ones before a new client's
    /// first keyframe).
    public private(set) var accessUnitsSkipped = 0
    /// Access units queued (and so sent, or being sent).
    public private(set) var accessUnitsQueued = 0
    /// Bytes queued and not yet written.
    public private(set) var queuedBytes = 0
    /// Bytes of control messages queued and not yet written.
    public private(set) var controlBytes = 0

    /// Creates an empty queue that makes its client skip once more than `maximumBytes` are queued and reports an
    /// overflow once more than `maximumControlBytes` of control messages wait; it waits for a first keyframe.
    public init(maximumBytes: Int, maximumControlBytes: Int = 256 << 10) {
        self.maximumBytes = maximumBytes
        self.maximumControlBytes = maximumControlBytes
    }

    /// Whether nothing waits to be written.
    public var isEmpty: Bool { head == messages.count }

    /// Queues a control message (written after those before it; never
    /// dropped). Returns false when the control bytes waiting are now more
    /// than ``maximumControlBytes``: the client does not read its replies.
    @discardableResult
    public mutating func appendControl(_ bytes: [UInt8]) -> Bool {
        messages.append(Message(bytes: bytes, kind: .control))
        queuedBytes += bytes.count
        controlBytes += bytes.count
        return controlBytes <= maximumControlBytes
    }

    /// Queues an access unit's message, applying the skip rules. Returns
    /// whether it was queued.
    @discardableResult
    public mutating func appendAccessUnit(_ bytes: [UInt8], isKeyframe: Bool) -> Bool {
        if waitingForKeyframe {
            guard isKeyframe else {
                if started { accessUnitsSkipped += 1 }
                return false
            }
            waitingForKeyframe = false
            started = true
        } else if isKeyframe, hasUnstartedKeyframe {
            // More than a GOP behind: go to this keyframe.
            dropUnstartedAccessUnits()
            skips += 1
        }
        messages.append(Message(bytes: bytes, kind: .accessUnit(isKeyframe: isKeyframe)))
        queuedBytes += bytes.count
        accessUnitsQueued += 1
        if queuedBytes > maximumBytes {
            skipToNextKeyframe()
        }
        return true
    }

    /// Drops the access units not yet started and waits for the next
    /// keyframe: one skip (for a server over its total memory bound).
    public mutating func skipToNextKeyframe() {
        dropUnstartedAccessUnits()
        waitingForKeyframe = true
        skips += 1
    }

    /// Drops the access units not yet started (a client that is leaving:
    /// its close frame goes next). Not a skip.
    public mutating func endAccessUnits() {
        let first = headOffset > 0 ? head + 1 : head
        if first < messages.count {
            let dropped = messages[first...].filter { $0.kind != .control }
            queuedBytes -= dropped.reduce(0) { $0 + $1.bytes.count }
            accessUnitsQueued -= dropped.count
            messages.replaceSubrange(first..., with: messages[first...].filter { $0.kind == .control })
        }
    }

    /// The bytes to write next (part of the head message), or an empty slice.
    public var nextBytes: ArraySlice<UInt8> {
        guard head < messages.count else { return [] }
        return messages[head].bytes[headOffset...]
    }

    /// Marks `count` bytes of ``nextBytes`` written.
    public mutating func consume(_ count: Int) {
        precondition(head < messages.count && count <= messages[head].bytes.count - headOffset)
        headOffset += count
        queuedBytes -= count
        if messages[head].kind == .control { controlBytes -= count }
        if headOffset == messages[head].bytes.count {
            messages[head].bytes = []
            head += 1
            headOffset = 0
            if head > 64, head * 2 > messages.count {
                messages.removeFirst(head)
                head = 0
            }
        }
    }

    private var hasUnstartedKeyframe: Bool {
        let first = headOffset > 0 ? head + 1 : head
        return messages[min(first, messages.count)...].contains { $0.kind == .accessUnit(isKeyframe: true) }
    }

    private mutating func dropUnstartedAccessUnits() {
        let first = headOffset > 0 ? head + 1 : head
        guard first < messages.count else { return }
        var kept: [Message] = []
        for message in messages[first...] {
            if case .accessUnit = message.kind {
                queuedBytes -= message.bytes.count
                accessUnitsSkipped += 1
                accessUnitsQueued -= 1
            } else {
                kept.append(message)
            }
        }
        messages.replaceSubrange(first..., with: kept)
    }
}
