// `--stats-json`'s "congestion-control" object: the RTP sender's controller, pacer and send-rate samples.
import Foundation
import LiveStreaming
import MediaIO

extension StatsJSON {
    /// The controller's figures under webrtc-stats names where they exist (`targetBitrate`,
    /// `availableOutgoingBitrate`), the pacer's, the pipeline's frames dropped before the encoder and the send
    /// rate every 500 ms (`samples`: seconds, bytesSent, targetBitrate).
    static func congestionControl(_ stats: RTPSenderCongestionStatistics, _ live: LivePipeline.Statistics)
        -> [String: Any]
    {
        let controller = stats.controller
        return [
            "targetBitrate": stats.targetBitrate, "availableOutgoingBitrate": stats.availableOutgoingBitrate,
            "acknowledgedBitrate": controller.acknowledgedBitrate as Any? ?? NSNull(),
            "delayBasedEstimate": controller.delayBasedEstimate,
            "lossBasedEstimate": controller.lossBasedEstimate as Any? ?? NSNull(),
            "rembBitrate": controller.rembBitrate as Any? ?? NSNull(), "pacingRate": stats.pacingRate,
            "queueDelay": stats.queueDelay, "queuedPackets": stats.queuedPackets,
            "probeClustersSent": controller.probeClustersSent,
            "probeClustersSucceeded": controller.probeClustersSucceeded,
            "probeClustersCompleted": stats.probeClustersCompleted, "paddingPacketsSent": stats.paddingPacketsSent,
            "feedbackReports": controller.feedbackReports, "lossReports": controller.lossReports,
            "packetsAcknowledged": controller.packetsAcknowledged,
            "packetsReportedLost": controller.packetsReportedLost, "overuseSignals": controller.overuseSignals,
            "detectorState": controller.detectorState.rawValue, "bytesSent": stats.bytesSent,
            "framesDroppedForSendQueue": live.framesDroppedForSendQueue,
            "samples": stats.samples.map {
                ["seconds": $0.seconds, "bytesSent": $0.bytesSent, "targetBitrate": $0.targetBitrate] as [String: Any]
            },
        ]
    }
}
