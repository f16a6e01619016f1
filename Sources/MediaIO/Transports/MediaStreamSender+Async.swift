// MediaStreamSender's async forms: pacing by decode time spent suspended,
// RTP feedback read in short non-blocking slices meanwhile.

import FormatConv
import MediaCore

extension MediaStreamSender {
    /// Waits without blocking a thread until decode time `decodeTime` has
    /// come (counted from the first time given, here or by a send), reading
    /// RTP feedback meanwhile (on the RTP sender's own thread), and returns the feedback gathered
    /// since it was last taken (taken now). A caller that encodes waits with
    /// this before each frame, so that a keyframe request that came during
    /// the wait shapes that frame.
    ///
    /// - Throws: `.cancelled` when the task is cancelled (the feedback stays
    ///   in the sender); what reading RTP feedback throws.
    public func waitUntilDue(_ decodeTime: MediaTime) async throws(MediaError) -> Feedback {
        if let due = dueSeconds(for: decodeTime) { try await suspend(until: due) }
        return takeFeedback()
    }

    /// Sends `sample` once its decode time is due (counted from the first
    /// sample's, whether or not the sender was made with `pacing`), the wait
    /// spent suspended as in ``waitUntilDue(_:)``; then as ``send(_:)-(CompressedSample)``
    /// (a transport's write itself blocks while libavformat sends). The
    /// feedback gathered since it was last taken (taken now).
    public func send(paced sample: CompressedSample) async throws(MediaError) -> Feedback {
        // Samples before the first keyframe are left out at once, unpaced.
        if sentKeyframe || sample.isKeyframe,
            let due = dueSeconds(for: sample.dts.isValid ? sample.dts : sample.pts)
        {
            try await suspend(until: due)
        }
        return try send(sample)
    }

    /// Ends the stream as ``finish(lingering:)`` does; for RTP the lingering
    /// is spent suspended (``RTPStreamSender/close(lingering:reason:)``).
    public func close(lingering: Duration = .milliseconds(300)) async throws(MediaError) {
        if let rtpSender {
            try await rtpSender.close(lingering: lingering)
        } else {
            try finish()
        }
    }

    /// Waits until `due` (monotonic seconds): RTP as
    /// ``RTPStreamSender/wait(until:)`` does, the transports by sleeping the task.
    private func suspend(until due: Double) async throws(MediaError) {
        let left = due - Self.monotonicSeconds()
        let deadline = ContinuousClock.now + .microseconds(max(0, (left * 1e6).rounded()))
        if let rtpSender {
            try await rtpSender.wait(until: deadline)
            return
        }
        guard left > 0 else { return }
        do {
            try await Task.sleep(until: deadline)
        } catch {
            throw MediaError(.cancelled, "\(url): the waiting task was cancelled")
        }
    }
}
