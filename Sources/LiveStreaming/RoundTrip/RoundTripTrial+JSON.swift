// The report's figures as a JSON object (`codecs demo --json`).
import MediaCore

extension RoundTripTrial.Report {
    /// The figures as one JSON object, keys sorted, indented two spaces a level: the settings (`codec`,
    /// `width`, `height`, `frames`, `frameRate`, `transport`, `paced`,
    /// `lowLatency`), the counts (`decoded`, `lost`), `passed`, the luma
    /// PSNR (`psnrYAverage`, `psnrYMinimum`), `latency` (`p50`, `p95`,
    /// `max`, seconds), `stages` and `endToEnd` (the ledger's spans),
    /// `framesOfDelay` (the most) and `framesOfDelayPercentiles` (`p50`,
    /// `p99`, `max`, `count`), RTP's `repair` counts and `accessUnitBytes`.
    /// A figure that is not finite is written as `null`.
    public var json: String {
        let options = configuration
        var object: [String: JSONValue] = [
            "codec": .string(options.codec.rawValue), "width": .int(options.width), "height": .int(options.height),
            "frames": .int(options.frames), "frameRate": .int(options.frameRate),
            "transport": .string(options.transport.rawValue), "paced": .bool(options.pacing),
            "lowLatency": .bool(options.properties.lowLatency), "decoded": .int(account.decoded.count),
            "lost": .int(account.missing.count), "passed": .bool(passed),
            "psnrYAverage": .double(averagePSNR), "psnrYMinimum": .double(minimumPSNR),
        ]
        if let latency = latencySummary {
            object["latency"] = JSONValue.sorted([
                "p50": .double(latency.p50), "p95": .double(latency.p95), "max": .double(latency.maximum),
            ])
        }
        object["stages"] = .array(
            ledger.stages.map { span in
                JSONValue.sorted([
                    "from": .string(span.from.rawValue), "to": .string(span.to.rawValue), "p50": .double(span.p50),
                    "p95": .double(span.p95), "count": .int(span.count),
                ])
            })
        if let span = ledger.span(from: .encodeIn, to: .decoded) {
            object["endToEnd"] = JSONValue.sorted([
                "p50": .double(span.p50), "p95": .double(span.p95), "count": .int(span.count),
            ])
        }
        if let delay = framesOfDelaySummary {
            object["framesOfDelay"] = .int(delay.maximum)
            object["framesOfDelayPercentiles"] = JSONValue.sorted([
                "p50": .int(delay.p50), "p99": .int(delay.p99), "max": .int(delay.maximum), "count": .int(delay.count),
            ])
        }
        if let outbound = sender.outbound, let inbound = receiver.inbound {
            object["repair"] = JSONValue.sorted([
                "packetsDroppedOnPurpose": .int(sender.packetsDroppedOnPurpose), "nackCount": .int(inbound.nackCount),
                "retransmittedPacketsSent": .int(outbound.retransmittedPacketsSent),
                "packetsRepaired": .int(inbound.packetsRepaired), "packetsLost": .int(inbound.packetsLost),
                "pliCount": .int(inbound.pliCount),
                "keyframesForced": .array(sender.keyframesForced.map(JSONValue.int)),
            ])
        }
        if let sizes = accessUnitSizes {
            object["accessUnitBytes"] = JSONValue.sorted([
                "mean": .double(sizes.mean), "largest": .int(sizes.largest), "ratio": .double(sizes.ratio),
                "largestAfterFirst": .int(sizes.largestAfterFirst), "ratioAfterFirst": .double(sizes.ratioAfterFirst),
            ])
        }
        return JSONValue.sorted(object).serialized()
    }
}
