// The report's figures as a JSON object (`codecs demo --json`).
import MediaCore

extension RoundTripTrial.Report {
    /// The figures as one JSON object, keys sorted: the settings (`codec`,
    /// `width`, `height`, `frames`, `frameRate`, `transport`, `paced`,
    /// `lowLatency`), the counts (`decoded`, `lost`), `passed`, the luma
    /// PSNR (`psnrYAverage`, `psnrYMinimum`), `latency` (`p50`, `p95`,
    /// `max`, seconds), `stages` and `endToEnd` (the ledger's spans),
    /// `framesOfDelay`, RTP's `repair` counts and `accessUnitBytes`.
    /// A figure that is not finite is written as `null`.
    public var json: String {
        let options = configuration
        var object: [String: TrialJSON] = [
            "codec": .string(options.codec.rawValue), "width": .int(options.width), "height": .int(options.height),
            "frames": .int(options.frames), "frameRate": .int(options.frameRate),
            "transport": .string(options.transport.rawValue), "paced": .bool(options.pacing),
            "lowLatency": .bool(options.properties.lowLatency), "decoded": .int(account.decoded.count),
            "lost": .int(account.missing.count), "passed": .bool(passed),
            "psnrYAverage": .number(averagePSNR), "psnrYMinimum": .number(minimumPSNR),
        ]
        if let latency = latencySummary {
            object["latency"] = .object([
                "p50": .number(latency.p50), "p95": .number(latency.p95), "max": .number(latency.maximum),
            ])
        }
        object["stages"] = .array(
            ledger.stages.map { span in
                .object([
                    "from": .string(span.from.rawValue), "to": .string(span.to.rawValue), "p50": .number(span.p50),
                    "p95": .number(span.p95), "count": .int(span.count),
                ])
            })
        if let span = ledger.span(from: .encodeIn, to: .decoded) {
            object["endToEnd"] = .object([
                "p50": .number(span.p50), "p95": .number(span.p95), "count": .int(span.count),
            ])
        }
        if let delay = framesOfDelay { object["framesOfDelay"] = .int(delay) }
        if let outbound = sender.outbound, let inbound = receiver.inbound {
            object["repair"] = .object([
                "packetsDroppedOnPurpose": .int(sender.packetsDroppedOnPurpose), "nackCount": .int(inbound.nackCount),
                "retransmittedPacketsSent": .int(outbound.retransmittedPacketsSent),
                "packetsRepaired": .int(inbound.packetsRepaired), "packetsLost": .int(inbound.packetsLost),
                "pliCount": .int(inbound.pliCount),
                "keyframesForced": .array(sender.keyframesForced.map(TrialJSON.int)),
            ])
        }
        if let sizes = accessUnitSizes {
            object["accessUnitBytes"] = .object([
                "mean": .number(sizes.mean), "largest": .int(sizes.largest), "ratio": .number(sizes.ratio),
                "largestAfterFirst": .int(sizes.largestAfterFirst), "ratioAfterFirst": .number(sizes.ratioAfterFirst),
            ])
        }
        var text = ""
        TrialJSON.object(object).write(to: &text)
        return text
    }
}

/// A JSON value, written with sorted keys.
enum TrialJSON {
    case int(Int)
    case number(Double)
    case bool(Bool)
    case string(String)
    case array([TrialJSON])
    case object([String: TrialJSON])

    func write(to text: inout String) {
        switch self {
        case .int(let value): text += String(value)
        case .number(let value): text += value.isFinite ? String(value) : "null"
        case .bool(let value): text += value ? "true" : "false"
        case .string(let value): Self.quote(value, into: &text)
        case .array(let values):
            text += "["
            for (index, value) in values.enumerated() {
                if index > 0 { text += "," }
                value.write(to: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                Self.quote(key, into: &text)
                text += ":"
                members[key]!.write(to: &text)
            }
            text += "}"
        }
    }

    private static func quote(_ value: String, into text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
