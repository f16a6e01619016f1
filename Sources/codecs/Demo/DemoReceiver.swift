import DecodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// What the receiver thread found.
struct DemoReceiverResult: Sendable {
    var accessUnitsReceived = 0
    var bytesReceived = 0
    var reads = 0
    var smallestRead = Int.max
    var decodedFrameIndexes: [Int] = []
    var skippedAfterLoss: [Int] = []
    var assemblerDrops: [String] = []
    var latencies: [Double] = []
    var psnrY: [Double] = []
    var decodeSeconds = 0.0
    var decoderBackend = "none"
    var decoderReason: String? = nil
    var formats: [String] = []
    var decoderDrops: [String] = []
    var ptsOutOfOrder = 0
    /// RTP: the stream's figures (`inbound-rtp`, with the decoder's counts).
    var inbound: RTPInboundStreamStatistics? = nil
}

/// The receiving side: connects, reads in chunks of varying size and feeds
/// them to the ``StreamDecoder``, which reassembles and decodes; a
/// ``DemoFrameCheck`` compares what comes out with the sources.
struct DemoReceiver {
    let options: DemoOptions
    let exchange: DemoExchange
    let port: Int

    func run() -> DemoReceiverResult {
        // One decoding thread: frame threads hold back a frame per extra
        // thread, which a live receiver pays in latency, and one thread
        // decodes 720p far faster than 30 fps.
        var pipeline = StreamDecoder(
            codec: options.codec, frameDuration: MediaTime(value: 1, timescale: Int32(options.frameRate)),
            settings: StreamDecoderSettings(
                decoder: .automatic, output: DecoderOutputAttributes(pixelFormat: .i420), threadCount: 1),
            sink: DemoFrameCheck(exchange: exchange, losing: Self.injectedLoss()))
        do {
            try receive(through: &pipeline)
        } catch {
            exchange.state.withLock { $0.failure = $0.failure ?? "receiver: \(error)" }
        }
        var result = pipeline.sink.result
        result.decodeSeconds = pipeline.decodeSeconds
        if let session = pipeline.session {
            result.decoderBackend = session.backend
            result.decoderReason = session.fallbackReason
            result.decoderDrops += session.drops.map { "\($0)" }
        }
        return result
    }

    /// The frame a test asks the receiver to lose after decoding it
    /// (`CODECS_DEMO_FAULT=lose-decoded-frame:N`), standing for a loss no
    /// sender drop explains; the report must then fail.
    static func injectedLoss() -> Int? {
        guard let value = getenv("CODECS_DEMO_FAULT").map({ String(cString: $0) }),
            value.hasPrefix("lose-decoded-frame:")
        else { return nil }
        return Int(value.dropFirst("lose-decoded-frame:".count))
    }

    /// A deterministic sequence of read sizes: mostly large reads, some of a
    /// few hundred bytes, some of 1 to 16 bytes, so access units and NAL units
    /// arrive split at every kind of boundary.
    private struct ReadSizes {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        mutating func next() -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            switch state % 10 {
            case 0: return Int(1 + (state >> 8) % 16)
            case 1, 2, 3: return Int(17 + (state >> 8) % 1500)
            default: return Int(1501 + (state >> 8) % (65536 - 1500))
            }
        }
    }

    private func receive(through pipeline: inout StreamDecoder<DemoFrameCheck>) throws(MediaError) {
        while !exchange.state.withLock({ $0.receiverMayConnect }) { usleep(1000) }
        if exchange.state.withLock({ $0.failure != nil }) { return }
        let connection = try TCPConnection.connect(
            host: "127.0.0.1", port: port, attempts: 20, stopRequested: { StopSignal.requested != nil })
        defer { connection.close() }
        var sizes = ReadSizes()
        // The side channel also says where each access unit ends on the wire
        // (as one message per unit, or an RTP marker bit, would), so the
        // pipeline hands each unit out as soon as its last byte arrives
        // instead of when the next unit begins.
        var bytesAppended = 0
        var unitsEnded = 0
        var nextBoundary = 0
        while true {
            let chunk = try connection.read(upTo: sizes.next())
            if chunk.isEmpty { break }
            pipeline.sink.result.reads += 1
            pipeline.sink.result.bytesReceived += chunk.count
            pipeline.sink.result.smallestRead = min(pipeline.sink.result.smallestRead, chunk.count)
            var rest = chunk[...]
            while !rest.isEmpty {
                if nextBoundary <= bytesAppended {
                    guard let unit = exchange.state.withLock({ $0.wire.count > unitsEnded ? $0.wire[unitsEnded] : nil })
                    else { break }
                    nextBoundary += unit.byteCount
                }
                let take = min(rest.count, nextBoundary - bytesAppended)
                try pipeline.append(rest.prefix(take))
                bytesAppended += take
                rest = rest.dropFirst(take)
                if bytesAppended == nextBoundary {
                    try pipeline.endAccessUnit()
                    unitsEnded += 1
                }
            }
            if !rest.isEmpty {
                // Bytes beyond every unit the side channel announced: let the
                // assembler find the boundaries itself.
                try pipeline.append(rest)
                bytesAppended += rest.count
            }
        }
        try pipeline.finish()
    }
}

