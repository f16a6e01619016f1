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

    private func addFrames(to table: inout ReportTable) {
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
            table.add("round-trip time", ReportTable.milliseconds(rtt))
        }
    }

    private func addRates(to table: inout ReportTable) {
        let options = configuration
        table.section("rates")
        let bitRate = Double(sender.bytesProduced * 8) / (Double(options.frames) / Double(options.frameRate))
        table.add(
            "bit rate",
            bitRate >= 1e6
                ? ReportTable.formatted(bitRate / 1e6, digits: 2) + " Mbit/s"
                : ReportTable.formatted(bitRate / 1e3) + " kbit/s")
        let smallestRead = receiver.smallestRead == .max ? 0 : receiver.smallestRead
        switch options.transport {
        case .tcp:
            table.add(
                "bytes on the wire",
                "\(receiver.bytesReceived) in \(receiver.reads) reads of 1…65536 bytes (smallest \(smallestRead))")
        case .rtp:
            table.add("bytes on the wire", "\(receiver.bytesReceived) in \(receiver.reads) RTP packets")
        }
        table.add("encode fps", ReportTable.formatted(Double(sender.framesEncoded) / max(sender.encodeSeconds, 1e-9)))
        table.add(
            "decode fps", ReportTable.formatted(Double(account.decoded.count) / max(receiver.decodeSeconds, 1e-9)))
        table.add("wall time", ReportTable.formatted(wallSeconds, digits: 2) + " s")
        if let latency = latencySummary {
            let figures = [latency.p50, latency.p95, latency.maximum].map(ReportTable.milliseconds)
            table.add("latency p50 / p95 / max", figures.joined(separator: " / ") + "  (submit → decoded)")
        }
        for span in ledger.stages {
            table.add(
                "  \(span.from.rawValue) → \(span.to.rawValue)",
                "p50 \(ReportTable.milliseconds(span.p50)), p95 \(ReportTable.milliseconds(span.p95))")
        }
        if let delay = framesOfDelaySummary {
            table.add("frames of delay", "\(delay)  (later frames already in the encoder when one was decoded)")
        }
        if let sizes = accessUnitSizes {
            table.add(
                "access unit bytes",
                "mean \(Int(sizes.mean.rounded())), largest \(sizes.largest)"
                    + " (\(ReportTable.formatted(sizes.ratio, digits: 2))× the mean);"
                    + " after the first: largest \(sizes.largestAfterFirst)"
                    + " (\(ReportTable.formatted(sizes.ratioAfterFirst, digits: 2))×)")
        }
    }

    private func addQuality(to table: inout ReportTable) {
        table.section("quality")
        table.add(
            "PSNR Y average",
            ReportTable.formatted(averagePSNR, digits: 2)
                + " dB  (pass: ≥ \(ReportTable.formatted(configuration.minimumAveragePSNR)) dB)")
        table.add(
            "PSNR Y minimum",
            ReportTable.formatted(minimumPSNR, digits: 2)
                + " dB  (pass: ≥ \(ReportTable.formatted(configuration.minimumFramePSNR)) dB)")
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
