import DecodeSession
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

private let demoHelp = """
    usage: codecs demo [options]

    Encodes a synthetic clip, sends it as Annex-B over a TCP connection on the
    loopback, receives it in chunks of varying size, reassembles access units,
    decodes them and compares every frame with its source (PSNR, matched by pts).

    options:
      --frames N                 frames in the clip (default 300)
      --size WxH                 picture size (default 1280x720)
      --codec h264|hevc          the codec (default h264)
      --encoder auto|software|vaapi
                                 hardware when it works, else software (default auto)
      --late-join N              the receiver connects after N frames and starts at the next keyframe
      --drop-every N             the sender leaves out every Nth access unit; the receiver
                                 skips to the next keyframe (expected, reported, not a failure)
      --resolution-change        the sender switches to half the size halfway through
      --no-pace                  send as fast as the encoder runs instead of at 30 fps
      --min-psnr DB              the least average luma PSNR that passes (default 35)

    The exit status is 0 when every frame sent came back and the PSNR passes,
    1 otherwise, 2 for bad options. With CODECS_CHECK_LIVE_OBJECTS=1 in the
    environment it also lists the C objects still alive at the end and exits 1
    when there are any.
    """

/// `codecs demo`: encode → Annex-B → TCP on the loopback → reassemble →
/// decode → compare, with a report.
func runDemo(_ arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(demoHelp)
        return 0
    }
    let options: DemoOptions
    do {
        options = try DemoOptions(arguments)
    } catch {
        printError("codecs demo: \(error)")
        return 2
    }
    do {
        let result = try DemoRun(options: options).run()
        print(result.report)
        // CODECS_CHECK_LIVE_OBJECTS=1 (scripts/leakcheck, scripts/soak): every
        // C context and buffer the run created must have been released by now.
        if getenv("CODECS_CHECK_LIVE_OBJECTS").map({ String(cString: $0) }) == "1" {
            let alive = LiveObjects.snapshot().map { "\($0.key.rawValue) \($0.value)" }.sorted()
            print("live objects at exit: " + (alive.isEmpty ? "none" : alive.joined(separator: ", ")))
            if !alive.isEmpty { return 1 }
        }
        return result.passed ? 0 : 1
    } catch {
        printError("codecs demo: \(error)")
        return 1
    }
}

/// The demo's settings, read from the command line.
struct DemoOptions: Sendable {
    var frames = 300
    var width = 1280
    var height = 720
    var frameRate = 30
    var codec: CodecType = .h264
    var encoder: EncoderChoice = .automatic
    var encoderName = "auto"
    var lateJoin = 0
    var dropEvery: Int? = nil
    var resolutionChange = false
    var pace = true
    /// Pass marks: the average luma PSNR over all decoded frames, and the
    /// least any single frame may have.
    var minimumAveragePSNR = 35.0
    var minimumFramePSNR = 30.0

    init(_ arguments: [String]) throws(Arguments.UsageError) {
        let parsed = try Arguments(
            arguments,
            valueOptions: ["frames", "size", "codec", "encoder", "late-join", "drop-every", "min-psnr"],
            flagOptions: ["resolution-change", "no-pace"])
        if let extra = parsed.positional.first {
            throw Arguments.UsageError(description: "unexpected argument '\(extra)'")
        }
        frames = try parsed.integer("frames", in: 1...100_000, default: frames)!
        if let size = parsed.value("size") {
            let parts = size.lowercased().split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (16...8192).contains(w),
                (16...8192).contains(h), w % 2 == 0, h % 2 == 0
            else {
                throw Arguments.UsageError(
                    description: "--size \(size): expected WxH with even sizes from 16 to 8192, e.g. 1280x720")
            }
            (width, height) = (w, h)
        }
        codec = try parsed.choice("codec", ["h264", "hevc"], default: "h264") == "hevc" ? .hevc : .h264
        encoderName = try parsed.choice("encoder", ["auto", "software", "vaapi"], default: "auto")
        encoder = encoderName == "software" ? .software : encoderName == "vaapi" ? .hardware() : .automatic
        lateJoin = try parsed.integer("late-join", in: 0...(frames - 1), default: 0)!
        dropEvery = try parsed.integer("drop-every", in: 2...100_000)
        resolutionChange = parsed.flag("resolution-change")
        pace = !parsed.flag("no-pace")
        if let text = parsed.value("min-psnr") {
            guard let value = Double(text), (0...100).contains(value) else {
                throw Arguments.UsageError(description: "--min-psnr \(text): expected decibels from 0 to 100")
            }
            minimumAveragePSNR = value
            minimumFramePSNR = min(minimumFramePSNR, value)
        }
    }

