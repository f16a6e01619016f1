import Foundation
import MediaCore
import RTPPayload

/// `--stats-json FILE`: the stream's figures in the shape of W3C
/// webrtc-stats (`outbound-rtp`, `inbound-rtp`, `remote-inbound-rtp`; the
/// same member names), one object per report type.
enum StatsJSON {
    static func outbound(_ stats: RTPOutboundStreamStatistics) -> [String: Any] {
        [
            "type": "outbound-rtp", "ssrc": stats.ssrc, "packetsSent": stats.packetsSent,
            "bytesSent": stats.bytesSent, "retransmittedPacketsSent": stats.retransmittedPacketsSent,
            "retransmittedBytesSent": stats.retransmittedBytesSent, "nackCount": stats.nackCount,
            "pliCount": stats.pliCount, "firCount": stats.firCount, "framesEncoded": stats.framesEncoded,
            "framesSent": stats.framesSent, "keyFramesSent": stats.keyFramesSent,
            "targetBitrate": stats.targetBitrate as Any? ?? NSNull(),
        ]
    }

    static func inbound(_ stats: RTPInboundStreamStatistics) -> [String: Any] {
        [
            "type": "inbound-rtp", "ssrc": stats.ssrc as Any? ?? NSNull(), "packetsReceived": stats.packetsReceived,
            "bytesReceived": stats.bytesReceived, "packetsLost": stats.packetsLost, "jitter": stats.jitter,
            "packetsDiscarded": stats.packetsDiscarded, "packetsDuplicated": stats.packetsDuplicated,
            "packetsRepaired": stats.packetsRepaired,
            "retransmittedPacketsReceived": stats.retransmittedPacketsReceived, "nackCount": stats.nackCount,
            "pliCount": stats.pliCount, "firCount": stats.firCount, "framesReceived": stats.framesReceived,
            "keyFramesReceived": stats.keyFramesReceived, "framesDecoded": stats.framesDecoded,
            "framesDropped": stats.framesDropped, "packetsIgnored": stats.packetsIgnored.total,
            "transportFeedbackCount": stats.transportFeedbackCount,
        ]
    }

    static func remoteInbound(_ stats: RTPRemoteInboundStreamStatistics) -> [String: Any] {
        [
            "type": "remote-inbound-rtp", "ssrc": stats.ssrc, "packetsLost": stats.packetsLost,
            "fractionLost": stats.fractionLost, "jitter": stats.jitter,
            "roundTripTime": stats.roundTripTime as Any? ?? NSNull(),
        ]
    }

    /// Writes `objects` (report type → figures) to `path`.
    static func write(_ objects: [String: Any], to path: String) throws(MediaError) {
        do {
            let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys])
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            throw MediaError(.system, "cannot write the statistics to \(path): \(error.localizedDescription)")
        }
    }
}
