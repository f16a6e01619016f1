// Statistics: counts for anyone (GET /whep/stats), and each viewer's and
// publisher's figures with the refused offers for the token's holder and
// --stats-json.
extension WHEPServer {
    /// What `GET /whep/stats` shows without the bearer token: counts only,
    /// no session id, address or reason. `viewers` and `publishers` are the
    /// sessions now (connecting or connected), `connectedViewers` and
    /// `connectedPublishers` those with DTLS done, `viewersFinished` and
    /// `publishersFinished` those that left (publishers that had connected);
    /// then refused offers, 401 answers, HTTP connections refused or evicted
    /// by the bounds and closed by the deadlines, and stray datagrams.
    public func countsJSON() -> String {
        let viewers = peers.values.filter { !$0.video.isIncoming }
        let publishers = peers.values.filter { $0.video.isIncoming }
        let counts: [(String, Int)] = [
            ("viewers", viewers.count), ("connectedViewers", viewers.filter { $0.state == .connected }.count),
            ("publishers", publishers.count),
            ("connectedPublishers", publishers.filter { $0.state == .connected }.count),
            ("viewersFinished", finished.filter { !$0.video.isIncoming }.count),
            ("publishersFinished", publishersFinished), ("refusedOffers", refusedOfferCount),
            ("unauthorizedRequests", unauthorizedRequests), ("refusedConnections", refusedConnections),
            ("expiredConnections", expiredConnections), ("strayDatagrams", strayDatagrams),
        ]
        return "{" + counts.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// Per viewer: state, payload type and its `mimeType` (`video/H264`, `video/H265`), packets and bytes sent,
    /// frames sent and `framesTakenShared` (those whose packets came from the packetization shared by every viewer),
    /// retransmissions, NACKs,
    /// PLIs, FIRs, keyframe requests, reception reports' loss and RTT,
    /// refused datagrams, a sender's `congestionControl` figures (its
    /// estimator's target, `availableOutgoingBitrate`, acknowledged and pacing
    /// rates, probes, feedback counts), a publisher's transport-cc feedback
    /// sent, and `sentFrames`: `[rtpTimestamp, wall-clock µs]`
    /// for each of the last frames sent (see ``WebRTCPeer/sentFrames``),
    /// `remoteAddress`: where the session's media goes (the peer's address as seen here, null before ICE),
    /// `layer`: a ladder's viewer's layer, frames per layer and changes (``layerSelection(ofViewer:)``);
    /// plus `accessUnitsPacketized` (``accessUnitsPacketized``) and refused offers.
    public func statisticsJSON() -> String {
        func quoted(_ text: String) -> String {
            var escaped = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": escaped += "\\\""
                case "\\": escaped += "\\\\"
                case _ where scalar.value < 0x20: escaped += "\\u00\(String(format2: UInt8(scalar.value)))"
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return escaped + "\""
        }
        let viewers = allViewers.map { peer -> String in
            let s = peer.sender.statistics
            let state: String
            switch peer.state {
            case .connecting: state = "connecting"
            case .connected: state = "connected"
            case .closed(let reason): state = "closed: " + reason
            }
            let sentFrames = peer.sentFrames.map {
                "[\($0.rtpTimestamp),\(Int64(($0.wallSeconds * 1_000_000).rounded()))]"
            }
            let refusals = peer.refusals.map { "\(quoted($0.key)):\($0.value)" }.joined(separator: ",")
            return "{\"id\":\(quoted(peer.id)),\"state\":\(quoted(state)),\"ssrc\":\(s.ssrc),"
                + "\"payloadType\":\(peer.video.payloadType),"
                + "\"mimeType\":\"video/\(peer.video.codec == .hevc ? "H265" : "H264")\",\"packetsSent\":\(s.packetsSent),"
                + "\"bytesSent\":\(s.bytesSent),\"framesSent\":\(s.framesSent),\"keyFramesSent\":\(s.keyFramesSent),"
                + "\"framesTakenShared\":\(s.framesTakenShared),"
                + "\"retransmittedPacketsSent\":\(s.retransmittedPacketsSent),\"nackCount\":\(s.nackCount),"
                + "\"pliCount\":\(s.pliCount),\"firCount\":\(s.firCount),"
                + "\"keyframeRequestsForwarded\":\(s.keyframeRequestsForwarded),"
                + "\"remotePacketsLost\":\(peer.sender.remoteStatistics.packetsLost),"
                + "\"receptionReports\":\(peer.sender.remoteStatistics.reportsReceived),"
                + "\"rtcpPacketsReceived\":\(peer.rtcpPacketsReceived),"
                + "\"packetsDroppedOnPurpose\":\(peer.packetsDroppedOnPurpose),"
                + "\"droppedSequenceNumbers\":[\(peer.droppedSequenceNumbers.map(String.init).joined(separator: ","))],"
                + "\"nackedSequenceNumbers\":[\(peer.nackedSequenceNumbers.map(String.init).joined(separator: ","))],"
                + "\"sentFrames\":[\(sentFrames.joined(separator: ","))],"
                + "\"firstSequenceNumber\":\(peer.sender.configuration.packetizer.initialSequenceNumber),"
                + "\"nackedPacketsUnavailable\":\(peer.sender.statistics.nackedPacketsUnavailable),"
                + "\"direction\":\(peer.video.isIncoming ? "\"receive\"" : "\"send\""),"
                + Self.congestionJSON(of: peer) + layerJSON(ofViewer: peer.id)
                + (peer.receiver.map { receiver in
                    let r = receiver.statistics
                    return "\"samplesReceived\":\(peer.samplesReceived),\"lossEvents\":\(peer.lossEvents),"
                        + "\"packetsReceived\":\(r.packetsReceived),\"packetsLost\":\(r.packetsLost),"
                        + "\"nackSent\":\(r.nackCount),\"pliSent\":\(r.pliCount),"
                        + "\"transportFeedbackSent\":\(r.transportFeedbackCount),"
                } ?? "")
                + "\"remoteAddress\":\(peer.mediaDestination.map { quoted("\($0)") } ?? "null"),"
                + "\"iceRequestsAnswered\":\(peer.ice.requestsAnswered),\"refused\":{\(refusals)}}"
        }
        return "{\"viewers\":[\(viewers.joined(separator: ","))],\"strayDatagrams\":\(strayDatagrams),"
            + "\"accessUnitsPacketized\":\(accessUnitsPacketized),"
            + sharedRateJSON()
            + "\"refusedOffers\":[\(refusedOffers.map(quoted).joined(separator: ","))]}"
    }
}
