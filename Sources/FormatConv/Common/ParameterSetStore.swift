/// Parameter sets of one stream tracked by id, as they arrive in band: the latest
/// SPS/PPS/SPS extension (H.264) or VPS/SPS/PPS (HEVC) for each id. Ids are
/// range-checked by the parsers, so the store never holds more than the spec
/// allows (H.264 7.4.2.1.1 / 7.4.2.2: 32 SPS, 256 PPS; H.265 7.4.3.1–7.4.3.3:
/// 16 VPS, 16 SPS, 64 PPS).
///
/// ```swift
/// var store = ParameterSetStore(codec: .h264)
/// for nal in parameterSetNALs {
///     if try store.update(nal: nal) { description = try store.makeDescription() }
/// }
/// ```
public struct ParameterSetStore: Sendable, Hashable {
    /// H.264 or HEVC.
    public let codec: CodecType
    /// The length-prefix size given to descriptions made from the store.
    public let nalUnitHeaderLength: Int

    private var videoParameterSets: [Int: [UInt8]] = [:]
    private var sequenceParameterSets: [Int: [UInt8]] = [:]
    private var sequenceParameterSetExtensions: [Int: [UInt8]] = [:]
    private var pictureParameterSets: [Int: [UInt8]] = [:]
    /// PPS id → SPS id; SPS id → VPS id (HEVC).
    private var spsOfPPS: [Int: Int] = [:]
    private var vpsOfSPS: [Int: Int] = [:]
    /// The SPS id most recently stored or changed.
    public private(set) var lastUpdatedSequenceParameterSetID: Int?

    /// An empty store for `codec`, describing samples with `nalUnitHeaderLength`-byte lengths.
    public init(codec: CodecType, nalUnitHeaderLength: Int = 4) {
        self.codec = codec
        self.nalUnitHeaderLength = nalUnitHeaderLength
    }

    /// Stores a parameter-set NAL unit (header included, emulation-prevention
    /// bytes kept) under its id, replacing an earlier one with the same id.
    /// H.264 accepts types 7, 8 and 13; HEVC types 32, 33 and 34.
    /// - Returns: true when the stored sets changed (a new id or different bytes).
    /// - Throws: `MediaError.invalidData` for a NAL unit of another type or a
    ///   malformed parameter set (an id out of range included); the store is then
    ///   unchanged.
    public mutating func update(nal: some Collection<UInt8>) throws(MediaError) -> Bool {
        let bytes = Array(nal)
        guard let header = bytes.first else {
            throw MediaError.invalidData("parameter set store: empty NAL unit")
        }
        switch codec {
        case .h264:
            switch header & 0x1F {
            case 7:
                let id = try H264SequenceParameterSet(nal: bytes).seq_parameter_set_id
                return store(bytes, id: id, in: \.sequenceParameterSets, isSPS: true)
            case 8:
                let ids = try H264PictureParameterSetIDs(nal: bytes)
                spsOfPPS[ids.pic_parameter_set_id] = ids.seq_parameter_set_id
                return store(bytes, id: ids.pic_parameter_set_id, in: \.pictureParameterSets)
            case 13:
                let id = try H264SequenceParameterSetExtensionID(nal: bytes).seq_parameter_set_id
                return store(bytes, id: id, in: \.sequenceParameterSetExtensions)
            default:
                throw MediaError.invalidData(
                    "parameter set store: H.264 nal_unit_type \(header & 0x1F) is not an SPS (7), PPS (8) or SPS "
                        + "extension (13)")
            }
        case .hevc:
            switch HEVCNALHeader.type(header) {
            case 32:
                let id = try HEVCVideoParameterSet(nal: bytes).vps_video_parameter_set_id
                return store(bytes, id: id, in: \.videoParameterSets)
            case 33:
                let sps = try HEVCSequenceParameterSet(nal: bytes)
                vpsOfSPS[sps.sps_seq_parameter_set_id] = sps.sps_video_parameter_set_id
                return store(bytes, id: sps.sps_seq_parameter_set_id, in: \.sequenceParameterSets, isSPS: true)
            case 34:
                let pps = try HEVCPictureParameterSet(nal: bytes)
                spsOfPPS[pps.pps_pic_parameter_set_id] = pps.pps_seq_parameter_set_id
                return store(bytes, id: pps.pps_pic_parameter_set_id, in: \.pictureParameterSets)
            default:
                throw MediaError.invalidData(
                    "parameter set store: HEVC nal_unit_type \(HEVCNALHeader.type(header)) is not a VPS (32), "
                        + "SPS (33) or PPS (34)")
            }
        }
    }

