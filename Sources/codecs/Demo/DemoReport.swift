/// Which frames the demo's receiver should have decoded, which it did, and
/// the difference, from the sender's log of access units.
///
/// Frames whose access unit went to the receiver are expected back, except
/// the ones it could not decode because an earlier access unit was left
/// out or lost for good: from each such unit to the next keyframe, in
/// decode order (a closed GOP refers to nothing before its IDR/IRAP; H.264
/// 8.2.1, H.265 8.3.2). With NACK (`repairs`), a unit that lost packets on
/// the way is expected back whole: the retransmissions repair it.
struct DemoFrameAccount {
    /// Access units encoded before the receiver joined.
    var notSent = 0
    /// Access units the sender left out (TCP `--drop-every`) or that lost
    /// packets on the way with nothing to repair them (RTP `--no-nack`).
    var droppedBySender = 0
    /// Frames expected lost: the left-out ones and those up to the next keyframe.
    var expectedLost: [Int] = []
    /// Frames lost in fact: sent but not decoded, and left out.
    var actualLost: Set<Int> = []
    /// Frames decoded.
    var decoded: Set<Int> = []
    /// Frames expected back but not decoded, ascending.
    var missing: [Int] = []
    /// Frames decoded but not expected, ascending.
    var unexpected: [Int] = []

    init(produced: [DemoAccessUnit], wire: [DemoAccessUnit], decodedFrameIndexes: [Int], repairs: Bool = false) {
        var lostSinceDrop = false
        var joined = false
        for unit in produced {
            guard unit.sentToReceiver else {
                notSent += 1
                continue
            }
            if !joined {
                // An RTP receiver joins where the stream is: until a keyframe,
                // nothing it gets can be decoded.
                joined = true
                lostSinceDrop = !unit.isKeyframe
            }
            if !repairs && (unit.droppedBySender || unit.lostOnTheWay) {
                droppedBySender += 1
                lostSinceDrop = true
                expectedLost.append(unit.frameIndex)
            } else if lostSinceDrop && !unit.isKeyframe {
                expectedLost.append(unit.frameIndex)
            } else {
                lostSinceDrop = false
            }
        }
        let sent = Set(wire.map(\.frameIndex))
        let expectedDecoded = sent.subtracting(expectedLost)
        decoded = Set(decodedFrameIndexes)
        missing = expectedDecoded.subtracting(decoded).sorted()
        unexpected = decoded.subtracting(expectedDecoded).sorted()
        actualLost = sent.subtracting(decoded).union(
            produced.filter { $0.sentToReceiver && $0.droppedBySender && !repairs }.map(\.frameIndex))
    }
}

/// The demo's closing report: what was encoded, sent, received, decoded and
/// lost (against what the sender's drops and a late join make expected),
/// rates and latency, picture quality against the pass marks, the backends,
/// and the verdict.
struct DemoReport {
    let options: DemoOptions
    let sender: DemoSenderResult
    let receiver: DemoReceiverResult
    let state: DemoExchange.State
    let port: Int
    let wallSeconds: Double
    let account: DemoFrameAccount

    init(
        options: DemoOptions, sender: DemoSenderResult, receiver: DemoReceiverResult, state: DemoExchange.State,
        port: Int, wallSeconds: Double
    ) {
        self.options = options
        self.sender = sender
        self.receiver = receiver
        self.state = state
        self.port = port
        self.wallSeconds = wallSeconds
        account = DemoFrameAccount(
            produced: state.produced, wire: state.wire, decodedFrameIndexes: receiver.decodedFrameIndexes,
            repairs: options.transport == .rtp && options.nack)
    }

    /// RTP: access units of which packets were lost on the way (repaired or not).
    var unitsLostOnTheWay: Int { state.wire.filter(\.lostOnTheWay).count }