    /// The size after `--resolution-change`: half of each side, kept even.
    var secondSize: (width: Int, height: Int) {
        (max(16, width / 4 * 2), max(16, height / 4 * 2))
    }

    /// The first frame coded at ``secondSize`` (when `resolutionChange`).
    var changeFrame: Int { frames / 2 }
}

/// One access unit as the sender produced it, in decode order.
struct DemoAccessUnit: Sendable {
    /// Position in decode order over the whole stream (0-based).
    var sequence: Int
    var frameIndex: Int
    var pts: MediaTime
    var dts: MediaTime
    var isKeyframe: Bool
    var width: Int
    var height: Int
    var byteCount: Int
    /// Whether the receiver had joined (sent from its first keyframe on).
    var sentToReceiver: Bool
    /// Whether `--drop-every` left it out.
    var droppedBySender: Bool
}

/// State the sender and receiver threads share, behind one lock.
final class DemoExchange: Sendable {
    struct State {
        /// Every access unit the encoder produced, in decode order.
        var produced: [DemoAccessUnit] = []
        /// The access units put on the wire to the receiver, in order. Annex-B
        /// has no timestamps; this log carries them alongside the bytes, as an
        /// RTP header would, and the receiver pairs its k-th access unit with
        /// entry k.
        var wire: [DemoAccessUnit] = []
        /// Monotonic time each frame was handed to the encoder, by frame index.
        var submitted: [Int: Double] = [:]
        /// Source frames waiting to be compared, by frame index.
        var sources: [Int: PixelBuffer] = [:]
        var framesSubmitted = 0
        var receiverMayConnect = false
        var failure: String? = nil
    }

    let state = Mutex(State())
    /// The receiver thread's findings, once it has ended.
    let receiverResult = Mutex(DemoReceiverResult())
}

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
}

/// What the sender thread found.
struct DemoSenderResult: Sendable {
    var encodeSeconds = 0.0
    var framesEncoded = 0
    var bytesProduced = 0
    var encoderBackends: [String] = []
    var encoderDroppedFrames = 0
}

/// One run of the demo.
struct DemoRun {
    let options: DemoOptions

    struct Outcome {
        var report: String
        var passed: Bool
    }

    func run() throws(MediaError) -> Outcome {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        let port = listener.port
        let exchange = DemoExchange()
        let options = self.options

        let started = monotonicSeconds()
        let receiver = WorkerThread {
            let result = DemoReceiver(options: options, exchange: exchange, port: port).run()
            exchange.receiverResult.withLock { $0 = result }
        }
        let broadcaster = StreamBroadcaster(listener: listener)
        let sender = DemoSender(options: options, exchange: exchange, broadcaster: broadcaster).run()
        receiver.join()
        let wallSeconds = monotonicSeconds() - started
        listener.close()

        let received = exchange.receiverResult.withLock { $0 }
        let state = exchange.state.withLock { $0 }
        if let failure = state.failure {
            throw MediaError(.backendFailure, failure)
        }
        return summarize(sender: sender, receiver: received, state: state, port: port, wallSeconds: wallSeconds)
    }