    private mutating func store(
        _ bytes: [UInt8], id: Int, in table: WritableKeyPath<ParameterSetStore, [Int: [UInt8]]>, isSPS: Bool = false
    ) -> Bool {
        let changed = self[keyPath: table][id] != bytes
        if changed {
            self[keyPath: table][id] = bytes
            if isSPS { lastUpdatedSequenceParameterSetID = id }
        }
        return changed
    }

    /// Forgets every stored set.
    public mutating func removeAll() {
        self = ParameterSetStore(codec: codec, nalUnitHeaderLength: nalUnitHeaderLength)
    }

    /// True when the store holds what a description needs: an SPS and a PPS
    /// (H.264), or a VPS, an SPS and a PPS (HEVC).
    public var isComplete: Bool {
        !sequenceParameterSets.isEmpty && !pictureParameterSets.isEmpty
            && (codec == .h264 || !videoParameterSets.isEmpty)
    }

    /// The stored VPS with this id (HEVC).
    public func videoParameterSet(id: Int) -> [UInt8]? { videoParameterSets[id] }
    /// The stored SPS with this id.
    public func sequenceParameterSet(id: Int) -> [UInt8]? { sequenceParameterSets[id] }
    /// The stored PPS with this id.
    public func pictureParameterSet(id: Int) -> [UInt8]? { pictureParameterSets[id] }
    /// The ids of the stored SPSs, ascending.
    public var sequenceParameterSetIDs: [Int] { sequenceParameterSets.keys.sorted() }
    /// The ids of the stored PPSs, ascending.
    public var pictureParameterSetIDs: [Int] { pictureParameterSets.keys.sorted() }
    /// The ids of the stored VPSs, ascending (HEVC).
    public var videoParameterSetIDs: [Int] { videoParameterSets.keys.sorted() }

    /// True when a slice referring to PPS `id` can be decoded: that PPS, the SPS it
    /// names and (HEVC) the VPS that SPS names are all stored.
    public func canDecodeSlice(referringToPictureParameterSet id: Int) -> Bool {
        guard pictureParameterSets[id] != nil, let spsID = spsOfPPS[id], sequenceParameterSets[spsID] != nil else {
            return false
        }
        if codec == .hevc {
            guard let vpsID = vpsOfSPS[spsID], videoParameterSets[vpsID] != nil else { return false }
        }
        return true
    }

    /// A description of the stored sets, each type in ascending id order, except
    /// that the active SPS (by default the one stored or changed last) comes first
    /// so that the description's size and profile are the active ones.
    /// - Throws: `.invalidData` when a required set is missing; `.invalidArgument`
    ///   when the sets do not fit the record (avcC counts at most 31 SPS and
    ///   255 PPS, one fewer than the spec allows in band).
    public func makeDescription(activeSequenceParameterSetID: Int? = nil) throws(MediaError) -> FormatDescription {
        guard isComplete else {
            throw MediaError.invalidData(
                "parameter set store: a description needs "
                    + (codec == .hevc ? "a VPS, an SPS and a PPS" : "an SPS and a PPS")
                    + "; holding \(videoParameterSets.count) VPS, \(sequenceParameterSets.count) SPS and "
                    + "\(pictureParameterSets.count) PPS")
        }
        let active = activeSequenceParameterSetID ?? lastUpdatedSequenceParameterSetID
        var spsIDs = sequenceParameterSetIDs
        if let active, let position = spsIDs.firstIndex(of: active) {
            spsIDs.remove(at: position)
            spsIDs.insert(active, at: 0)
        }
        let sps = spsIDs.compactMap { sequenceParameterSets[$0] }
        let pps = pictureParameterSetIDs.compactMap { pictureParameterSets[$0] }
        switch codec {
        case .h264:
            let extensions = sequenceParameterSetExtensions.keys.sorted().compactMap {
                sequenceParameterSetExtensions[$0]
            }
            return try FormatDescription(
                h264ParameterSets: sps + pps + extensions, nalUnitHeaderLength: nalUnitHeaderLength)
        case .hevc:
            let vps = videoParameterSetIDs.compactMap { videoParameterSets[$0] }
            return try FormatDescription(
                hevcParameterSets: vps + sps + pps, nalUnitHeaderLength: nalUnitHeaderLength)
        }
    }
}
