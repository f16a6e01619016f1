import MediaCore
import RTPPayload

/// What an offer and our H.264 or HEVC stream agreed on for the one video section.
public struct NegotiatedVideo: Sendable, Hashable {
    /// Index of the video section in the offer.
    public var sectionIndex: Int
    /// The section's mid, `"0"` when the offer gave none; the answer's BUNDLE group names it.
    public var mid: String
    /// The H.264 or H.265 payload type chosen from the offer.
    public var payloadType: UInt8
    /// The offer's RTX payload type for it (`apt=`), if any.
    public var retransmissionPayloadType: UInt8?
    /// The offered `profile-level-id` whose profile matches our stream (H.264; empty for HEVC).
    public var offeredProfileLevelID: String
    /// Feedback the offer lists for the payload type.
    public var nack: Bool
    /// Whether the offer lists `nack pli` (picture loss indication).
    public var pictureLossIndication: Bool
    /// Whether the offer lists `ccm fir` (full intra request).
    public var fullIntraRequest: Bool
    /// Whether the offer has `a=rtcp-rsize` (reduced-size RTCP).
    public var reducedSizeRTCP: Bool
    /// extmap ids the offer gave the playout-delay and abs-capture-time
    /// extensions (one-byte ids 1–14 only).
    public var playoutDelayID: UInt8?
    /// The extmap id the offer gave abs-capture-time; nil when it did not offer it.
    public var absoluteCaptureTimeID: UInt8?
    /// The peer's ice-ufrag, which its connectivity checks carry.
    public var remoteUsernameFragment: String
    /// The peer's ice-pwd, the key its checks are signed with.
    public var remotePassword: String
    /// The sha-256 fingerprint of the peer's certificate.
    public var remoteFingerprint: [UInt8]
    /// True when the peer sends and we receive (WHIP).
    public var isIncoming = false
    /// The extmap id (1–14) of the transport-wide sequence number extension, when the offer gave it and lists
    /// `transport-cc` feedback for the payload type: the sender stamps every packet with it and the receiver
    /// sends transport-cc feedback.
    public var transportSequenceNumberID: UInt8?
    /// Whether the offer lists `goog-remb` feedback (REMB) for the payload type.
    public var receiverEstimatedMaximumBitrate = false
    /// The payload type's codec: H.264 (RFC 6184) or HEVC (RFC 7798).
    public var codec = CodecType.h264
    /// For an H.265 payload type: its `profile-id`, `tier-flag` and `level-id`
    /// as offered (RFC 7798's defaults where absent); nil for H.264.
    public var offeredHEVCFormat: VideoStreamFormat?
}

/// Our side of an answer: credentials, certificate fingerprint, candidate
/// and SSRCs.
public struct AnswerParameters: Sendable, Hashable {
    /// Our ice-ufrag.
    public var usernameFragment: String
    /// Our ice-pwd.
    public var password: String
    /// SHA-256 of our DTLS certificate.
    public var fingerprint: [UInt8]
    /// The address of the `c=` and `o=` lines and, unless ``candidates`` says otherwise, of the one host
    /// candidate: a numeric IPv4 or IPv6 address.
    public var candidateHost: String
    /// The `m=` line's port (and the one candidate's, unless ``candidates`` says otherwise).
    public var candidatePort: Int
    /// The host candidates the answer lists, in order; by default one, at ``candidateHost`` and
    /// ``candidatePort`` with priority 2130706431 (local preference 65535).
    public var candidates: [HostCandidate]
    /// The SSRC our media is sent with.
    public var ssrc: UInt32
    /// The SSRC of our RTX stream; nil sends no RTX.
    public var retransmissionSSRC: UInt32?
    /// The SDES CNAME the answer lists for our SSRCs.
    public var cname: String
    /// The `o=` line's session id.
    public var sessionID: UInt64

