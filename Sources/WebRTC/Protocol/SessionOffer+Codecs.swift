// The video payload type an offer gets: its H.264 (RFC 6184) and H.265 (RFC 7798)
// payload types matched against what the source can send, in the offerer's order.
import MediaCore

extension SessionOffer {
    /// One payload type a stream can go as: its codec, how well it fits
    /// (higher is better), the offered profile-level-id (H.264) or
    /// parameters (HEVC).
    struct PayloadChoice {
        var codec: CodecType
        var payloadType: Int
        var rank: Int
        var profileLevelID = ""
        var hevc: VideoStreamFormat?
    }

    /// Picks the first video section and, in it, the payload type for a
    /// stream of `format`: an H.264 stream as ``negotiateVideo(streamProfileLevelID:)``
    /// does; an HEVC stream only as H.265 (no re-encoding) with
    /// `tx-mode=SRST` (or none) and no `sprop-max-don-diff` above 0, the same
    /// `profile-id` first (a Main stream also goes to a Main 10 payload
    /// type, whose decoders decode Main), then a `tier-flag` and `level-id`
    /// at least the stream's, then the offerer's order.
    ///
    /// - Throws: as ``negotiateVideo(streamProfileLevelID:)``; for an offer
    ///   without a payload type the stream can go as, `.unsupported` naming
    ///   the stream's codec and the codecs offered.
    public func negotiateVideo(sending format: VideoStreamFormat) throws(MediaError) -> NegotiatedVideo {
        try negotiate(sources: [format])
    }

    /// The usable payload type of `section` for the `sources` (nil: a
    /// publisher's offer, any H.264 or H.265 payload type): the codec whose
    /// first usable payload type comes first in the offer, and of that
    /// codec the best fit, the first of equals.
    func choosePayloadType(in section: MediaSection, sources: [VideoStreamFormat]?) throws(MediaError)
        -> PayloadChoice
    {
        var best: [CodecType: PayloadChoice] = [:]
        var order: [CodecType] = []
        for format in section.formats {
            guard let payloadType = Int(format), let map = section.rtpmaps[payloadType], map.clockRate == 90000
            else { continue }
            let parameters = section.formatParameters[payloadType] ?? [:]
            let choice: PayloadChoice?
            switch map.name.uppercased() {
            case "H264":
                let source = sources?.lazy.compactMap { if case .h264(let b) = $0 { b } else { nil } }.first
                guard sources == nil || source != nil else { continue }
                choice = Self.h264Choice(payloadType, parameters, stream: source)
            case "H265":
                let source = sources?.first { $0.codec == .hevc }
                guard sources == nil || source != nil else { continue }
                choice = Self.hevcChoice(payloadType, parameters, stream: source)
            default: continue
            }
            guard let choice else { continue }
            if !order.contains(choice.codec) { order.append(choice.codec) }
            if best[choice.codec].map({ choice.rank > $0.rank }) ?? true { best[choice.codec] = choice }
        }
        if let codec = order.first, let choice = best[codec] { return choice }
        throw refusal(section, sources: sources)
    }

    /// The reason no payload type fits: H.264-only messages as before HEVC
    /// was offered; otherwise the stream's codec and the codecs offered.
    private func refusal(_ section: MediaSection, sources: [VideoStreamFormat]?) -> MediaError {
        let offered = section.formats.compactMap { format -> String? in
            guard let payloadType = Int(format), let name = section.rtpmaps[payloadType]?.name,
                name.lowercased() != "rtx", name.lowercased() != "red", name.lowercased() != "ulpfec"
            else { return nil }
            return "\(name) (\(payloadType))"
        }
        let list = offered.isEmpty ? "none" : offered.joined(separator: ", ")
        guard let sources else {
            return .unsupported(
                "the offer has no H.264 payload type with packetization-mode=1 and no H.265 payload type with "
                    + "tx-mode=SRST; it offers \(list)")
        }
        if sources.count == 1, case .h264(let ours) = sources[0] {
            return .unsupported(
                "the offer has no H.264 payload type with packetization-mode=1 for profile_idc \(ours[0]) "
                    + "(constraint flags 0x\(String(ours[1], radix: 16)))")
        }
        let names = sources.map(\.description).joined(separator: " or ")
        return .unsupported("the stream is \(names) and the offer has no payload type for it; it offers \(list)")
    }

    /// An H.264 payload type with packetization-mode=1 for a stream of
    /// `stream`'s profile bytes (nil: a publisher's, any profile): the same
    /// profile_idc and constraint byte rank 3, the same profile_idc 2; a
    /// constrained-baseline stream fits any at 1.
    private static func h264Choice(_ payloadType: Int, _ parameters: [String: String], stream: [UInt8]?)
        -> PayloadChoice?
    {
        guard parameters["packetization-mode"] == "1" else { return nil }
        let profileText = parameters["profile-level-id"] ?? "42001f"
        guard profileText.count == 6, let value = UInt32(profileText, radix: 16) else { return nil }
        let profile = UInt8(value >> 16)
        let constraints = UInt8((value >> 8) & 0xFF)
        let rank: Int
        if let ours = stream, profile == ours[0], constraints == ours[1] {
            rank = 3
        } else if let ours = stream, profile == ours[0] {
            rank = 2
        } else if stream.map({ $0[0] == 66 && $0[1] & 0x40 != 0 }) ?? true {
            rank = 1
        } else {
            return nil
        }
        return PayloadChoice(codec: .h264, payloadType: payloadType, rank: rank, profileLevelID: profileText)
    }

    /// An H.265 payload type (RFC 7798 7.1; absent parameters take its
    /// defaults: profile-id 1, tier-flag 0, level-id 93, tx-mode SRST) for
    /// `stream` (nil: a publisher's, any profile).
    private static func hevcChoice(_ payloadType: Int, _ parameters: [String: String], stream: VideoStreamFormat?)
        -> PayloadChoice?
    {
        guard (parameters["tx-mode"] ?? "SRST").uppercased() == "SRST",
            (parameters["sprop-max-don-diff"] ?? "0") == "0",
            let profile = Int(parameters["profile-id"] ?? "1"), let tier = Int(parameters["tier-flag"] ?? "0"),
            let level = Int(parameters["level-id"] ?? "93"), (0...31).contains(profile), (0...1).contains(tier),
            (0...255).contains(level)
        else { return nil }
        let offered = VideoStreamFormat.hevc(profileID: profile, tierFlag: tier, levelID: level)
        var rank = 1
        if case .hevc(let ourProfile, let ourTier, let ourLevel) = stream {
            let fitsLevel = tier > ourTier || (tier == ourTier && level >= ourLevel)
            if profile == ourProfile {
                rank = fitsLevel ? 4 : 3
            } else if ourProfile == 1 && profile == 2 {
                rank = fitsLevel ? 2 : 1
            } else {
                return nil
            }
        }
        return PayloadChoice(codec: .hevc, payloadType: payloadType, rank: rank, hevc: offered)
    }
}