/// What the demo's receiver does with each access unit and frame: gives
/// the unit the timestamps the side channel carries, skips to the next
/// keyframe after a gap in the sender's sequence, and compares each decoded
/// frame with its source (PSNR, matched by pts) and its submit time.
struct DemoFrameCheck: DecodedFrameSink {
    let exchange: DemoExchange
    /// RTP: the access unit comes with its own timestamp (from the packets);
    /// the sender's log is only looked up to measure. TCP: Annex-B has none,
    /// so the k-th access unit takes the k-th entry of the sender's log.
    var timestampsFromPackets = false
    /// Frames per second, to turn a timestamp into a frame index.
    var frameRate = 30
    var result = DemoReceiverResult()
    private var lastSequence: Int? = nil
    private var waitingForKeyframe = false
    private var unitsByPTS: [MediaTime: DemoAccessUnit] = [:]
    private var lastDecodedPTS: MediaTime? = nil
    /// A frame to discard after decoding (a test's injected loss).
    private let losing: Int?

    init(exchange: DemoExchange, losing: Int? = nil) {
        self.exchange = exchange
        self.losing = losing
    }

    mutating func assemblerDropped(_ nalUnitCount: Int, reason: String) {
        result.assemblerDrops.append("\(nalUnitCount) NAL units: \(reason)")
    }

    mutating func willDecode(_ sample: inout CompressedSample) throws(MediaError) -> Bool {
        if timestampsFromPackets {
            let frameIndex = Int(sample.pts.converted(toTimescale: Int32(frameRate)).value)
            guard let unit = exchange.state.withLock({ state in state.produced.last { $0.frameIndex == frameIndex } })
            else {
                throw MediaError(.invalidData, "an access unit with pts \(sample.pts) that was never sent")
            }
            sample.dts = unit.dts
            unitsByPTS[sample.pts] = unit
            return true
        }
        defer {
            let assembledAt = monotonicSeconds()
            if let unit = unitsByPTS[sample.pts] {
                exchange.state.withLock {
                    $0.ledger.record(
                        .assembled, unit: MediaTime(value: Int64(unit.frameIndex), timescale: 1), at: assembledAt)
                }
            }
        }
        let index = result.accessUnitsReceived
        result.accessUnitsReceived += 1
        guard let unit = exchange.state.withLock({ $0.wire.count > index ? $0.wire[index] : nil }) else {
            throw MediaError(.invalidData, "access unit \(index) arrived but was never sent")
        }
        // A gap in the sender's sequence means access units were left out:
        // later pictures may refer to them, so skip to the next keyframe.
        if let last = lastSequence, unit.sequence != last + 1 { waitingForKeyframe = true }
        lastSequence = unit.sequence
        if waitingForKeyframe && !sample.isKeyframe {
            result.skippedAfterLoss.append(unit.frameIndex)
            exchange.state.withLock { _ = $0.sources.removeValue(forKey: unit.frameIndex) }
            return false
        }
        waitingForKeyframe = false
        sample.pts = unit.pts
        sample.dts = unit.dts
        unitsByPTS[unit.pts] = unit
        return true
    }

    mutating func formatChanged(to description: FormatDescription, scaledTo: PictureSize?) {
        result.formats.append("\(description.width)x\(description.height) \(description.codec.displayName)")
    }

    mutating func receive(_ frames: [DecodedFrame]) throws(MediaError) {
        let now = monotonicSeconds()
        for frame in frames {
            guard let unit = unitsByPTS.removeValue(forKey: frame.pts) else {
                result.decoderDrops.append("a frame with pts \(frame.pts) that was never sent")
                continue
            }
            if unit.frameIndex == losing { continue }
            if let last = lastDecodedPTS, frame.pts <= last { result.ptsOutOfOrder += 1 }
            lastDecodedPTS = frame.pts
            let (submitted, source) = exchange.state.withLock { state in
                (state.submitted[unit.frameIndex], state.sources.removeValue(forKey: unit.frameIndex))
            }
            if let submitted { result.latencies.append(now - submitted) }
            exchange.state.withLock {
                $0.ledger.record(.decoded, unit: MediaTime(value: Int64(unit.frameIndex), timescale: 1), at: now)
            }
            result.decodedFrameIndexes.append(unit.frameIndex)
            if let source {
                result.psnrY.append(PictureQuality.psnr(frame.pixelBuffer, source).y)
            }
        }
    }
}