    /// Creates our side of an answer; the session id is drawn at random unless given.
    public init(
        usernameFragment: String, password: String, fingerprint: [UInt8], candidateHost: String, candidatePort: Int,
        ssrc: UInt32, retransmissionSSRC: UInt32?, cname: String = "codecsessions",
        sessionID: UInt64 = UInt64.random(in: 1...(1 << 62))
    ) {
        self.usernameFragment = usernameFragment
        self.password = password
        self.fingerprint = fingerprint
        self.candidateHost = candidateHost
        self.candidatePort = candidatePort
        candidates = [HostCandidate(host: candidateHost, port: candidatePort)]
        self.ssrc = ssrc
        self.retransmissionSSRC = retransmissionSSRC
        self.cname = cname
        self.sessionID = sessionID
    }
}

/// The URIs of the header extensions we send (RFC 8285 extmap).
public enum HeaderExtensionURI {
    /// The playout-delay extension's URI.
    public static let playoutDelay = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"
    /// The abs-capture-time extension's URI.
    public static let absoluteCaptureTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time"
}

extension SessionOffer {
    /// Picks the first video section and, in it, the H.264 payload type
    /// (packetization-mode=1) whose profile matches `streamProfileLevelID`
    /// (the three bytes after the SPS NAL header: profile_idc, the
    /// constraint flags, level_idc): the same profile_idc and constraint
    /// byte first, then the same profile_idc; a constrained-baseline stream
    /// also fits any H.264 payload type.
    ///
    /// - Throws: `.unsupported` with the reason the offer is refused: no
    ///   video section, no fingerprint or not sha-256, no ICE credentials,
    ///   `a=setup:passive` (we are the DTLS server), no rtcp-mux, a video
    ///   section that does not receive, no usable H.264 payload type.
    public func negotiateVideo(streamProfileLevelID: [UInt8]) throws(MediaError) -> NegotiatedVideo {
        precondition(streamProfileLevelID.count == 3, "profile-level-id has three bytes")
        return try negotiate(sources: [.h264(profileLevelID: streamProfileLevelID)])
    }

    /// For an offer that sends video to us (WHIP): the first H.264 payload
    /// type with packetization-mode=1 or H.265 payload type with
    /// `tx-mode=SRST` in the offer's order, any profile (the decoder takes
    /// what comes), with its RTX; the section must send (`sendonly` or
    /// `sendrecv`). Throws as ``negotiateVideo(streamProfileLevelID:)``.
    public func negotiateIncomingVideo() throws(MediaError) -> NegotiatedVideo {
        var video = try negotiate(sources: nil)
        video.isIncoming = true
        return video
    }

