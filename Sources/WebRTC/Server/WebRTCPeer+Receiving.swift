// What a receiving controlling peer (a WHEP viewer of a server's stream) needs from the outside: the video read from
// the server's answer, and the SRTP keys its DTLS handshake exported, for a receiver that checks SRTP itself.
import MediaCore

extension NegotiatedVideo {
    /// The video a WHEP viewer receives, read from the server's `answer`: the first video section's first payload
    /// type (H.264 or H.265) and the RTX payload type that follows it, the section's ICE credentials and sha-256
    /// fingerprint; NACK, PLI and FIR; no header extensions. ``isIncoming`` is true.
    ///
    /// - Throws: `.unsupported` naming what the answer lacks (a video section, a payload type that is H.264 or
    ///   H.265, ICE credentials, a sha-256 fingerprint).
    public init(receivingFrom answer: SessionOffer) throws(MediaError) {
        guard let index = answer.sections.firstIndex(where: { $0.kind == "video" && $0.port != 0 }) else {
            throw .unsupported("the answer has no video section")
        }
        let section = answer.sections[index]
        guard let payloadType = section.formats.first.flatMap({ Int($0) }),
            let name = section.rtpmaps[payloadType]?.name.uppercased(), name == "H264" || name == "H265"
        else { throw .unsupported("the answer's video section does not start with an H264 or H265 payload type") }
        guard let ufrag = answer.usernameFragment(section), let pwd = answer.password(section) else {
            throw .unsupported("the answer has no ice-ufrag/ice-pwd")
        }
        guard let fingerprint = answer.fingerprint(section), fingerprint.algorithm == "sha-256",
            fingerprint.value.count == 32
        else { throw .unsupported("the answer has no sha-256 a=fingerprint") }
        let retransmission = section.formats.dropFirst().first.flatMap { Int($0) }.flatMap { type -> UInt8? in
            section.rtpmaps[type]?.name.lowercased() == "rtx" ? UInt8(type) : nil
        }
        self.init(
            sectionIndex: index, mid: section.mid ?? "0", payloadType: UInt8(payloadType),
            retransmissionPayloadType: retransmission, offeredProfileLevelID: "", nack: true,
            pictureLossIndication: true, fullIntraRequest: true, reducedSizeRTCP: true, playoutDelayID: nil,
            absoluteCaptureTimeID: nil, remoteUsernameFragment: ufrag, remotePassword: pwd,
            remoteFingerprint: fingerprint.value, isIncoming: true, transportSequenceNumberID: nil,
            codec: name == "H265" ? .hevc : .h264)
    }
}

extension WebRTCPeer {
    /// The SRTP master keys and salts the DTLS handshake exported (RFC 5764 4.2), once it completed; nil before.
    public var keyingMaterial: SRTPKeyingMaterial? { dtls.keyingMaterial }
}
