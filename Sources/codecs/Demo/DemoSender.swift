import EncodeSession
import FormatConv
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
}

/// Where the demo's sender puts the stream.
enum DemoOutput {
    /// Annex-B to the TCP clients of a broadcaster.
    case tcp(StreamBroadcaster)
    /// RTP packets to a UDP address (the RTP timestamp of frame 0 is 0).
    case rtp(UDPSocket.Address)
}

/// The sending side: makes frames, encodes them, and sends them as Annex-B
/// over TCP or as RTP packets over UDP.
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
        var rtp: (socket: UDPSocket, destination: UDPSocket.Address)?
        if case .rtp(let destination) = output { rtp = (try UDPSocket(bindingTo: "127.0.0.1"), destination) }
        var packetizer = RTPPacketizer(
            configuration: .init(codec: options.codec, ssrc: 0x0DE0_0001, timestampOffset: 0))
        var batch = RTPPacketBatch()
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
                var byteCount: Int
                if rtp != nil {
                    // RTP: a receiver joins where the stream is, keyframe or not.
                    receiverStarted = receiverJoined
                    batch.removeAll()
                    try packetizer.packetize(sample, into: &batch)
                    byteCount = batch.reduce(0) { $0 + $1.count }
                } else {
                    byteCount = 0
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
                let accessUnit = rtp == nil ? try writer.gather(consume sample) : nil
                if let accessUnit { byteCount = accessUnit.byteCount }
                unit.byteCount = byteCount
                sequence += 1
                result.bytesProduced += byteCount
                let onWire = receiverStarted && !dropped
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
                case .rtp(let destination):
                    // Each packet straight from the batch's storage, no copy.
                    for packet in batch { try rtp!.socket.send(packet, to: destination) }
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
            if options.pace { sleep(until: start + Double(index) / Double(options.frameRate)) }
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
