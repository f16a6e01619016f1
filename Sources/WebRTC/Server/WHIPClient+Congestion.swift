// The publisher's congestion control: the estimator its peer runs from the endpoint's transport-cc feedback, its
// target for the pipeline, and its figures as JSON.
import CongestionControl

extension WHIPClient {
    /// The estimator's figures, nil before the answer or when it did not take transport-cc.
    public var congestionStatistics: CongestionControlStatistics? { peer?.congestion?.controller.statistics }

    /// The pacer media leaves through (``pacesMedia``): its queue, rates and counts; nil when the client does not
    /// pace, before the answer, or when the answer took no transport-cc.
    public var pacer: Pacer<WebRTCPeer.PacedDatagram>? { peer?.congestion?.pacer }

    /// The estimator's target (at most ``maximumTarget``) once transport-cc feedback came, when ``followsEstimate``
    /// and it changed since the last call; else nil.
    public func takeTargetBitRate() -> Int? {
        guard followsEstimate, let estimate = peer?.congestionTarget else { return nil }
        let target = maximumTarget.map { min($0, estimate) } ?? estimate
        guard target != appliedTarget else { return nil }
        appliedTarget = target
        return target
    }

    /// The estimator's figures as a JSON object (as `/whep/stats` gives a viewer's `congestionControl`), or `null`.
    public func congestionJSON() -> String {
        guard let peer else { return "null" }
        let member = WHEPServer.congestionJSON(of: peer)
        guard member.hasPrefix("\"congestionControl\":") else { return "null" }
        return String(member.dropFirst("\"congestionControl\":".count).dropLast())
    }
}
