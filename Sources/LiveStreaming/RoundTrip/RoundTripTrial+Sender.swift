// The trial's sending side: the synthetic clip encoded and sent as RTP or Annex-B over TCP.
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// Where the trial's sender puts the stream.
enum TrialOutput {
    /// Annex-B to the one receiver that connects to the listener.
    case tcp(TCPListener)
    /// RTP to the receiver's port on 127.0.0.1 through an ``RTPStreamSender``
    /// (the RTP timestamp of frame 0 is 0): sender reports, NACKs answered,
    /// picture loss indications turned into keyframes.
    case rtp(port: Int)
}

/// The sending side: makes frames, encodes them, and sends them as Annex-B
/// over TCP or as RTP over UDP (``RTPStreamSender``, RTCP included).
struct TrialSender {
    let options: RoundTripTrial.Configuration
    let exchange: TrialExchange
    let output: TrialOutput
    /// Sees every access unit encoded, before it is sent.
    let onEncoded: ((CompressedSample) throws(MediaError) -> Void)?

    func run() -> RoundTripTrial.SenderFigures {
        var result = RoundTripTrial.SenderFigures()
        var receiver: TCPConnection? = nil
        do {
            try send(&result, receiver: &receiver)
        } catch {
            exchange.state.withLock { $0.failure = $0.failure ?? "sender: \(error)" }
        }
        receiver?.shutdownSending()
        receiver?.close()
        // A receiver still waiting to connect must not wait forever.
        exchange.state.withLock {
            $0.receiverMayConnect = true
            $0.senderFinished = true
        }
        return result
    }

    /// An encoder with the trial's settings (``RoundTripTrial/Configuration/properties``).
    private func makeEncoder(width: Int, height: Int) throws(MediaError) -> CompressionSession {
        try CompressionSession(
            width: width, height: height, codec: options.codec, encoder: options.encoder,
            properties: options.properties)
    }

