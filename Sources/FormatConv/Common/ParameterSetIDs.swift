/// Which parameter-set ids a stream has delivered and what each PPS refers
/// to, so that a slice whose sets have not arrived can be reported instead of
/// handed to a decoder (H.264 7.4.2.1.1 / 7.4.2.2, H.265 7.4.3.2 / 7.4.3.3).
struct ParameterSetIDs: Sendable {
    let codec: CodecType
    /// SPS ids seen.
    private var spsIds: Set<Int> = []
    /// PPS id → the SPS id it refers to.
    private var ppsToSPS: [Int: Int] = [:]

    init(codec: CodecType) { self.codec = codec }

    /// Records a parameter set NAL unit (header included) that the store
    /// accepted. H.264 SPS: `seq_parameter_set_id` after `profile_idc`, the
    /// constraint flags and `level_idc` (7.3.2.1.1). H.264 PPS and HEVC PPS:
    /// the PPS id, then the SPS id (7.3.2.2, H.265 7.3.2.3.1). HEVC SPS:
    /// `sps_seq_parameter_set_id` after `profile_tier_level` (7.3.2.2.1).
    mutating func update(_ nal: [UInt8], kind: NALUnitKind) {
        let header = codec.nalHeaderSize
        guard nal.count > header else { return }
        var reader = BitReader(rbsp: RBSP.unescape(nal[header...]), context: "parameter set")
        switch (codec, kind.type) {
        case (.h264, 7):
            reader.skip(24)
            let id = reader.ue()
            if !reader.overrun { spsIds.insert(id) }
        case (.h264, 8), (.hevc, 34):
            let pps = reader.ue()
            let sps = reader.ue()
            if !reader.overrun { ppsToSPS[pps] = sps }
        case (.hevc, 33):
            reader.skip(4)
            let maxSubLayersMinus1 = reader.u(3)
            reader.skip(1)
            Self.skipProfileTierLevel(&reader, maxSubLayersMinus1: maxSubLayersMinus1)
            let id = reader.ue()
            if !reader.overrun { spsIds.insert(id) }
        default:
            break
        }
    }

    /// H.265 7.3.3 `profile_tier_level(1, maxNumSubLayersMinus1)`.
    private static func skipProfileTierLevel(_ reader: inout BitReader, maxSubLayersMinus1: Int) {
        reader.skip(88)  // general profile space … general_inbld/reserved flag
        reader.skip(8)  // general_level_idc
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<maxSubLayersMinus1 {
            profilePresent.append(reader.flag())
            levelPresent.append(reader.flag())
        }
        if maxSubLayersMinus1 > 0 {
            for _ in maxSubLayersMinus1..<8 { reader.skip(2) }  // reserved_zero_2bits
        }
        for index in 0..<maxSubLayersMinus1 {
            if profilePresent[index] { reader.skip(88) }
            if levelPresent[index] { reader.skip(8) }
        }
    }

    /// Nil when the PPS `ppsId` and the SPS it names have arrived; otherwise
    /// which one is missing, in words. An unreadable id (−1) is not checked.
    func missingSets(forPPS ppsId: Int) -> String? {
        guard ppsId >= 0 else { return spsIds.isEmpty || ppsToSPS.isEmpty ? "parameter sets" : nil }
        guard let spsId = ppsToSPS[ppsId] else { return "PPS id \(ppsId)" }
        guard spsIds.contains(spsId) else { return "SPS id \(spsId) (used by PPS id \(ppsId))" }
        return nil
    }
}
