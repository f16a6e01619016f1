import LiveStreaming
import MediaCore

/// The demo's closing report, printed: what was encoded, sent, received,
/// decoded and lost (against what the sender's drops and a late join make
/// expected), rates and latency, picture quality against the pass marks, the
/// backends, and the verdict, from the ``RoundTripTrial/Report``.
struct DemoReport {
    let trial: RoundTripTrial.Report
    /// `--encoder` as given ("auto", "software", "vaapi").
    let encoderName: String
    /// `--low-latency`.
    let lowLatency: Bool

    private var options: RoundTripTrial.Configuration { trial.configuration }
    var sender: RoundTripTrial.SenderFigures { trial.sender }
    var receiver: RoundTripTrial.ReceiverFigures { trial.receiver }
    private var account: RoundTripTrial.FrameAccount { trial.account }
    private var countsPassed: Bool { trial.countsPassed }
    private var psnrPassed: Bool { trial.psnrPassed }
    private var averagePSNR: Double { trial.averagePSNR }
    private var minimumPSNR: Double { trial.minimumPSNR }
    private var framesOfDelay: Int? { trial.framesOfDelay }
    private var accessUnitSizes:
        (mean: Double, largest: Int, ratio: Double, largestAfterFirst: Int, ratioAfterFirst: Double)?
    { trial.accessUnitSizes }
    var passed: Bool { trial.passed }

    /// Each encoder used, with how it was chosen.
    private var encoders: String {
        zip(sender.encoderBackends, sender.encoderFallbackReasons).map { backend, reason in
            if let reason { return backend + " (hardware not used: \(reason))" }
            return backend + (encoderName != "auto" ? " (--encoder \(encoderName))" : " (automatic)")
        }.joined(separator: "; ")
    }

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
        title += options.pacing ? ", paced" : ", unpaced"
        title += ", over \(options.transport.rawValue)://127.0.0.1:\(trial.port)"
        return title
    }

    private func addFrames(to table: inout ReportTable) {
        table.section("frames")
        table.add("encoded", "\(trial.produced.count)")
        if account.notSent > 0 {
            table.add("before the receiver joined", "\(account.notSent) (late join after \(options.lateJoin) frames)")
        }
        table.add("sent", "\(trial.wire.count)")
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
        if trial.unitsLostOnTheWay > 0 {
            dropped +=
                " (first transmissions of \(trial.unitsLostOnTheWay) access unit\(trial.unitsLostOnTheWay == 1 ? "" : "s"))"
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
        table.add("wall time", formatted(trial.wallSeconds, digits: 2) + " s")
        if let latency = LatencySummary(receiver.latencies) {
            let figures = [latency.p50, latency.p95, latency.maximum].map(formattedMilliseconds)
            table.add("latency p50 / p95 / max", figures.joined(separator: " / ") + "  (submit → decoded)")
        }
        for span in trial.ledger.stages {
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

    /// The figures as a JSON object (`codecs demo --json`, read by `make bench`).
    var json: [String: Any] {
        var object: [String: Any] = [
            "codec": options.codec.rawValue, "width": options.width, "height": options.height,
            "frames": options.frames, "frameRate": options.frameRate, "transport": options.transport.rawValue,
            "paced": options.pacing, "lowLatency": lowLatency, "decoded": account.decoded.count,
            "lost": account.missing.count, "passed": passed,
            "psnrYAverage": averagePSNR, "psnrYMinimum": minimumPSNR,
        ]
        if let latency = LatencySummary(receiver.latencies) {
            object["latency"] = ["p50": latency.p50, "p95": latency.p95, "max": latency.maximum]
        }
        object["stages"] = trial.ledger.stages.map { span in
            ["from": span.from.rawValue, "to": span.to.rawValue, "p50": span.p50, "p95": span.p95, "count": span.count]
                as [String: Any]
        }
        if let span = trial.ledger.span(from: .encodeIn, to: .decoded) {
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
        table.add("encoder", encoders)
        table.add("decoder", receiver.decoderBackend + (receiver.decoderReason.map { " (\($0))" } ?? ""))
        table.add("formats received", receiver.formats.joined(separator: " → "))
    }

    /// The first twelve of `indexes`, and how many there are when more.
    private static func listed(_ indexes: [Int]) -> String {
        let shown = indexes.prefix(12).map(String.init).joined(separator: ", ")
        return indexes.count > 12 ? shown + ", … (\(indexes.count))" : shown
    }
}