    private func send(_ result: inout RoundTripTrial.SenderFigures, receiver: inout TCPConnection?)
        throws(MediaError)
    {
        let frameDuration = MediaTime(value: 1, timescale: Int32(options.frameRate))
        let clip = SyntheticClip(
            width: options.width, height: options.height, frameCount: options.frames, frameRate: options.frameRate)
        let second = options.secondSize
        let smallClip = SyntheticClip(
            width: second.width, height: second.height, frameCount: options.frames, frameRate: options.frameRate)
        var encoder = try makeEncoder(width: options.width, height: options.height)
        note(encoder, in: &result)
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var rtp: RTPStreamSender? = nil
        if case .rtp(let port) = output {
            rtp = try RTPStreamSender(
                host: "127.0.0.1", port: port,
                configuration: .init(
                    packetizer: .init(codec: options.codec, ssrc: 0x0DE0_0001, timestampOffset: 0),
                    cname: "codecs-demo"),
                faultInjector: options.loss.map {
                    PacketFaultInjector(seed: $0.seed, dropProbability: $0.percent / 100)
                })
        }
        defer {
            if let rtp {
                result.outbound = rtp.statistics
                result.remoteInbound = rtp.remoteStatistics
                result.packetsDroppedOnPurpose = rtp.packetsDroppedOnPurpose
            }
        }
        /// A keyframe request from the receiver, for the next frame encoded.
        var keyframeAsked = false
        func take(_ feedback: RTPStreamSender.Feedback) {
            guard feedback.keyframeRequested else { return }
            if options.answersKeyframeRequests {
                keyframeAsked = true
            } else {
                result.keyframeRequestsIgnored += 1
            }
        }
        var sequence = 0
        var receiverJoined = false
        var receiverStarted = false
        let start = now()
        let dropEvery = options.dropEvery

        func ship(_ encoded: consuming [CompressedSample]) throws(MediaError) {
            var samples = encoded
            while !samples.isEmpty {
                // Taken out of the array, so that its bytes are the sample's
                // alone and the TCP gather list rewrites them in place.
                let sample = samples.removeFirst()
                let isKeyframe = sample.isKeyframe
                try onEncoded?(sample)
                let frameIndex = Int((sample.pts.converted(toTimescale: Int32(options.frameRate))).value)
                var byteCount = 0
                if rtp != nil {
                    // RTP: a receiver joins where the stream is, keyframe or not.
                    receiverStarted = receiverJoined
                } else {
                    if receiverJoined && !receiverStarted && isKeyframe {
                        // The receiver's stream starts here, with the parameter sets
                        // the writer puts before this keyframe.
                        receiverStarted = true
                        // (the connection was accepted at the join)
                    }
                }
                let dropped = dropEvery.map { sequence > 0 && sequence % $0 == 0 } ?? false
                var unit = RoundTripTrial.AccessUnit(
                    sequence: sequence, frameIndex: frameIndex, pts: sample.pts, dts: sample.dts,
                    isKeyframe: isKeyframe,
                    width: sample.formatDescription.width, height: sample.formatDescription.height,
                    byteCount: 0, sentToReceiver: receiverStarted, droppedBySender: dropped)
                // TCP: the Annex-B access unit as a gather list over the
                // sample's own bytes (start codes written over its lengths).
                // RTP: the sample as it is, for the sender's packetizer.
                var accessUnit: AnnexBGatherList? = nil
                var rtpSample: CompressedSample? = nil
                if rtp == nil {
                    let gathered = try writer.gather(consume sample)
                    byteCount = gathered.byteCount
                    accessUnit = gathered
                } else {
                    byteCount = sample.data.count
                    rtpSample = consume sample
                }
                // RTP: replaced by the payload bytes sent once it is sent.
                unit.byteCount = byteCount
                result.bytesProduced += byteCount
                sequence += 1
                // RTP: a dropped access unit is sent and lost on the way (NACK
                // may repair it); TCP: the sender leaves it out.
                let onWire = receiverStarted && (!dropped || rtp != nil)
                let key = MediaTime(value: Int64(frameIndex), timescale: 1)
                let outAt = now()
                exchange.state.withLock { state in
                    state.ledger.record(.encodeOut, unit: key, at: outAt)
                    state.produced.append(unit)
                    if onWire {
                        state.wire.append(unit)
                    } else {
                        state.sources[frameIndex] = nil
                    }
                }
                guard onWire else { continue }
                // "Sent": handed to the network, before the first byte goes,
                // so no receiver can see it earlier.
                let sentAt = now()
                exchange.state.withLock { $0.ledger.record(.sent, unit: key, at: sentAt) }
                switch output {
                case .tcp:
                    guard let connection = receiver else { break }
                    do {
                        try accessUnit!.withBuffers { buffers in
                            try GatheredWrite.writeAll(buffers, to: connection.descriptor, peer: connection.peer)
                        }
                    } catch {
                        throw MediaError(.system, "the receiver went away at access unit \(unit.sequence)")
                    }
                case .rtp:
                    let stream = rtp!
                    let (before, bytesBefore) = (stream.firstTransmissionsDropped, stream.statistics.bytesSent)
                    take(try stream.send(rtpSample!, losingOnTheWay: dropped))
                    let lost = stream.firstTransmissionsDropped > before
                    let bytes = stream.statistics.bytesSent - bytesBefore
                    exchange.state.withLock { state in
                        if let index = state.wire.lastIndex(where: { $0.sequence == unit.sequence }) {
                            state.wire[index].lostOnTheWay = lost
                            state.wire[index].byteCount = bytes
                        }
                        if let index = state.produced.lastIndex(where: { $0.sequence == unit.sequence }) {
                            state.produced[index].lostOnTheWay = lost
                            state.produced[index].byteCount = bytes
                        }
                    }
                }
            }
        }

        /// Sends the frames `encoder` held back and ends it.
        func finishEncoder() throws(MediaError) {
            let before = now()
            let delayed = try encoder.finish()
            result.encodeSeconds += now() - before
            try ship(delayed)
            result.encoderDroppedFrames = encoder.droppedFrames.count
            encoder.invalidate()
        }

        for index in 0..<options.frames {
            if index == options.lateJoin {
                exchange.state.withLock { $0.receiverMayConnect = true }
                if case .tcp(let listener) = output {
                    guard let connection = try listener.accept(timeoutMilliseconds: 10_000) else {
                        throw MediaError(.system, "the receiver did not connect within 10 s")
                    }
                    receiver = connection
                }
                receiverJoined = true
            }
            if options.resolutionChange && index == options.changeFrame {
                // A new session at the new size: its first frame is a keyframe
                // with new parameter sets, which the receiver turns into a new
                // FormatDescription.
                try finishEncoder()
                encoder = try makeEncoder(width: second.width, height: second.height)
                note(encoder, in: &result)
            }
            let due = start + Double(index) / Double(options.frameRate)
            if let rtp {
                // Feedback is read (and NACKs answered) while waiting.
                take(try rtp.poll(for: 0))
                while options.pacing, !keyframeAsked, now() < due, !options.stopRequested() {
                    take(try rtp.poll(for: due - now()))
                }
                if options.pacing { sleep(until: due) }
                if keyframeAsked {
                    keyframeAsked = false
                    encoder.requestKeyFrame()
                    result.keyframesForced.append(index)
                    if result.keyframesForced.count > 64 { result.keyframesForced.removeFirst() }
                }
            } else if options.pacing {
                sleep(until: due)
            }
            let small = options.resolutionChange && index >= options.changeFrame
            let frame = small ? smallClip.frame(at: index) : clip.frame(at: index)
            let pts = frameDuration * Int64(index)
            let submitted = now()
            exchange.state.withLock { state in
                state.ledger.record(.encodeIn, unit: MediaTime(value: Int64(index), timescale: 1), at: submitted)
                state.submitted[index] = submitted
                state.sources[index] = frame
                state.framesSubmitted = index + 1
            }
            let samples = try encoder.encode(frame, pts: pts, duration: frameDuration)
            result.encodeSeconds += now() - submitted
            result.framesEncoded += 1
            try ship(samples)
        }
        try finishEncoder()
        // The BYE after the receiver's jitter buffer had time to ask for the
        // last packets again (NACKs are answered meanwhile).
        try rtp?.finish(lingering: Double(options.jitterMilliseconds) / 1000 + 0.1)
    }

    /// Notes `encoder`'s backend and size, and why hardware was not used if it was not.
    private func note(_ encoder: CompressionSession, in result: inout RoundTripTrial.SenderFigures) {
        let description = encoder.formatDescription
        result.encoderBackends.append("\(encoder.backend) \(description.width)x\(description.height)")
        result.encoderFallbackReasons.append(encoder.fallbackReason)
    }

    private func now() -> Double { LivePipeline.monotonicSeconds() }

    /// Sleeps until monotonic time `deadline` (seconds), in slices of at most
    /// 50 ms so that ``RoundTripTrial/Configuration/stopRequested`` ends the wait.
    private func sleep(until deadline: Double) {
        while !options.stopRequested() {
            let remaining = min(deadline - now(), 0.05)
            guard remaining > 0 else { return }
            var request = timespec(tv_sec: 0, tv_nsec: Int(remaining * 1e9))
            var left = timespec()
            while nanosleep(&request, &left) != 0 && errno == EINTR { request = left }
        }
    }
}
