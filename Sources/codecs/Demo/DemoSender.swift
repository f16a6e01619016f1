import EncodeSession
import FormatConv
import MediaCore
import MediaIO

/// What the sender thread found.
struct DemoSenderResult: Sendable {
    var encodeSeconds = 0.0
    var framesEncoded = 0
    var bytesProduced = 0
    var encoderBackends: [String] = []
    var encoderDroppedFrames = 0
}

/// The sending side: makes frames, encodes them, writes Annex-B and sends it.
struct DemoSender {
    let options: DemoOptions
    let exchange: DemoExchange
    let broadcaster: StreamBroadcaster

    func run() -> DemoSenderResult {
        var result = DemoSenderResult()
        do {
            try send(&result)
        } catch {
            exchange.state.withLock { $0.failure = $0.failure ?? "sender: \(error)" }
        }
        broadcaster.closeAll()
        // A receiver still waiting to connect must not wait forever.
        exchange.state.withLock { $0.receiverMayConnect = true }
        return result
    }

    /// An encoder with the demo's live settings (``DemoOptions/encode``).
    private func makeEncoder(width: Int, height: Int) throws(MediaError) -> CompressionSession {
        try CompressionSession(
            width: width, height: height, codec: options.encode.codec, encoder: options.encode.encoder,
            properties: options.encode.properties)
    }

    private func send(_ result: inout DemoSenderResult) throws(MediaError) {
        let frameDuration = MediaTime(value: 1, timescale: Int32(options.frameRate))
        let clip = SyntheticClip(
            width: options.width, height: options.height, frameCount: options.frames, frameRate: options.frameRate)
        let second = options.secondSize
        let smallClip = SyntheticClip(
            width: second.width, height: second.height, frameCount: options.frames, frameRate: options.frameRate)
        var encoder = try makeEncoder(width: options.width, height: options.height)
        result.encoderBackends.append(describe(encoder))
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var sequence = 0
        var receiverJoined = false
        var receiverStarted = false
        let start = monotonicSeconds()
        let dropEvery = options.dropEvery

        func ship(_ samples: [CompressedSample]) throws(MediaError) {
            for sample in samples {
                let bytes = try writer.write(sample)
                let frameIndex = Int((sample.pts.converted(toTimescale: Int32(options.frameRate))).value)
                if receiverJoined && !receiverStarted && sample.isKeyframe {
                    // The receiver's stream starts here, with the parameter sets
                    // the writer puts before this keyframe.
                    receiverStarted = true
                    broadcaster.startWaitingClients()
                }
                let dropped = dropEvery.map { sequence > 0 && sequence % $0 == 0 } ?? false
                let unit = DemoAccessUnit(
                    sequence: sequence, frameIndex: frameIndex, pts: sample.pts, dts: sample.dts,
                    isKeyframe: sample.isKeyframe,
                    width: sample.formatDescription.width, height: sample.formatDescription.height,
                    byteCount: bytes.count, sentToReceiver: receiverStarted, droppedBySender: dropped)
                sequence += 1
                result.bytesProduced += bytes.count
                let onWire = receiverStarted && !dropped
                exchange.state.withLock { state in
                    state.produced.append(unit)
                    if onWire {
                        state.wire.append(unit)
                    } else {
                        state.sources[frameIndex] = nil
                    }
                }
                if onWire {
                    let receivers = broadcaster.send(bytes, isKeyframe: sample.isKeyframe)
                    if receivers == 0 {
                        throw MediaError(.system, "the receiver went away at access unit \(unit.sequence)")
                    }
                }
            }
        }

        /// Sends the frames `encoder` held back and ends it.
        func finishEncoder() throws(MediaError) {
            let before = monotonicSeconds()
            let delayed = try encoder.finish()
            result.encodeSeconds += monotonicSeconds() - before
            try ship(delayed)
            result.encoderDroppedFrames = encoder.droppedFrames.count
            encoder.invalidate()
        }

        for index in 0..<options.frames {
            if index == options.lateJoin {
                exchange.state.withLock { $0.receiverMayConnect = true }
                try broadcaster.acceptPending(timeoutMilliseconds: 10_000)
                guard broadcaster.clientCount > 0 else {
                    throw MediaError(.system, "the receiver did not connect within 10 s")
                }
                receiverJoined = true
            }
            if options.resolutionChange && index == options.changeFrame {
                // A new session at the new size: its first frame is a keyframe
                // with new parameter sets, which the receiver turns into a new
                // FormatDescription.
                try finishEncoder()
                encoder = try makeEncoder(width: second.width, height: second.height)
                result.encoderBackends.append(describe(encoder))
            }
            if options.pace { sleep(until: start + Double(index) / Double(options.frameRate)) }
            let small = options.resolutionChange && index >= options.changeFrame
            let frame = small ? smallClip.frame(at: index) : clip.frame(at: index)
            let pts = frameDuration * Int64(index)
            let submitted = monotonicSeconds()
            exchange.state.withLock { state in
                state.submitted[index] = submitted
                state.sources[index] = frame
                state.framesSubmitted = index + 1
            }
            let samples = try encoder.encode(frame, pts: pts, duration: frameDuration)
            result.encodeSeconds += monotonicSeconds() - submitted
            result.framesEncoded += 1
            try ship(samples)
        }
        try finishEncoder()
    }

    private func describe(_ encoder: CompressionSession) -> String {
        let description = encoder.formatDescription
        var text = "\(encoder.backend) \(description.width)x\(description.height)"
        if let reason = encoder.fallbackReason {
            text += " (hardware not used: \(reason))"
        } else if options.encode.encoderName != "auto" {
            text += " (--encoder \(options.encode.encoderName))"
        } else {
            text += " (automatic)"
        }
        return text
    }
}