    /// Every frame expected came back, once and in order, and nothing else went wrong.
    var countsPassed: Bool {
        // An access unit lost for good on RTP may arrive in part or not at
        // all: the received count is exact only when nothing is.
        let receivedExactly =
            options.transport == .tcp || account.droppedBySender > 0
            || receiver.accessUnitsReceived == state.wire.count
        return account.missing.isEmpty && account.unexpected.isEmpty && receiver.ptsOutOfOrder == 0
            && receivedExactly && receiver.assemblerDrops.isEmpty
            && Set(account.expectedLost) == account.actualLost && sender.encoderDroppedFrames == 0
    }

    private var averagePSNR: Double {
        receiver.psnrY.isEmpty ? 0 : receiver.psnrY.reduce(0, +) / Double(receiver.psnrY.count)
    }

    private var minimumPSNR: Double { receiver.psnrY.min() ?? 0 }

    /// The luma PSNR reached both pass marks.
    var psnrPassed: Bool {
        !receiver.psnrY.isEmpty && averagePSNR >= options.minimumAveragePSNR
            && minimumPSNR >= options.minimumFramePSNR
    }

    var passed: Bool { countsPassed && psnrPassed }

    /// The report as a two-column table.
    var text: String {
        var table = ReportTable()
        table.add(title, "")
        addFrames(to: &table)
        addRepairs(to: &table)
        addRates(to: &table)
        addQuality(to: &table)
        addBackends(to: &table)
        var verdicts: [String] = []
        if !countsPassed { verdicts.append("frames were lost or out of order") }
        if !psnrPassed { verdicts.append("PSNR below the pass mark") }
        table.section(passed ? "result: PASS" : "result: FAIL — " + verdicts.joined(separator: ", "))
        return table.rendered
    }

    private var title: String {
        let second = options.secondSize
        var title = "codecs demo: \(options.codec.displayName) \(options.width)x\(options.height)"
        if options.resolutionChange { title += " → \(second.width)x\(second.height) at frame \(options.changeFrame)" }
        title += ", \(options.frames) frames at \(options.frameRate) fps"
        title += options.pace ? ", paced" : ", unpaced"
        title += ", over \(options.transport.rawValue)://127.0.0.1:\(port)"
        return title
    }

    private func addFrames(to table: inout ReportTable) {
        table.section("frames")
        table.add("encoded", "\(state.produced.count)")
        if account.notSent > 0 {
            table.add("before the receiver joined", "\(account.notSent) (late join after \(options.lateJoin) frames)")
        }
        table.add("sent", "\(state.wire.count)")
        table.add("received", "\(receiver.accessUnitsReceived)")
        table.add("decoded", "\(account.decoded.count)")
        var dropLine = "\(account.actualLost.count)"
        if account.droppedBySender > 0 || (options.dropEvery != nil && options.transport == .tcp) {
            let expected = account.expectedLost.count
            let how = options.transport == .tcp ? "left out by the sender" : "lost on the way, not repaired"
            dropLine +=
                " (expected \(expected): \(account.droppedBySender) access units \(how),"
                + " \(expected - account.droppedBySender) skipped until the next keyframe)"
        }
        table.add("dropped", dropLine)
        let missing = account.missing
        table.add("lost", "\(missing.count)" + (missing.isEmpty ? "" : " (frames \(Self.listed(missing)))"))
        if !account.unexpected.isEmpty { table.add("decoded but not expected", Self.listed(account.unexpected)) }
        if receiver.ptsOutOfOrder > 0 { table.add("out of order", "\(receiver.ptsOutOfOrder)") }
        if !receiver.assemblerDrops.isEmpty {
            table.add("assembler dropped", receiver.assemblerDrops.joined(separator: "; "))
        }
        if !receiver.decoderDrops.isEmpty {
            table.add("decoder dropped", receiver.decoderDrops.joined(separator: "; "))
        }
        if sender.encoderDroppedFrames > 0 { table.add("encoder dropped", "\(sender.encoderDroppedFrames)") }
    }

