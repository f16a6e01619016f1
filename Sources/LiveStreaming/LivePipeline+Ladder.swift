// A pipeline with a ladder: each picture through the LadderEncoder, each frame's layers to a LiveLadderSink.
import FormatConv
import MediaCore
import MediaIO

extension LivePipeline {
    /// Encodes `frame` in every layer of the ladder (a keyframe in all when a request is due) and sends the
    /// frames that came out; a target rate from the sink is counted, not applied.
    func stepLadder(_ frame: PixelBuffer, pts: MediaTime, duration: MediaTime) throws(MediaError) -> StepResult {
        let sink = try requireLadderSink()
        let ladderEncoder: LadderEncoder
        if let made = self.ladderEncoder { ladderEncoder = made } else { ladderEncoder = try makeLadderEncoder() }
        absorb(pendingFeedback)
        pendingFeedback = StreamFeedback()
        if pendingRate != nil {
            pendingRate = nil
            record.rateChangesNotApplied += 1
        }
        let forced = takeKeyframeDecision()
        frameObserver?(.willEncode(frame, index: record.frames, pts: pts, encoder: ladderEncoder.encoders[0]))
        let frames = try ladderEncoder.encode(frame, pts: pts, duration: duration, forceKeyFrame: forced)
        frameObserver?(.encoded(index: record.frames, samples: frames.count))
        record.frames += 1
        try send(frames, to: sink)
        return .sent(samples: frames.reduce(0) { $0 + $1.count })
    }

    /// Drains the ladder's encoders into the sink and counts their dropped frames.
    func finishLadder() throws(MediaError) {
        guard let ladderEncoder else { return }
        for encoder in ladderEncoder.encoders { frameObserver?(.willFinish(encoder)) }
        let frames = try ladderEncoder.finish()
        for encoder in ladderEncoder.encoders { frameObserver?(.finished(encoder)) }
        try send(frames, to: try requireLadderSink())
        for encoder in ladderEncoder.encoders {
            record.encoderDroppedFrames += encoder.droppedFrames.count
            encoder.invalidate()
        }
    }

    private func send(_ frames: [[CompressedSample]], to sink: any LiveLadderSink) throws(MediaError) {
        for layers in frames {
            pendingFeedback.merge(try sink.sendLive(layers: layers))
            record.samplesSent += layers.count
        }
    }

    private func makeLadderEncoder() throws(MediaError) -> LadderEncoder {
        guard let ladder = configuration.ladder else { preconditionFailure("a ladder step without a ladder") }
        let made = try LadderEncoder(
            ladder: ladder, settings: configuration.encoder, framesPerSecond: source.framesPerSecond)
        ladderEncoder = made
        record.encodersMade += ladder.layers.count
        return made
    }

    /// The sink as a ``LiveLadderSink``, or an error saying it takes one encode only.
    private func requireLadderSink() throws(MediaError) -> any LiveLadderSink {
        let sink = try requireSink()
        guard let ladderSink = sink as? any LiveLadderSink else {
            throw .invalidArgument(
                "the live pipeline has a ladder but its sink (\(type(of: sink))) takes one encode only")
        }
        return ladderSink
    }
}
