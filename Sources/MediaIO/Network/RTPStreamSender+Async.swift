// RTPStreamSender's async forms: pacing and the end of the stream spent
// suspended, the feedback read in short non-blocking slices meanwhile.

import FormatConv
import MediaCore

extension RTPStreamSender {
    /// How long a suspended wait sleeps at most before it reads feedback
    /// and runs the session's timers again.
    static let feedbackSlice = Duration.milliseconds(5)

    /// Waits until `deadline` without blocking a thread: the task sleeps in
    /// slices of 5 ms at most (less when a session timer is due first), and
    /// between them the feedback waiting is read, NACKs are answered and
    /// sender reports sent, as ``pace(for:)`` does. What the receiver asked
    /// for stays in the sender until ``takeFeedback()`` or the next send.
    ///
    /// - Throws: `.cancelled` when the task is cancelled (the feedback read
    ///   so far stays in the sender); what reading or sending throws.
    public func wait(until deadline: ContinuousClock.Instant) async throws(MediaError) {
        while true {
            try runSession(waiting: .zero)
            let now = ContinuousClock.now
            guard now < deadline else { return }
            var nap = min(deadline - now, Self.feedbackSlice)
            if let timer = secondsUntilNextTimer { nap = min(nap, .microseconds(max(0, (timer * 1e6).rounded()))) }
            do {
                try await Task.sleep(for: nap)
            } catch {
                throw MediaError(.cancelled, "RTP sender: the waiting task was cancelled")
            }
        }
    }

    /// Waits until `deadline` as ``wait(until:)`` does, then sends `sample`
    /// as ``send(_:)`` does; the feedback gathered since it was last taken
    /// (taken now).
    public func send(_ sample: CompressedSample, at deadline: ContinuousClock.Instant) async throws(MediaError)
        -> Feedback
    {
        try await wait(until: deadline)
        return try send(sample)
    }

    /// Ends the stream as ``finish(lingering:reason:)`` does, the lingering
    /// spent suspended (``wait(until:)``) rather than blocking a thread.
    public func close(lingering: Duration = .milliseconds(200), reason: String = "end of stream")
        async throws(MediaError)
    {
        try flushFaultInjector()
        try await wait(until: ContinuousClock.now + lingering)
        try sayGoodbye(reason: reason)
    }
}