    /// RTP: what was lost on the way and how RTCP repaired it.
    private func addRepairs(to table: inout ReportTable) {
        guard let outbound = sender.outbound, let inbound = receiver.inbound else { return }
        table.section("repair (RTCP)")
        var dropped = "\(sender.packetsDroppedOnPurpose)"
        if unitsLostOnTheWay > 0 {
            dropped += " (first transmissions of \(unitsLostOnTheWay) access unit\(unitsLostOnTheWay == 1 ? "" : "s"))"
        }
        table.add("packets dropped on purpose", dropped)
        table.add(
            "NACKs sent",
            options.nack ? "\(inbound.nackCount) asking for \(inbound.nackRequests) packets" : "off (--no-nack)")
        table.add(
            "packets retransmitted",
            "\(outbound.retransmittedPacketsSent) (\(outbound.retransmittedBytesSent) bytes, answering \(outbound.nackCount) NACKs)"
        )
        table.add("packets repaired", "\(inbound.packetsRepaired)")
        table.add("packets lost for good", "\(inbound.packetsLost)")
        var requests = "\(inbound.pliCount) picture loss indications sent"
        if !sender.keyframesForced.isEmpty {
            requests += "; keyframes forced at frames \(Self.listed(sender.keyframesForced))"
        }
        if sender.keyframeRequestsIgnored > 0 {
            requests += "; \(sender.keyframeRequestsIgnored) not answered (--no-pli)"
        }
        table.add("keyframe requests", requests)
        if let rtt = sender.remoteInbound?.roundTripTime {
            table.add("round-trip time", formattedMilliseconds(rtt))
        }
    }

    private func addRates(to table: inout ReportTable) {
        table.section("rates")
        let streamSeconds = Double(options.frames) / Double(options.frameRate)
        table.add("bit rate", formattedBitRate(Double(sender.bytesProduced * 8) / streamSeconds))
        let smallestRead = receiver.smallestRead == .max ? 0 : receiver.smallestRead
        switch options.transport {
        case .tcp:
            table.add(
                "bytes on the wire",
                "\(receiver.bytesReceived) in \(receiver.reads) reads of 1…65536 bytes (smallest \(smallestRead))")
        case .rtp:
            table.add("bytes on the wire", "\(receiver.bytesReceived) in \(receiver.reads) RTP packets")
        }
        table.add("encode fps", formatted(Double(sender.framesEncoded) / max(sender.encodeSeconds, 1e-9)))
        table.add("decode fps", formatted(Double(account.decoded.count) / max(receiver.decodeSeconds, 1e-9)))
        table.add("wall time", formatted(wallSeconds, digits: 2) + " s")
        if let latency = LatencySummary(receiver.latencies) {
            let figures = [latency.p50, latency.p95, latency.maximum].map(formattedMilliseconds)
            table.add("latency p50 / p95 / max", figures.joined(separator: " / ") + "  (submit → decoded)")
        }
        for span in state.ledger.stages {
            table.add(
                "  \(span.from.rawValue) → \(span.to.rawValue)",
                "p50 \(formattedMilliseconds(span.p50)), p95 \(formattedMilliseconds(span.p95))")
        }
        if let delay = framesOfDelay {
            table.add("frames of delay", "\(delay)  (most later frames already in the encoder when one was decoded)")
        }
        if let sizes = accessUnitSizes {
            table.add(
                "access unit bytes",
                "mean \(Int(sizes.mean.rounded())), largest \(sizes.largest) (\(formatted(sizes.ratio, digits: 2))× the mean);"
                    + " after the first: largest \(sizes.largestAfterFirst) (\(formatted(sizes.ratioAfterFirst, digits: 2))×)"
            )
        }
    }

    /// Encode in → decoded, in frames (``LatencyLedger/framesOfDelay(from:to:)``).
    var framesOfDelay: Int? { state.ledger.framesOfDelay(from: .encodeIn, to: .decoded) }

