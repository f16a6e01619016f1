// RTPStreamSender's async forms: pacing and the end of the stream spent on
// the sender's own thread while the awaiting task is suspended.

import FormatConv
import MediaCore

extension RTPStreamSender {
    /// Waits until `deadline` without blocking the awaiting task's thread:
    /// the wait runs on the sender's own thread, as ``pace(for:)`` does
    /// (feedback read as it arrives, NACKs answered, sender reports sent),
    /// while the task is suspended. What the receiver asked for stays in the
    /// sender until ``takeFeedback()`` or the next send.
    ///
    /// - Throws: `.cancelled` when the task is cancelled (within about
    ///   50 ms; the feedback read so far stays in the sender); what reading
    ///   or sending throws.
    public func wait(until deadline: ContinuousClock.Instant) async throws(MediaError) {
        let sender = HandOver(value: self)
        let cancellation = StreamCancellation()
        try await awaitBlocking(on: worker, cancellation: cancellation) { () throws(MediaError) in
            let end = sender.value.clockTime(of: deadline)
            try sender.value.serve(until: end, untilKeyframe: false, cancellation: cancellation)
        }
        if cancellation.isCancelled { throw MediaError(.cancelled, "RTP sender: the waiting task was cancelled") }
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
    /// spent as in ``wait(until:)``.
    public func close(lingering: Duration = .milliseconds(200), reason: String = "end of stream")
        async throws(MediaError)
    {
        try flushFaultInjector()
        try await wait(until: ContinuousClock.now + lingering)
        try sayGoodbye(reason: reason)
    }
}
