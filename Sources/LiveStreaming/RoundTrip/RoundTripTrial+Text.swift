// The report as text: the two-column table `codecs demo` prints.
import MediaCore

extension RoundTripTrial.Report {
    /// The report as a two-column table: what was encoded, sent, received,
    /// decoded and lost (against what the sender's drops and a late join
    /// make expected), RTCP's repairs, rates and latency per stage, picture
    /// quality against the pass marks, the backends, and the verdict
    /// (`result: PASS`, or `result: FAIL — ` and why). The labels are
    /// stable (scripts and tests read the value after a label); where a
    /// setting explains a figure, it is named as `codecs demo`'s option.
    public var text: String {
        var table = TrialTable()
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

    /// The latency of each frame from submission to decoding: nearest-rank
    /// p50 and p95 (the smallest value with at least p % at or below it) and
    /// the largest, in seconds; nil when no frame was decoded.
    public var latencySummary: (p50: Double, p95: Double, maximum: Double)? {
        let sorted = receiver.latencies.sorted()
        guard let maximum = sorted.last else { return nil }
        func percentile(_ p: Int) -> Double { sorted[max((p * sorted.count + 99) / 100, 1) - 1] }
        return (percentile(50), percentile(95), maximum)
    }

    private var title: String {
        let options = configuration
        let second = options.secondSize
        var title = "codecs demo: \(options.codec == .hevc ? "HEVC" : "H.264") \(options.width)x\(options.height)"
        if options.resolutionChange { title += " → \(second.width)x\(second.height) at frame \(options.changeFrame)" }
        title += ", \(options.frames) frames at \(options.frameRate) fps"
        title += options.pacing ? ", paced" : ", unpaced"
        title += ", over \(options.transport.rawValue)://127.0.0.1:\(port)"
        return title
    }

    /// Each encoder used, with how it was chosen.
    private var encoders: String {
        let asked = configuration.encoder
        return zip(sender.encoderBackends, sender.encoderFallbackReasons).map { backend, reason in
            if let reason { return backend + " (hardware not used: \(reason))" }
            return backend + (asked == .automatic ? " (automatic)" : " (--encoder \(asked))")
        }.joined(separator: "; ")
    }

    private func addFrames(to table: inout TrialTable) {
        let options = configuration
        table.section("frames")
        table.add("encoded", "\(produced.count)")
        if account.notSent > 0 {
            table.add("before the receiver joined", "\(account.notSent) (late join after \(options.lateJoin) frames)")
        }
        table.add("sent", "\(wire.count)")
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
    private func addRepairs(to table: inout TrialTable) {
        guard let outbound = sender.outbound, let inbound = receiver.inbound else { return }
        table.section("repair (RTCP)")
        var dropped = "\(sender.packetsDroppedOnPurpose)"
        if unitsLostOnTheWay > 0 {
            dropped += " (first transmissions of \(unitsLostOnTheWay) access unit\(unitsLostOnTheWay == 1 ? "" : "s"))"
        }
        table.add("packets dropped on purpose", dropped)
        table.add(
            "NACKs sent",
            configuration.nack
                ? "\(inbound.nackCount) asking for \(inbound.nackRequests) packets" : "off (--no-nack)")
        table.add(
            "packets retransmitted",
            "\(outbound.retransmittedPacketsSent) (\(outbound.retransmittedBytesSent) bytes,"
                + " answering \(outbound.nackCount) NACKs)")
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
            table.add("round-trip time", TrialTable.milliseconds(rtt))
        }
    }

    private func addRates(to table: inout TrialTable) {
        let options = configuration
        table.section("rates")
        let bitRate = Double(sender.bytesProduced * 8) / (Double(options.frames) / Double(options.frameRate))
        table.add(
            "bit rate",
            bitRate >= 1e6
                ? TrialTable.formatted(bitRate / 1e6, digits: 2) + " Mbit/s"
                : TrialTable.formatted(bitRate / 1e3) + " kbit/s")
        let smallestRead = receiver.smallestRead == .max ? 0 : receiver.smallestRead
        switch options.transport {
        case .tcp:
            table.add(
                "bytes on the wire",
                "\(receiver.bytesReceived) in \(receiver.reads) reads of 1…65536 bytes (smallest \(smallestRead))")
        case .rtp:
            table.add("bytes on the wire", "\(receiver.bytesReceived) in \(receiver.reads) RTP packets")
        }
        table.add("encode fps", TrialTable.formatted(Double(sender.framesEncoded) / max(sender.encodeSeconds, 1e-9)))
        table.add(
            "decode fps", TrialTable.formatted(Double(account.decoded.count) / max(receiver.decodeSeconds, 1e-9)))
        table.add("wall time", TrialTable.formatted(wallSeconds, digits: 2) + " s")
        if let latency = latencySummary {
            let figures = [latency.p50, latency.p95, latency.maximum].map(TrialTable.milliseconds)
            table.add("latency p50 / p95 / max", figures.joined(separator: " / ") + "  (submit → decoded)")
        }
        for span in ledger.stages {
            table.add(
                "  \(span.from.rawValue) → \(span.to.rawValue)",
                "p50 \(TrialTable.milliseconds(span.p50)), p95 \(TrialTable.milliseconds(span.p95))")
        }
        if let delay = framesOfDelay {
            table.add("frames of delay", "\(delay)  (most later frames already in the encoder when one was decoded)")
        }
        if let sizes = accessUnitSizes {
            table.add(
                "access unit bytes",
                "mean \(Int(sizes.mean.rounded())), largest \(sizes.largest)"
                    + " (\(TrialTable.formatted(sizes.ratio, digits: 2))× the mean);"
                    + " after the first: largest \(sizes.largestAfterFirst)"
                    + " (\(TrialTable.formatted(sizes.ratioAfterFirst, digits: 2))×)")
        }
    }

    private func addQuality(to table: inout TrialTable) {
        table.section("quality")
        table.add(
            "PSNR Y average",
            TrialTable.formatted(averagePSNR, digits: 2)
                + " dB  (pass: ≥ \(TrialTable.formatted(configuration.minimumAveragePSNR)) dB)")
        table.add(
            "PSNR Y minimum",
            TrialTable.formatted(minimumPSNR, digits: 2)
                + " dB  (pass: ≥ \(TrialTable.formatted(configuration.minimumFramePSNR)) dB)")
    }

    private func addBackends(to table: inout TrialTable) {
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

/// Rows of labels and values, rendered with the labels padded to one width;
/// a section is a blank line and a heading.
struct TrialTable {
    private var rows: [(label: String, value: String)] = []

    mutating func add(_ label: String, _ value: String) { rows.append((label, value)) }

    mutating func section(_ title: String) { rows += [("", ""), (title, "")] }

    var rendered: String {
        let width = rows.filter { !$0.value.isEmpty }.map(\.label.count).max() ?? 0
        return rows.map { row in
            if row.value.isEmpty { return row.label }
            return "  " + row.label + String(repeating: " ", count: width - row.label.count) + "  " + row.value
        }.joined(separator: "\n")
    }

    /// `value` with `digits` digits after the point ("inf", "n/a" when not finite).
    static func formatted(_ value: Double, digits: Int = 1) -> String {
        guard value.isFinite else { return value > 0 ? "inf" : "n/a" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        var text = String((value * scale).rounded() / scale)
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: dot, to: text.endIndex) - 1
            if digits == 0 {
                text = String(text[..<dot])
            } else if decimals < digits {
                text += String(repeating: "0", count: digits - decimals)
            }
        }
        return text
    }

    /// Seconds as milliseconds with one digit after the point.
    static func milliseconds(_ seconds: Double) -> String { formatted(seconds * 1000) + " ms" }
}
