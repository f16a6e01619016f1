// RFC 6381 codec strings of a description.

/// RFC 6381 `codecs` parameters: what an HLS `CODECS` attribute, a DASH
/// `@codecs`, `MediaSource.isTypeSupported` and WebCodecs' `VideoDecoder`
/// take to name a stream's codec, profile and level.
///
/// ```swift
/// description.codecString                           // "avc1.64001f", "hvc1.1.6.L93.B0"
/// description.codecString(parameterSetsInBand: true) // "avc3.64001f", "hev1.1.6.L93.B0"
/// ```
///
/// The string is made from the description's first SPS each time it is asked
/// for (one SPS parse); it is not stored.
extension FormatDescription {
    /// The codec string for an `avc1` / `hvc1` sample entry: parameter sets in
    /// the description only.
    public var codecString: String { codecString(parameterSetsInBand: false) }

    /// The codec string with the sample entry chosen: `avc3` / `hev1` when the
    /// samples may carry parameter sets in band (an Annex-B stream, a WebCodecs
    /// decoder configured without a description), `avc1` / `hvc1` otherwise.
    public func codecString(parameterSetsInBand: Bool) -> String {
        switch codec {
        case .h264:
            let sps = parameterSets.first { !$0.isEmpty && H264NALUnitHeader($0[0]).type == .sps }
                .flatMap { try? H264SequenceParameterSet(nal: $0) }
            guard let sps else {
                // A description always holds a parsed SPS; the fallback is for form.
                return H264SequenceParameterSet.codecString(
                    profile_idc: profile, constraintFlags: 0, level_idc: level, parameterSetsInBand: parameterSetsInBand
                )
            }
            return sps.codecString(parameterSetsInBand: parameterSetsInBand)
        case .hevc:
            let sps = parameterSets.first { $0.count >= 2 && HEVCNALUnitHeader($0[0], $0[1]).type == .sps }
                .flatMap { try? HEVCSequenceParameterSet(nal: $0) }
            let entry = parameterSetsInBand ? "hev1" : "hvc1"
            guard let sps else { return "\(entry).\(profile).0.L\(level)" }
            return sps.profileTierLevel.codecString(sampleEntry: entry)
        }
    }
}

extension H264SequenceParameterSet {
    /// `avc1.PPCCLL` (RFC 6381 3.3, ISO/IEC 14496-15 Annex E): `profile_idc`,
    /// the constraint-flags byte and `level_idc` as two lowercase hex digits
    /// each, as FFmpeg's HLS muxer writes them; `avc3.` when parameter sets
    /// travel in band.
    public func codecString(parameterSetsInBand: Bool = false) -> String {
        Self.codecString(
            profile_idc: profile_idc, constraintFlags: constraintFlags, level_idc: level_idc,
            parameterSetsInBand: parameterSetsInBand)
    }

    static func codecString(profile_idc: Int, constraintFlags: Int, level_idc: Int, parameterSetsInBand: Bool)
        -> String
    {
        let entry = parameterSetsInBand ? "avc3" : "avc1"
        return entry + "." + hexByte(profile_idc) + hexByte(constraintFlags) + hexByte(level_idc)
    }
}

extension HEVCProfileTierLevel {
    /// `hvc1.` / `hev1.` codec string (ISO/IEC 14496-15 E.3), fields joined by
    /// '.':
    /// 1. `general_profile_space` as "", "A", "B" or "C" (0…3) followed by
    ///    `general_profile_idc` in decimal;
    /// 2. the 32 `general_profile_compatibility_flag`s in reverse bit order
    ///    (flag j in bit j) as hex without leading zeros;
    /// 3. "L" (Main tier) or "H" (High tier) and `general_level_idc` in decimal;
    /// 4. the six bytes of constraint flags (`general_progressive_source_flag`
    ///    first) as hex, one field each, trailing zero bytes left out.
    ///
    /// Hex digits are uppercase, as in the standard's example `hev1.1.6.L93.B0`.
    public func codecString(sampleEntry: String = "hvc1") -> String {
        let space = ["", "A", "B", "C"][general_profile_space & 3]
        var fields = [
            sampleEntry,
            space + String(general_profile_idc),
            String(general_profile_compatibility_flags.bitReversed, radix: 16, uppercase: true),
            (general_tier_flag == 0 ? "L" : "H") + String(general_level_idc),
        ]
        var constraintBytes = (0..<6).map {
            UInt8(truncatingIfNeeded: general_constraint_indicator_flags >> (40 - 8 * $0))
        }
        while constraintBytes.last == 0 { constraintBytes.removeLast() }
        fields += constraintBytes.map { String($0, radix: 16, uppercase: true) }
        return fields.joined(separator: ".")
    }
}

extension UInt32 {
    /// The bits in the opposite order: bit 0 becomes bit 31.
    fileprivate var bitReversed: UInt32 {
        var value = self
        var result: UInt32 = 0
        for _ in 0..<32 {
            result = result << 1 | value & 1
            value >>= 1
        }
        return result
    }
}

/// Two lowercase hex digits.
private func hexByte(_ value: Int) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[(value >> 4) & 15], digits[value & 15]])
}
