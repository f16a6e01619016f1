import EncodeSession
import FormatConv
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload
import WebStreaming

/// What the sender thread found.
struct DemoSenderResult: Sendable {
    var encodeSeconds = 0.0
    var framesEncoded = 0
    var bytesProduced = 0
    var encoderBackends: [String] = []
    var encoderDroppedFrames = 0
    /// RTP: the stream's figures (`outbound-rtp`, `remote-inbound-rtp`).
    var outbound: RTPOutboundStreamStatistics? = nil
    var remoteInbound: RTPRemoteInboundStreamStatistics? = nil
    /// RTP: packets dropped on purpose (`--drop-every`, `--loss`), first
    /// transmissions and retransmissions.
    var packetsDroppedOnPurpose = 0
    /// RTP: frames made keyframes because the receiver asked (the last 64).
    var keyframesForced: [Int] = []
    /// RTP: keyframe requests left unanswered (`--no-pli`).
    var keyframeRequestsIgnored = 0
}

/// Where the demo's sender puts the stream.
enum DemoOutput {
    /// Annex-B to the TCP clients of a broadcaster.
    case tcp(StreamBroadcaster)
    /// RTP to the receiver's port on 127.0.0.1 through an ``RTPStreamSender``
    /// (the RTP timestamp of frame 0 is 0): sender reports, NACKs answered,
    /// picture loss indications turned into keyframes.
    case rtp(port: Int)
}

/// The sending side: makes frames, encodes them, and sends them as Annex-B
/// over TCP or as RTP over UDP (``RTPStreamSender``, RTCP included).
struct DemoSender {
    let options: DemoOptions
    let exchange: DemoExchange
    let output: DemoOutput
    /// Browsers watching the run (`--http`): every access unit encoded goes
    /// to them too.
    var web: WebStreamServer? = nil

    func run() -> DemoSenderResult {
        var result = DemoSenderResult()
        do {
            try send(&result)
        } catch {
            exchange.state.withLock { $0.failure = $0.failure ?? "sender: \(error)" }
        }
        if case .tcp(let broadcaster) = output { broadcaster.closeAll() }
        // A receiver still waiting to connect must not wait forever.
        exchange.state.withLock {
            $0.receiverMayConnect = true
            $0.senderFinished = true
        }
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
        var saved: (writer: AnnexBWriter, file: FileByteSink, bytes: [UInt8])? = nil
        if let path = options.streamPath {
            saved = (AnnexBWriter(policy: .beforeEveryKeyframe), try FileByteSink(path: path), [])
        }
        defer { try? saved?.file.close() }
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
        let start = monotonicSeconds()
        let dropEvery = options.dropEvery

        func ship(_ encoded: consuming [CompressedSample]) throws(MediaError) {
            var samples = encoded
            while !samples.isEmpty {
                // Taken out of the array, so that its bytes are the sample's
                // alone and the TCP gather list rewrites them in place.
                let sample = samples.removeFirst()
                let isKeyframe = sample.isKeyframe
                if let web {
                    try? web.poll(timeoutMilliseconds: 0)
                    web.send(sample)
                }
                if var copy = saved {
                    saved = nil
                    copy.bytes.removeAll(keepingCapacity: true)
                    try copy.writer.write(sample, into: &copy.bytes)
                    try copy.file.write(copy.bytes)
                    saved = copy
                }
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
                        if case .tcp(let broadcaster) = output { broadcaster.startWaitingClients() }
                    }
                }
                let dropped = dropEvery.map { sequence > 0 && sequence % $0 == 0 } ?? false
                var unit = DemoAccessUnit(
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
                let outAt = monotonicSeconds()
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
                let sentAt = monotonicSeconds()
                exchange.state.withLock { $0.ledger.record(.sent, unit: key, at: sentAt) }
                switch output {
                case .tcp(let broadcaster):
                    let receivers = broadcaster.send(accessUnit!, isKeyframe: isKeyframe)
                    if receivers == 0 {
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
                if case .tcp(let broadcaster) = output {
                    try broadcaster.acceptPending(timeoutMilliseconds: 10_000)
                    guard broadcaster.clientCount > 0 else {
                        throw MediaError(.system, "the receiver did not connect within 10 s")
                    }
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
            let due = start + Double(index) / Double(options.frameRate)
            if let rtp {
                // Feedback is read (and NACKs answered) while waiting.
                take(try rtp.poll(for: 0))
                while options.pace, !keyframeAsked, monotonicSeconds() < due {
                    take(try rtp.poll(for: due - monotonicSeconds()))
                }
                if options.pace { sleep(until: due) }
                if keyframeAsked {
                    keyframeAsked = false
                    encoder.requestKeyFrame()
                    result.keyframesForced.append(index)
                    if result.keyframesForced.count > 64 { result.keyframesForced.removeFirst() }
                }
            } else if options.pace {
                sleep(until: due)
            }
            let small = options.resolutionChange && index >= options.changeFrame
            let frame = small ? smallClip.frame(at: index) : clip.frame(at: index)
            let pts = frameDuration * Int64(index)
            let submitted = monotonicSeconds()
            exchange.state.withLock { state in
                state.ledger.record(.encodeIn, unit: MediaTime(value: Int64(index), timescale: 1), at: submitted)
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
        // The BYE after the receiver's jitter buffer had time to ask for the
        // last packets again (NACKs are answered meanwhile).
        try rtp?.finish(lingering: Double(options.jitterMilliseconds) / 1000 + 0.1)
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