    private func summarize(
        sender: DemoSenderResult, receiver: DemoReceiverResult, state: DemoExchange.State, port: Int,
        wallSeconds: Double
    ) -> Outcome {
        let produced = state.produced
        let wire = state.wire
        // Frames whose access unit went to the receiver, and the ones it could
        // not decode because an earlier access unit was left out: from each
        // left-out unit to the next keyframe, in decode order (a closed GOP
        // refers to nothing before its IDR/IRAP; H.264 8.2.1, H.265 8.3.2).
        var expectedLost: [Int] = []
        var lostSinceDrop = false
        var notSent = 0
        var droppedBySender = 0
        for unit in produced {
            guard unit.sentToReceiver else {
                notSent += 1
                continue
            }
            if unit.droppedBySender {
                droppedBySender += 1
                lostSinceDrop = true
                expectedLost.append(unit.frameIndex)
            } else if lostSinceDrop && !unit.isKeyframe {
                expectedLost.append(unit.frameIndex)
            } else {
                lostSinceDrop = false
            }
        }
        let framesForReceiver = produced.count - notSent
        let expectedDecoded = Set(wire.map(\.frameIndex)).subtracting(expectedLost)
        let decoded = Set(receiver.decodedFrameIndexes)
        let missing = expectedDecoded.subtracting(decoded).sorted()
        let unexpected = decoded.subtracting(expectedDecoded).sorted()
        let actualLost = Set(wire.map(\.frameIndex)).subtracting(decoded).union(
            produced.filter { $0.sentToReceiver && $0.droppedBySender }.map(\.frameIndex))

        let streamSeconds = Double(options.frames) / Double(options.frameRate)
        let averageY = receiver.psnrY.isEmpty ? 0 : receiver.psnrY.reduce(0, +) / Double(receiver.psnrY.count)
        let minimumY = receiver.psnrY.min() ?? 0

        var table = ReportTable()
        let second = options.secondSize
        var title = "codecs demo: \(options.codec.displayName) \(options.width)x\(options.height)"
        if options.resolutionChange { title += " → \(second.width)x\(second.height) at frame \(options.changeFrame)" }
        title += ", \(options.frames) frames at \(options.frameRate) fps"
        title += options.pace ? ", paced" : ", unpaced"
        title += ", over tcp://127.0.0.1:\(port)"
        table.add(title, "")
        table.section("frames")
        table.add("encoded", "\(produced.count)")
        if notSent > 0 {
            table.add("before the receiver joined", "\(notSent) (late join after \(options.lateJoin) frames)")
        }
        table.add("sent", "\(framesForReceiver - droppedBySender)")
        table.add("received", "\(receiver.accessUnitsReceived)")
        table.add("decoded", "\(decoded.count)")
        var dropLine = "\(actualLost.count)"
        if options.dropEvery != nil {
            dropLine +=
                " (expected \(expectedLost.count): \(droppedBySender) access units left out by the sender,"
                + " \(expectedLost.count - droppedBySender) skipped until the next keyframe)"
        }
        table.add("dropped", dropLine)
        table.add("lost", "\(missing.count)" + (missing.isEmpty ? "" : " (frames \(listed(missing)))"))
        if !unexpected.isEmpty { table.add("decoded but not expected", listed(unexpected)) }
        if receiver.ptsOutOfOrder > 0 { table.add("out of order", "\(receiver.ptsOutOfOrder)") }
        if !receiver.assemblerDrops.isEmpty {
            table.add("assembler dropped", receiver.assemblerDrops.joined(separator: "; "))
        }
        if !receiver.decoderDrops.isEmpty {
            table.add("decoder dropped", receiver.decoderDrops.joined(separator: "; "))
        }
        if sender.encoderDroppedFrames > 0 { table.add("encoder dropped", "\(sender.encoderDroppedFrames)") }

        table.section("rates")
        table.add("bit rate", formattedBitRate(Double(sender.bytesProduced * 8) / streamSeconds))
        table.add(
            "bytes on the wire",
            "\(receiver.bytesReceived) in \(receiver.reads) reads of 1…65536 bytes (smallest \(receiver.smallestRead == .max ? 0 : receiver.smallestRead))"
        )
        table.add("encode fps", formatted(Double(sender.framesEncoded) / max(sender.encodeSeconds, 1e-9)))
        table.add("decode fps", formatted(Double(decoded.count) / max(receiver.decodeSeconds, 1e-9)))
        table.add("wall time", formatted(wallSeconds, digits: 2) + " s")
        if let latency = LatencySummary(receiver.latencies) {
            table.add(
                "latency p50 / p95 / max",
                "\(formattedMilliseconds(latency.p50)) / \(formattedMilliseconds(latency.p95)) / \(formattedMilliseconds(latency.maximum))  (submit → decoded)"
            )
        }

        table.section("quality")
        let psnrPassed =
            !receiver.psnrY.isEmpty && averageY >= options.minimumAveragePSNR
            && minimumY >= options.minimumFramePSNR
        table.add(
            "PSNR Y average",
            formatted(averageY, digits: 2) + " dB  (pass: ≥ \(formatted(options.minimumAveragePSNR)) dB)")
        table.add(
            "PSNR Y minimum",
            formatted(minimumY, digits: 2) + " dB  (pass: ≥ \(formatted(options.minimumFramePSNR)) dB)")

        table.section("backends")
        table.add("encoder", sender.encoderBackends.joined(separator: "; "))
        table.add("decoder", receiver.decoderBackend + (receiver.decoderReason.map { " (\($0))" } ?? ""))
        table.add("formats received", receiver.formats.joined(separator: " → "))

        let countsPassed =
            missing.isEmpty && unexpected.isEmpty && receiver.ptsOutOfOrder == 0
            && receiver.accessUnitsReceived == wire.count && receiver.assemblerDrops.isEmpty
            && Set(expectedLost) == actualLost && sender.encoderDroppedFrames == 0
        let passed = countsPassed && psnrPassed
        var verdicts: [String] = []
        if !countsPassed { verdicts.append("frames were lost or out of order") }
        if !psnrPassed { verdicts.append("PSNR below the pass mark") }
        table.section(passed ? "result: PASS" : "result: FAIL — " + verdicts.joined(separator: ", "))
        return Outcome(report: table.rendered, passed: passed)
    }