    /// The mean and largest access unit put on the wire, in bytes, and the
    /// largest after the first (the first is the stream's only IDR in
    /// low-latency mode, where intra refresh replaces periodic keyframes).
    var accessUnitSizes: (mean: Double, largest: Int, ratio: Double, largestAfterFirst: Int, ratioAfterFirst: Double)? {
        let sizes = state.wire.map(\.byteCount)
        guard let largest = sizes.max(), largest > 0 else { return nil }
        let mean = Double(sizes.reduce(0, +)) / Double(sizes.count)
        let afterFirst = sizes.dropFirst().max() ?? 0
        return (mean, largest, Double(largest) / mean, afterFirst, Double(afterFirst) / mean)
    }

    /// The figures as a JSON object (`codecs demo --json`, read by `make bench`).
    var json: [String: Any] {
        var object: [String: Any] = [
            "codec": options.codec.rawValue, "width": options.width, "height": options.height,
            "frames": options.frames, "frameRate": options.frameRate, "transport": options.transport.rawValue,
            "paced": options.pace, "lowLatency": options.lowLatency, "decoded": account.decoded.count,
            "lost": account.missing.count, "passed": passed,
            "psnrYAverage": averagePSNR, "psnrYMinimum": minimumPSNR,
        ]
        if let latency = LatencySummary(receiver.latencies) {
            object["latency"] = ["p50": latency.p50, "p95": latency.p95, "max": latency.maximum]
        }
        object["stages"] = state.ledger.stages.map { span in
            ["from": span.from.rawValue, "to": span.to.rawValue, "p50": span.p50, "p95": span.p95, "count": span.count]
                as [String: Any]
        }
        if let span = state.ledger.span(from: .encodeIn, to: .decoded) {
            object["endToEnd"] = ["p50": span.p50, "p95": span.p95, "count": span.count]
        }
        if let delay = framesOfDelay { object["framesOfDelay"] = delay }
        if let outbound = sender.outbound, let inbound = receiver.inbound {
            object["repair"] = [
                "packetsDroppedOnPurpose": sender.packetsDroppedOnPurpose, "nackCount": inbound.nackCount,
                "retransmittedPacketsSent": outbound.retransmittedPacketsSent,
                "packetsRepaired": inbound.packetsRepaired, "packetsLost": inbound.packetsLost,
                "pliCount": inbound.pliCount, "keyframesForced": sender.keyframesForced,
            ]
        }
        if let sizes = accessUnitSizes {
            object["accessUnitBytes"] = [
                "mean": sizes.mean, "largest": sizes.largest, "ratio": sizes.ratio,
                "largestAfterFirst": sizes.largestAfterFirst, "ratioAfterFirst": sizes.ratioAfterFirst,
            ]
        }
        return object
    }

    private func addQuality(to table: inout ReportTable) {
        table.section("quality")
        table.add(
            "PSNR Y average",
            formatted(averagePSNR, digits: 2) + " dB  (pass: ≥ \(formatted(options.minimumAveragePSNR)) dB)")
        table.add(
            "PSNR Y minimum",
            formatted(minimumPSNR, digits: 2) + " dB  (pass: ≥ \(formatted(options.minimumFramePSNR)) dB)")
    }

    private func addBackends(to table: inout ReportTable) {
        table.section("backends")
        table.add("encoder", sender.encoderBackends.joined(separator: "; "))
        table.add("decoder", receiver.decoderBackend + (receiver.decoderReason.map { " (\($0))" } ?? ""))
        table.add("formats received", receiver.formats.joined(separator: " → "))
    }

    /// The first twelve of `indexes`, and how many there are when more.
    private static func listed(_ indexes: [Int]) -> String {
        let shown = indexes.prefix(12).map(String.init).joined(separator: ", ")
        return indexes.count > 12 ? shown + ", … (\(indexes.count))" : shown
    }
}
