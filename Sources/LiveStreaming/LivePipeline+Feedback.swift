import EncodeSession
// The feedback loop: pacing while the sink is read, keyframe requests
// rate-limited into forced keyframes, target rates into the encoder.
import FormatConv
import MediaCore
import MediaIO

extension LivePipeline {
    /// Waits until media time `time` is due (counted from the first frame's
    /// time on the pipeline's clock), reading the sink's feedback meanwhile.
    func wait(until time: MediaTime) throws(MediaError) {
        let sink = try requireSink()
        guard configuration.pacing, time.isValid else {
            pendingFeedback.merge(try sink.liveFeedback(waitingUpTo: 0))
            return
        }
        let media = time.seconds
        let start = clockStart ?? (now(), media)
        clockStart = start
        let due = start.wall + (media - start.media)
        var left = due - now()
        repeat {
            pendingFeedback.merge(try sink.liveFeedback(waitingUpTo: max(0, min(0.02, left))))
            left = due - now()
        } while left > 0 && !isStopped
    }

    /// Counts `feedback` in and keeps what the next frame acts on.
    func absorb(_ feedback: StreamFeedback) {
        if let rate = feedback.targetBitRate { pendingRate = rate }
        let requests = feedback.keyframeRequests
        guard requests > 0 else { return }
        record.keyframeRequests += requests
        guard configuration.answersKeyframeRequests, encoder != nil || source.file == nil else {
            record.keyframeRequestsNotHonourable += requests
            return
        }
        record.keyframeRequestsCoalesced += keyframePending ? requests : requests - 1
        keyframePending = true
    }

    /// Applies the feedback gathered to `encoder` before a frame: a new
    /// target rate, and whether this frame is forced to be a keyframe (a
    /// request pending and the last forced one at least
    /// ``Configuration/keyframeRequestInterval`` ago).
    func applyFeedback(to encoder: CompressionSession) throws(MediaError) -> Bool {
        absorb(pendingFeedback)
        pendingFeedback = StreamFeedback()
        try applyRate(to: encoder)
        return takeKeyframeDecision()
    }

    /// Whether the next frame is forced to be a keyframe: a request pending and the last forced one at least
    /// ``Configuration/keyframeRequestInterval`` ago (then counted as honoured).
    func takeKeyframeDecision() -> Bool {
        guard keyframePending else { return false }
        let time = now()
        let interval = configuration.keyframeRequestInterval
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        if let last = lastForcedKeyframe, time - last < seconds { return false }
        keyframePending = false
        lastForcedKeyframe = time
        record.keyframeRequestsHonoured += 1
        record.keyframesForcedAt = Array((record.keyframesForcedAt + [record.frames]).suffix(64))
        return true
    }

    /// Applies a pending target rate to `encoder`, counted.
    func applyRate(to encoder: CompressionSession) throws(MediaError) {
        if let rate = pendingRate {
            pendingRate = nil
            if rate != encoder.properties.averageBitRate {
                try encoder.setAverageBitRate(rate)
                record.rateChanges += 1
                record.rateRange =
                    record.rateRange.map { min($0.lowerBound, rate)...max($0.upperBound, rate) }
                    ?? rate...rate
                record.recentRates = Array((record.recentRates + [rate]).suffix(5))
            }
        }
    }

    /// Sends `samples` to the sink, keeping the feedback for the next frame.
    func send(_ samples: [CompressedSample]) throws(MediaError) {
        let sink = try requireSink()
        for sample in samples {
            pendingFeedback.merge(try sink.sendLive(sample))
            record.samplesSent += 1
        }
    }

    /// The encoder for `frame`'s size: made on the first pushed frame, and
    /// made again when the size changes (the one before finished, its last
    /// samples sent; the new one starts with a keyframe and parameter sets).
    func encoder(for frame: PixelBuffer) throws(MediaError) -> CompressionSession {
        if let encoder, encoder.width == frame.width, encoder.height == frame.height { return encoder }
        if let encoder { try finishEncoder(encoder) }
        let made = try Self.makeEncoder(
            width: frame.width, height: frame.height, configuration.encoder, source.framesPerSecond)
        encoder = made
        record.encodersMade += 1
        return made
    }

    /// Sends what `encoder` held back, ends it and counts its dropped frames.
    func finishEncoder(_ encoder: CompressionSession) throws(MediaError) {
        frameObserver?(.willFinish(encoder))
        let samples = try encoder.finish()
        frameObserver?(.finished(encoder))
        try send(samples)
        encoder.invalidate()
        record.encoderDroppedFrames += encoder.droppedFrames.count
    }

    static func makeEncoder(width: Int, height: Int, _ settings: EncoderSettings, _ framesPerSecond: Double)
        throws(MediaError) -> CompressionSession
    {
        try CompressionSession(
            width: width, height: height, codec: settings.codec, encoder: settings.backend,
            properties: settings.compressionProperties(framesPerSecond: framesPerSecond))
    }
}