    private func listed(_ indexes: [Int]) -> String {
        let shown = indexes.prefix(12).map(String.init).joined(separator: ", ")
        return indexes.count > 12 ? shown + ", … (\(indexes.count))" : shown
    }
}

/// The sending side: makes frames, encodes them, writes Annex-B and sends it.
private struct DemoSender {
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

    private func makeEncoder(width: Int, height: Int) throws(MediaError) -> CompressionSession {
        var properties = CompressionProperties()
        // Live settings: no look-ahead or B-frames, a keyframe every second so
        // a late joiner or a receiver that lost data waits at most one second.
        properties.realTime = true
        properties.allowFrameReordering = false
        properties.preset = "veryfast"
        properties.maxKeyFrameInterval = options.frameRate
        properties.expectedFrameRate = Double(options.frameRate)
        return try CompressionSession(
            width: width, height: height, codec: options.codec, encoder: options.encoder, properties: properties)
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
                let before = monotonicSeconds()
                let delayed = try encoder.finish()
                result.encodeSeconds += monotonicSeconds() - before
                try ship(delayed)
                encoder.invalidate()
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
        let before = monotonicSeconds()
        let delayed = try encoder.finish()
        result.encodeSeconds += monotonicSeconds() - before
        try ship(delayed)
        result.encoderDroppedFrames = encoder.droppedFrames.count
        encoder.invalidate()
    }

    private func describe(_ encoder: CompressionSession) -> String {
        let description = encoder.formatDescription
        var text = "\(encoder.backend) \(description.width)x\(description.height)"
        if let reason = encoder.fallbackReason {
            text += " (hardware not used: \(reason))"
        } else if options.encoderName == "software" {
            text += " (--encoder software)"
        } else if options.encoderName == "vaapi" {
            text += " (--encoder vaapi)"
        } else {
            text += " (automatic)"
        }
        return text
    }
}

/// The receiving side: connects, reads in chunks of varying size, reassembles,
/// decodes and compares.
private struct DemoReceiver {
    let options: DemoOptions
    let exchange: DemoExchange
    let port: Int

