// The pacer's releases: what leaves now (dequeue, process) and when to wake next (nextSendTime).

extension Pacer {
    /// Releases one packet if one may leave at `now`: the next packet of a
    /// running probe cluster once it is due, else the head of the highest
    /// class while the budget is positive, else padding at the padding rate
    /// while the queue is empty. Call it again until it returns nil, or use
    /// ``process(at:)``.
    public mutating func dequeue(at now: Duration) -> PacedPacket<Packet>? {
        advance(to: now)
        if activeProbe == nil, var next = pendingProbes.pop() {
            next.start = time
            activeProbe = next
        }
        if var probe = activeProbe {
            let due = probe.nextSendTime(startingAt: time)
            guard time >= due else { return nil }
            // Called late: the rest of the cluster keeps its rate from this packet on instead of bursting.
            if let start = probe.start, time > due { probe.start = start + (time - due) }
            let released = popMedia(probeClusterID: probe.id) ?? padding(probeClusterID: probe.id)
            probe.sentBytes += released.size
            probe.sentPackets += 1
            statistics.probeBytesSent += released.size
            if probe.isComplete {
                statistics.completedProbeClusters.append(probe.id)
                activeProbe = nil
            } else {
                activeProbe = probe
            }
            noteRelease()
            return released
        }
        if queuedPackets > 0 {
            guard media.level > 0 else { return nil }
            let released = popMedia(probeClusterID: nil)
            noteRelease()
            return released
        }
        if paddingRate > 0 && padding.level > 0 {
            let released = padding(probeClusterID: nil)
            padding.spend(bytes: released.size)
            noteRelease()
            return released
        }
        return nil
    }

    /// After a release: a budget it left spent counts its wake-up intervals from now.
    private mutating func noteRelease() {
        mediaIntervalOrigin = media.level <= 0 ? time : nil
        paddingIntervalOrigin = padding.level <= 0 ? time : nil
    }

    /// Releases everything that may leave at `now`, in order (see ``dequeue(at:)``).
    public mutating func process(at now: Duration) -> [PacedPacket<Packet>] {
        var released: [PacedPacket<Packet>] = []
        while let packet = dequeue(at: now) { released.append(packet) }
        return released
    }

    /// When something may next leave: the next packet of a probe cluster,
    /// else (with packets queued) the first time the budget is positive,
    /// else the same for padding when a padding rate is set; nil when
    /// nothing will leave until more is enqueued. A time at or before the
    /// latest time the pacer has seen means now. When the last release left
    /// the budget spent, the time is rounded up to a whole number of
    /// ``PacerConfiguration/interval``s after that release (or is now, if
    /// that point has passed).
    public var nextSendTime: Duration? {
        if let activeProbe { return PacerTime.duration(activeProbe.nextSendTime(startingAt: time)) }
        if !pendingProbes.isEmpty { return PacerTime.duration(time) }
        if queuedPackets > 0 { return wakeTime(for: media, origin: mediaIntervalOrigin) }
        if paddingRate > 0 { return wakeTime(for: padding, origin: paddingIntervalOrigin) }
        return nil
    }

    /// The first time `budget` is positive; when a release left it spent at `origin`, the first whole
    /// number of intervals after `origin` at which it is (or now, if that has passed).
    private func wakeTime(for budget: PacerBudget, origin: Int?) -> Duration? {
        let positiveSince: Int
        if budget.level > 0 {
            // Positive already: since about level / rate ago (the refill is linear below the cap).
            positiveSince = time - budget.level / max(budget.rate, 1)
        } else {
            guard let wait = budget.timeUntilPositive() else { return nil }
            positiveSince = time + wait
        }
        guard let origin else { return PacerTime.duration(max(positiveSince, time)) }
        let interval = PacerTime.nanoseconds(configuration.interval)
        let elapsed = positiveSince - origin
        let intervals = max(1, elapsed > 0 ? (elapsed + interval - 1) / interval : 0)
        return PacerTime.duration(max(origin + intervals * interval, time))
    }

    /// Takes the head of the highest non-empty class and charges it.
    private mutating func popMedia(probeClusterID: Int?) -> PacedPacket<Packet>? {
        guard let index = queues.firstIndex(where: { !$0.isEmpty }), let entry = queues[index].pop() else {
            return nil
        }
        queuedPackets -= 1
        queuedBytes -= entry.size
        media.spend(bytes: entry.size)
        if padding.level > 0 {
            padding.level = max(padding.level - PacerTime.nanobits(bytes: entry.size), 0)
        }
        applicationLimited.sent(bytes: entry.size)
        statistics.packetsSent += 1
        statistics.bytesSent += entry.size
        statistics.bytesSentByPriority[index] += entry.size
        return PacedPacket(
            content: .media(entry.packet), size: entry.size, priority: PacerPriority(rawValue: index)!,
            probeClusterID: probeClusterID, enqueuedAt: PacerTime.duration(entry.enqueuedAt),
            sentAt: PacerTime.duration(time))
    }

    /// A padding packet of the configured size (budgets are the caller's to charge).
    private mutating func padding(probeClusterID: Int?) -> PacedPacket<Packet> {
        let size = configuration.paddingPacketSize
        statistics.packetsSent += 1
        statistics.bytesSent += size
        statistics.paddingPacketsSent += 1
        statistics.paddingBytesSent += size
        return PacedPacket(
            content: .padding, size: size, priority: .padding, probeClusterID: probeClusterID, enqueuedAt: nil,
            sentAt: PacerTime.duration(time))
    }
}