    func negotiate(sources: [VideoStreamFormat]?) throws(MediaError) -> NegotiatedVideo {
        let incoming = sources == nil
        guard let index = sections.firstIndex(where: { $0.kind == "video" && $0.port != 0 }) else {
            throw .unsupported("the offer has no video section")
        }
        let section = sections[index]
        guard section.transportProtocol.uppercased().hasPrefix("UDP/TLS/RTP/SAVP") else {
            throw .unsupported("the video section's protocol is \(section.transportProtocol), not UDP/TLS/RTP/SAVPF")
        }
        guard let fingerprint = fingerprint(section) else { throw .unsupported("the offer has no a=fingerprint") }
        guard fingerprint.algorithm == "sha-256", fingerprint.value.count == 32 else {
            throw .unsupported("the offer's fingerprint is \(fingerprint.algorithm), not sha-256")
        }
        guard let ufrag = usernameFragment(section), let pwd = password(section), !ufrag.isEmpty, pwd.count >= 22
        else { throw .unsupported("the offer has no ice-ufrag/ice-pwd (ice-pwd needs 22 characters)") }
        let setup = setup(section) ?? "actpass"
        guard setup == "actpass" || setup == "active" else {
            throw .unsupported("the offer says a=setup:\(setup); this endpoint is the DTLS server (passive)")
        }
        guard section.rtcpMux else { throw .unsupported("the offer has no a=rtcp-mux") }
        if incoming {
            guard section.direction == "sendonly" || section.direction == "sendrecv" else {
                throw .unsupported("the video section is \(section.direction): it does not send")
            }
        } else {
            guard section.direction == "recvonly" || section.direction == "sendrecv" else {
                throw .unsupported("the video section is \(section.direction): it does not receive")
            }
        }
        let chosen = try choosePayloadType(in: section, sources: sources)
        let best = (payloadType: chosen.payloadType, profile: chosen.profileLevelID)
        var rtx: UInt8?
        for format in section.formats {
            guard let payloadType = Int(format), section.rtpmaps[payloadType]?.name.lowercased() == "rtx",
                section.formatParameters[payloadType]?["apt"] == String(best.payloadType)
            else { continue }
            rtx = UInt8(payloadType)
            break
        }
        let feedback = section.feedback[best.payloadType] ?? []
        let extensionID = { (uri: String) -> UInt8? in
            section.extensions.first { $0.uri == uri && (1...14).contains($0.id) }.map { UInt8($0.id) }
        }
        return NegotiatedVideo(
            sectionIndex: index, mid: section.mid ?? "0", payloadType: UInt8(best.payloadType),
            retransmissionPayloadType: rtx, offeredProfileLevelID: best.profile, nack: feedback.contains("nack"),
            pictureLossIndication: feedback.contains("nack pli"), fullIntraRequest: feedback.contains("ccm fir"),
            reducedSizeRTCP: section.rtcpReducedSize, playoutDelayID: extensionID(HeaderExtensionURI.playoutDelay),
            absoluteCaptureTimeID: extensionID(HeaderExtensionURI.absoluteCaptureTime), remoteUsernameFragment: ufrag,
            remotePassword: pwd, remoteFingerprint: fingerprint.value,
            transportSequenceNumberID: feedback.contains("transport-cc")
                ? extensionID(TransportWideSequenceNumber.extensionURI) : nil,
            receiverEstimatedMaximumBitrate: feedback.contains("goog-remb"), codec: chosen.codec,
            offeredHEVCFormat: chosen.hevc)
    }

    /// The answer text (CR LF lines): every offered section answered in
    /// order, the video one accepted as `sendonly` with ice-lite,
    /// setup:passive, the chosen payload type (and RTX), nack, nack pli,
    /// ccm fir, transport-cc (with its extmap) when offered and, beside it,
    /// goog-remb (to a viewer) when offered, the extensions it takes, SSRCs and the host candidates
    /// (``AnswerParameters/candidates``);
    /// other sections rejected (port 0) and left out of BUNDLE.
    public func answer(_ video: NegotiatedVideo, parameters: AnswerParameters, streamProfileLevelID: [UInt8]) -> String
    {
        answer(video, parameters: parameters, stream: .h264(profileLevelID: streamProfileLevelID))
    }

