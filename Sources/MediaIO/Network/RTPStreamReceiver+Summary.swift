// RTPStreamReceiver's one-line summary of what it received.

extension RTPStreamReceiver {
    /// One line of what the receiver saw, from its ``statistics``
    /// (webrtc-stats `inbound-rtp` counts), for a log or a command's report:
    ///
    /// `received 92 packets, 30 access units; 2 packets lost, 1 duplicates, 0 late`
    ///
    /// then, each only when not zero: `; dropped N packets on purpose` (the
    /// fault injector's), `; sent N NACKs, M packets repaired`, `; sent N
    /// picture loss indications`, `; ignored N packets of other sources`;
    /// last, why the stream ended (``endReason``, the sender's BYE) if it did.
    public var summary: String {
        let stats = statistics
        var text =
            "received \(stats.packetsReceived) packets, \(stats.framesReceived) access units; "
            + "\(stats.packetsLost) packets lost, \(stats.packetsDuplicated) duplicates, "
            + "\(stats.packetsDiscarded) late"
        if packetsDroppedOnPurpose > 0 { text += "; dropped \(packetsDroppedOnPurpose) packets on purpose" }
        if stats.nackCount > 0 || stats.packetsRepaired > 0 {
            text += "; sent \(stats.nackCount) NACKs, \(stats.packetsRepaired) packets repaired"
        }
        if stats.pliCount > 0 { text += "; sent \(stats.pliCount) picture loss indications" }
        if stats.packetsIgnored.total > 0 { text += "; ignored \(stats.packetsIgnored.total) packets of other sources" }
        if let endReason { text += "; \(endReason)" }
        return text
    }
}
