// Packet groups: packets sent within a burst interval form one group; the deltas between consecutive groups.

/// Groups acknowledged packets, in send order, into bursts
/// (draft-ietf-rmcat-gcc-02, 5.2): a packet sent within ``burstInterval`` of
/// its group's first packet joins the group, and so does one that arrives
/// within the interval of the group's last arrival with a negative
/// propagation delta (a burst the network delivered back to back). Each group
/// that closes yields its send-time, arrival-time and size deltas to the
/// previous group.
struct InterArrival: Sendable {
    struct Group: Sendable {
        var firstSend: Duration
        var lastSend: Duration
        var firstArrival: Duration
        var lastArrival: Duration
        var size: Int
    }

    /// The deltas between two consecutive groups.
    struct Delta: Sendable, Equatable {
        /// The later group's last send time minus the earlier group's.
        var sendDelta: Duration
        /// The later group's last arrival minus the earlier group's.
        var arrivalDelta: Duration
        /// The later group's size minus the earlier group's, bytes.
        var sizeDelta: Int
        /// The later group's last arrival.
        var arrival: Duration
    }

    /// The longest a group started by a network burst may last.
    static let maximumBurstDuration: Duration = .milliseconds(100)

    let burstInterval: Duration
    private(set) var current: Group?
    private(set) var previous: Group?
    /// Packets older than the current group, not used.
    private(set) var outOfOrder = 0
    /// Times a group arrived before the previous one and the history restarted.
    private(set) var resets = 0

    init(burstInterval: Duration) {
        self.burstInterval = burstInterval
    }

    /// Adds one received packet (packets in send order).
    ///
    /// - Returns: the deltas when the packet closed a group that had a predecessor.
    mutating func add(send: Duration, arrival: Duration, size: Int) -> Delta? {
        guard var group = current else {
            current = Group(firstSend: send, lastSend: send, firstArrival: arrival, lastArrival: arrival, size: size)
            return nil
        }
        if send < group.firstSend {
            outOfOrder += 1
            return nil
        }
        if belongs(send: send, arrival: arrival, to: group) {
            group.lastSend = max(group.lastSend, send)
            group.lastArrival = max(group.lastArrival, arrival)
            group.size += size
            current = group
            return nil
        }
        var delta: Delta?
        if let previous {
            let candidate = Delta(
                sendDelta: group.lastSend - previous.lastSend, arrivalDelta: group.lastArrival - previous.lastArrival,
                sizeDelta: group.size - previous.size, arrival: group.lastArrival)
            if candidate.arrivalDelta < .zero {
                resets += 1
                self.previous = nil
                current = Group(
                    firstSend: send, lastSend: send, firstArrival: arrival, lastArrival: arrival, size: size)
                return nil
            }
            delta = candidate
        }
        previous = group
        current = Group(firstSend: send, lastSend: send, firstArrival: arrival, lastArrival: arrival, size: size)
        return delta
    }

    private func belongs(send: Duration, arrival: Duration, to group: Group) -> Bool {
        if send - group.firstSend <= burstInterval { return true }
        // A burst the network delivered back to back: arrived within the
        // interval, and sooner after the previous packet than it was sent.
        let arrivalDelta = arrival - group.lastArrival
        let propagationDelta = arrivalDelta - (send - group.lastSend)
        // An arrival before the group's last is a clock jump or reordering, never a burst.
        return arrivalDelta >= .zero && arrivalDelta <= burstInterval && propagationDelta < .zero
            && arrival - group.firstArrival < Self.maximumBurstDuration
    }
}