    /// The answer as ``answer(_:parameters:streamProfileLevelID:)`` writes it, for a stream of
    /// `stream`: an H.265 payload type gets `a=rtpmap:PT H265/90000` and
    /// `a=fmtp:PT level-id=…;profile-id=…;tier-flag=…;tx-mode=SRST` with
    /// the stream's parameters (sending) or the offer's (receiving).
    public func answer(_ video: NegotiatedVideo, parameters: AnswerParameters, stream: VideoStreamFormat) -> String {
        let addressType = parameters.candidateHost.contains(":") ? "IP6" : "IP4"
        var lines = [
            "v=0", "o=- \(parameters.sessionID) 2 IN \(addressType) \(parameters.candidateHost)", "s=-", "t=0 0",
            "a=group:BUNDLE \(video.mid)", "a=ice-lite", "a=msid-semantic: WMS codecsessions",
        ]
        let formatParameters: String
        if video.codec == .hevc {
            let sent = stream.codec == .hevc ? stream : video.offeredHEVCFormat
            formatParameters = ((video.isIncoming ? video.offeredHEVCFormat : sent) ?? stream).formatParameters
        } else {
            var level = "1f"
            if case .h264(let bytes) = stream { level = String(format2: bytes[2]) }
            let profile =
                video.isIncoming ? video.offeredProfileLevelID : String(video.offeredProfileLevelID.prefix(4)) + level
            formatParameters = "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=\(profile)"
        }
        for (index, section) in sections.enumerated() {
            guard index == video.sectionIndex else {
                lines.append("m=\(section.kind) 0 \(section.transportProtocol) \(section.formats.first ?? "0")")
                lines.append("c=IN IP4 0.0.0.0")
                if let mid = section.mid { lines.append("a=mid:\(mid)") }
                lines.append("a=inactive")
                continue
            }
            let pt = video.payloadType
            var formats = "\(pt)"
            if let rtx = video.retransmissionPayloadType { formats += " \(rtx)" }
            lines += [
                "m=video \(parameters.candidatePort) UDP/TLS/RTP/SAVPF \(formats)",
                "c=IN \(addressType) \(parameters.candidateHost)", "a=mid:\(video.mid)",
                video.isIncoming ? "a=recvonly" : "a=sendonly",
                "a=rtcp-mux",
            ]
            if video.reducedSizeRTCP { lines.append("a=rtcp-rsize") }
            lines += [
                "a=ice-ufrag:\(parameters.usernameFragment)", "a=ice-pwd:\(parameters.password)",
                "a=fingerprint:sha-256 "
                    + parameters.fingerprint.map { String(format2: $0).uppercased() }.joined(
                        separator: ":"),
                "a=setup:passive",
            ]
            if let id = video.playoutDelayID, !video.isIncoming {
                lines.append("a=extmap:\(id) \(HeaderExtensionURI.playoutDelay)")
            }
            if let id = video.absoluteCaptureTimeID, !video.isIncoming {
                lines.append("a=extmap:\(id) \(HeaderExtensionURI.absoluteCaptureTime)")
            }
            if let id = video.transportSequenceNumberID {
                lines.append("a=extmap:\(id) \(TransportWideSequenceNumber.extensionURI)")
            }
            lines += [
                "a=rtpmap:\(pt) \(video.codec == .hevc ? "H265" : "H264")/90000", "a=rtcp-fb:\(pt) nack",
                "a=rtcp-fb:\(pt) nack pli",
                "a=rtcp-fb:\(pt) ccm fir",
            ]
            if video.transportSequenceNumberID != nil { lines.append("a=rtcp-fb:\(pt) transport-cc") }
            // REMB comes from a viewer (we send none), and is answered only beside transport-cc: answers to offers
            // without transport-cc stay as they were.
            if video.receiverEstimatedMaximumBitrate && video.transportSequenceNumberID != nil && !video.isIncoming {
                lines.append("a=rtcp-fb:\(pt) goog-remb")
            }
            lines.append("a=fmtp:\(pt) \(formatParameters)")
            if let rtx = video.retransmissionPayloadType {
                lines += ["a=rtpmap:\(rtx) rtx/90000", "a=fmtp:\(rtx) apt=\(pt)"]
            }
            if video.isIncoming {
                // We send no media: no SSRCs to announce.
            } else if let rtxSSRC = parameters.retransmissionSSRC, video.retransmissionPayloadType != nil {
                lines.append("a=ssrc-group:FID \(parameters.ssrc) \(rtxSSRC)")
                lines.append("a=ssrc:\(parameters.ssrc) cname:\(parameters.cname)")
                lines.append("a=ssrc:\(rtxSSRC) cname:\(parameters.cname)")
            } else {
                lines.append("a=ssrc:\(parameters.ssrc) cname:\(parameters.cname)")
            }
            if !video.isIncoming { lines.append("a=msid:codecsessions video") }
            lines += parameters.candidates.map { "a=\($0)" } + ["a=end-of-candidates"]
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

extension String {
    /// Two lowercase hex digits.
    init(format2 byte: UInt8) {
        let digits = Array("0123456789abcdef")
        self = String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