/// The RTP receiving side: an ``RTPStreamReceiver`` (source validation,
/// jitter buffer, NACKs for missing packets, picture loss indications after
/// an unrepaired loss or a start without a keyframe, receiver reports) →
/// ``StreamDecoder``. Nothing but the packets reaches the decoding path;
/// the sender's log is read only to measure (PSNR against the source,
/// latency from submission).
struct DemoRTPReceiver {
    let options: DemoOptions
    let exchange: DemoExchange

    func run() -> DemoReceiverResult {
        var check = DemoFrameCheck(exchange: exchange, losing: DemoReceiver.injectedLoss())
        check.timestampsFromPackets = true
        check.frameRate = options.frameRate
        var pipeline = StreamDecoder(
            codec: options.codec,
            settings: StreamDecoderSettings(
                decoder: .automatic, output: DecoderOutputAttributes(pixelFormat: .i420), threadCount: 1),
            sink: check)
        var inbound: RTPInboundStreamStatistics? = nil
        do {
            var configuration = RTPReceiverSession<UDPSocket.Address>.Configuration(
                codec: options.codec,
                jitterBufferDelay: MediaTime(value: Int64(options.jitterMilliseconds), timescale: 1000),
                nack: options.nack ? .init() : nil)
            configuration.cname = "codecs-demo"
            let receiver: RTPStreamReceiver
            do {
                receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: configuration)
            } catch {
                exchange.state.withLock { $0.receiverPort = 0 }
                throw error
            }
            exchange.state.withLock { $0.receiverPort = receiver.port }
            defer { inbound = receiver.statistics }
            try receive(from: receiver, through: &pipeline)
        } catch {
            exchange.state.withLock { $0.failure = $0.failure ?? "receiver: \(error)" }
        }
        var result = pipeline.sink.result
        if let inbound {
            result.inbound = inbound
            result.accessUnitsReceived = inbound.framesReceived + inbound.accessUnitsDropped
            result.reads = inbound.packetsReceived
            result.bytesReceived = inbound.bytesReceived
            // Drops a loss or a start between keyframes explains are counted
            // as such; any other is a failure.
            let explained: Set<RTPDropReason> = [
                .packetLoss, .incompleteFragment, .waitingForKeyframe, .missingParameterSets,
            ]
            result.assemblerDrops += inbound.drops.recent.filter { !explained.contains($0.reason) }.map { "\($0)" }
        }
        result.decodeSeconds = pipeline.decodeSeconds
        if let session = pipeline.session {
            result.decoderBackend = session.backend
            result.decoderReason = session.fallbackReason
            result.decoderDrops += session.drops.map { "\($0)" }
            result.inbound?.framesDecoded = session.statistics.decoded
            result.inbound?.framesDropped = session.statistics.dropped
        }
        return result
    }

    private func receive(
        from receiver: RTPStreamReceiver, through pipeline: inout StreamDecoder<DemoFrameCheck>
    ) throws(MediaError) {
        let exchange = self.exchange
        let frameRate = Int64(options.frameRate)
        // Measurement: when each frame's last packet (the marker) arrived;
        // the demo's RTP clock is 0 at frame 0.
        receiver.packetArrived = { datagram in
            guard let (header, _) = try? RTPHeader.parse(datagram), header.marker else { return }
            let frame = Int64(header.timestamp) * frameRate / 90_000
            let receivedAt = monotonicSeconds()
            exchange.state.withLock {
                $0.ledger.record(.received, unit: MediaTime(value: frame, timescale: 1), at: receivedAt)
            }
        }
        func deliver(_ events: [RTPStreamReceiver.Event]) throws(MediaError) {
            for event in events {
                switch event {
                case .sample(var sample):
                    // pts counts from the first packet's timestamp; the
                    // sender's RTP clock is 0 at frame 0.
                    sample.pts = sample.pts + MediaTime(value: Int64(receiver.timestampOrigin ?? 0), timescale: 90_000)
                    let frame = Int64(sample.pts.converted(toTimescale: Int32(frameRate)).value)
                    let assembledAt = monotonicSeconds()
                    exchange.state.withLock {
                        $0.ledger.record(.assembled, unit: MediaTime(value: frame, timescale: 1), at: assembledAt)
                    }
                    try pipeline.decode(sample)
                case .loss(let loss):
                    try pipeline.reportLoss(loss.description)
                }
            }
        }
        // Until the sender's BYE (after its last packets had the jitter
        // buffer's delay to be repaired); a sender that failed says no BYE.
        while !receiver.isEnded {
            try deliver(receiver.receive(waiting: 0.02))
            let (finished, failed) = exchange.state.withLock { ($0.senderFinished, $0.failure != nil) }
            if failed || (finished && receiver.secondsSinceLastPacket > 2) { break }
        }
        try deliver(receiver.finish())
        try pipeline.finish()
    }
}