    func run() -> DemoReceiverResult {
        var result = DemoReceiverResult()
        do {
            try receive(&result)
        } catch {
            exchange.state.withLock { $0.failure = $0.failure ?? "receiver: \(error)" }
        }
        return result
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

    private func receive(_ result: inout DemoReceiverResult) throws(MediaError) {
        while !exchange.state.withLock({ $0.receiverMayConnect }) { usleep(1000) }
        if exchange.state.withLock({ $0.failure != nil }) { return }
        let connection = try TCPConnection.connect(host: "127.0.0.1", port: port, attempts: 20)
        var assembler = AccessUnitAssembler(
            codec: options.codec, frameDuration: MediaTime(value: 1, timescale: Int32(options.frameRate)))
        var decoder: DecompressionSession? = nil
        var lastFormat: FormatDescription? = nil
        var sizes = ReadSizes()
        var lastSequence: Int? = nil
        var waitingForKeyframe = false
        // The side channel also says where each access unit ends on the wire
        // (as one message per unit, or an RTP marker bit, would), so the
        // assembler hands each unit out as soon as its last byte arrives
        // instead of when the next unit begins.
        var bytesAppended = 0
        var unitsEnded = 0
        var nextBoundary = 0
        var unitsByPTS: [MediaTime: DemoAccessUnit] = [:]
        var lastDecodedPTS: MediaTime? = nil

        func handle(_ frames: [DecodedFrame]) {
            let now = monotonicSeconds()
            for frame in frames {
                guard let unit = unitsByPTS.removeValue(forKey: frame.pts) else {
                    result.decoderDrops.append("a frame with pts \(frame.pts) that was never sent")
                    continue
                }
                if let last = lastDecodedPTS, frame.pts <= last { result.ptsOutOfOrder += 1 }
                lastDecodedPTS = frame.pts
                let (submitted, source) = exchange.state.withLock { state in
                    (state.submitted[unit.frameIndex], state.sources.removeValue(forKey: unit.frameIndex))
                }
                if let submitted { result.latencies.append(now - submitted) }
                result.decodedFrameIndexes.append(unit.frameIndex)
                if let source {
                    result.psnrY.append(PictureQuality.psnr(frame.pixelBuffer, source).y)
                }
            }
        }

        func consume(_ outputs: [AssemblerOutput]) throws(MediaError) {
            for output in outputs {
                switch output {
                case .dropped(let reason, let count):
                    result.assemblerDrops.append("\(count) NAL units: \(reason)")
                case .sample(var sample):
                    let index = result.accessUnitsReceived
                    result.accessUnitsReceived += 1
                    guard let unit = exchange.state.withLock({ $0.wire.count > index ? $0.wire[index] : nil }) else {
                        throw MediaError(.invalidData, "access unit \(index) arrived but was never sent")
                    }
                    // A gap in the sender's sequence means access units were
                    // left out: later pictures may refer to them, so skip to the
                    // next keyframe.
                    if let last = lastSequence, unit.sequence != last + 1 { waitingForKeyframe = true }
                    lastSequence = unit.sequence
                    if waitingForKeyframe && !sample.isKeyframe {
                        result.skippedAfterLoss.append(unit.frameIndex)
                        exchange.state.withLock { _ = $0.sources.removeValue(forKey: unit.frameIndex) }
                        continue
                    }
                    waitingForKeyframe = false
                    sample.pts = unit.pts
                    sample.dts = unit.dts
                    unitsByPTS[unit.pts] = unit
                    if lastFormat != sample.formatDescription {
                        let description = sample.formatDescription
                        result.formats.append(
                            "\(description.width)x\(description.height) \(description.codec.displayName)")
                        lastFormat = description
                    }
                    if decoder == nil {
                        // One decoding thread: frame threads hold back a frame
                        // per extra thread, which a live receiver pays in latency,
                        // and one thread decodes 720p far faster than 30 fps.
                        decoder = try DecompressionSession(
                            formatDescription: sample.formatDescription, decoder: .automatic,
                            output: DecoderOutputAttributes(pixelFormat: .i420), threadCount: 1)
                        result.decoderBackend = decoder!.backend
                        result.decoderReason = decoder!.fallbackReason
                    }
                    let before = monotonicSeconds()
                    let frames = try decoder!.decode(sample)
                    result.decodeSeconds += monotonicSeconds() - before
                    handle(frames)
                }
            }
        }

        while true {
            let chunk = try connection.receive(upTo: sizes.next())
            if chunk.isEmpty { break }
            result.reads += 1
            result.bytesReceived += chunk.count
            result.smallestRead = min(result.smallestRead, chunk.count)
            var rest = chunk[...]
            while !rest.isEmpty {
                if nextBoundary <= bytesAppended {
                    guard let unit = exchange.state.withLock({ $0.wire.count > unitsEnded ? $0.wire[unitsEnded] : nil })
                    else { break }
                    nextBoundary += unit.byteCount
                }
                let take = min(rest.count, nextBoundary - bytesAppended)
                try consume(assembler.append(rest.prefix(take)))
                bytesAppended += take
                rest = rest.dropFirst(take)
                if bytesAppended == nextBoundary {
                    try consume(assembler.endAccessUnit())
                    unitsEnded += 1
                }
            }
            if !rest.isEmpty {
                // Bytes beyond every unit the side channel announced: let the
                // assembler find the boundaries itself.
                try consume(assembler.append(rest))
                bytesAppended += rest.count
            }
        }
        try consume(assembler.finish())
        if let decoder {
            let before = monotonicSeconds()
            let frames = try decoder.finish()
            result.decodeSeconds += monotonicSeconds() - before
            handle(frames)
            for drop in decoder.drops { result.decoderDrops.append("\(drop)") }
        }
        connection.close()
    }
}
