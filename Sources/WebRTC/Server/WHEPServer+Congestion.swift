// The viewers' congestion control and the shared encode: the policy, the minimum of the viewers' targets, and each
// viewer's estimator figures as JSON for the statistics.
import CongestionControl
import FormatConv
import MediaCore

/// What the WHEP server's viewers' estimates do to the one encode all viewers share.
public enum SharedRatePolicy: String, Sendable, Hashable, CaseIterable {
    /// The encode follows the lowest target of the connected viewers that sent transport-cc feedback
    /// (``WHEPServer/takeTargetBitRate()``): no viewer gets more than its path carries, the others get less than
    /// theirs. The encoder must accept a new rate while encoding (constant-bit-rate control).
    case minimum
    /// The encode keeps its rate; each viewer's estimate is only reported.
    case fixed
}

extension WHEPServer {
    /// The lowest target of the connected sending viewers that had transport-cc feedback, or nil when none had.
    /// What ``SharedRatePolicy/minimum`` applies, whatever the policy.
    public var sharedTarget: Int? {
        peers.values.filter { !$0.video.isIncoming && $0.state == .connected }.compactMap(\.congestionTarget).min()
    }

    /// Under ``SharedRatePolicy/minimum``: ``sharedTarget`` when it changed since the last call, else nil. Always
    /// nil under ``SharedRatePolicy/fixed``.
    public func takeTargetBitRate() -> Int? {
        guard configuration.ratePolicy == .minimum, let target = sharedTarget, target != lastSharedTarget else {
            return nil
        }
        lastSharedTarget = target
        return target
    }

    /// A peer's congestion-control figures as a JSON member (`"congestionControl":{…},`), empty without an
    /// estimator. Rates in bits per second, webrtc-stats names where they exist.
    static func congestionJSON(of peer: WebRTCPeer) -> String {
        guard let congestion = peer.congestion else { return "" }
        let s = congestion.controller.statistics
        let pacer = congestion.pacer
        func optional(_ value: Int?) -> String { value.map(String.init) ?? "null" }
        let rtt = s.roundTripTime.map {
            String(Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1000)
        }
        let members: [(String, String)] = [
            ("availableOutgoingBitrate", String(s.availableOutgoingBitrate)),
            ("targetBitrate", String(s.targetBitrate)),
            ("acknowledgedBitrate", optional(s.acknowledgedBitrate)), ("pacingRate", String(s.pacingRate)),
            ("sentBitrate", optional(s.sentBitrate)), ("delayBasedEstimate", String(s.delayBasedEstimate)),
            ("lossBasedEstimate", optional(s.lossBasedEstimate)), ("rembBitrate", optional(s.rembBitrate)),
            ("detectorState", "\"\(s.detectorState.rawValue)\""),
            ("rateControlState", "\"\(s.rateControlState.rawValue)\""),
            ("applicationLimited", String(s.applicationLimited)),
            // Without a pacer packets leave at once: the queue delay is 0.
            ("paced", String(pacer != nil)),
            ("queueDelayMs", String(pacer.map { $0.queuedBytes * 8000 / max(1, $0.pacingRate) } ?? 0)),
            ("pacerQueuedPackets", String(pacer?.queuedPackets ?? 0)),
            ("pacerPacketsSent", String(pacer?.statistics.packetsSent ?? 0)),
            ("pacerProbeBytesSent", String(pacer?.statistics.probeBytesSent ?? 0)),
            ("probeClustersSent", String(congestion.probeClustersSent)),
            ("probeBytesSent", String(congestion.probeBytesSent)),
            ("probeClustersSucceeded", String(s.probeClustersSucceeded)),
            ("lastProbeResult", optional(s.lastProbeResult)),
            ("transportFeedbackReceived", String(congestion.transportFeedbackReceived)),
            ("feedbackPacketsMatched", String(congestion.packetsMatched)),
            ("rembReceived", String(congestion.rembReceived)), ("lossReports", String(s.lossReports)),
            ("packetsAcknowledged", String(s.packetsAcknowledged)),
            ("packetsReportedLost", String(s.packetsReportedLost)),
            ("packetsSent", String(s.packetsSent)), ("bytesSent", String(s.bytesSent)),
            ("roundTripTimeMs", rtt ?? "null"),
        ]
        return "\"congestionControl\":{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "},"
    }

    /// The shared encode's figures as JSON members: the policy, ``sharedTarget`` and the target last applied.
    func sharedRateJSON() -> String {
        "\"ratePolicy\":\"\(configuration.ratePolicy.rawValue)\",\"sharedTarget\":\(sharedTarget.map(String.init) ?? "null"),"
            + "\"appliedTarget\":\(lastSharedTarget.map(String.init) ?? "null"),"
    }
}
