/// The leading fields of an H.264 picture parameter set (H.264 7.3.2.2):
/// its own id and the id of the SPS it refers to.
public struct H264PictureParameterSetIDs: Sendable, Hashable {
    /// `pic_parameter_set_id` (H.264 7.4.2.2).
    public var pic_parameter_set_id: Int
    /// `seq_parameter_set_id` (H.264 7.4.2.2, 7.4.2.1.2).
    public var seq_parameter_set_id: Int

    /// Parses the ids of a PPS NAL unit (header byte included, EPBs kept).
    public init(nal: some Collection<UInt8>) throws(MediaError) {
        let bytes = Array(nal)
        guard let header = bytes.first, header & 0x80 == 0, header & 0x1F == 8 else {
            throw MediaError.invalidData("H.264 PPS: the NAL unit is not a picture parameter set (type 8)")
        }
        var r = BitReader(rbsp: RBSP.unescape(bytes.dropFirst().prefix(16)), context: "H.264 PPS")
        pic_parameter_set_id = try r.ue("pic_parameter_set_id", in: 0...255)
        seq_parameter_set_id = try r.ue("seq_parameter_set_id", in: 0...31)
    }
}

/// The id of an H.264 sequence parameter set extension (H.264 7.3.2.1.2).
public struct H264SequenceParameterSetExtensionID: Sendable, Hashable {
    /// `seq_parameter_set_id` (H.264 7.4.2.2, 7.4.2.1.2).
    public var seq_parameter_set_id: Int

    /// Parses the id of an SPS-extension NAL unit (type 13, header included).
    public init(nal: some Collection<UInt8>) throws(MediaError) {
        let bytes = Array(nal)
        guard let header = bytes.first, header & 0x80 == 0, header & 0x1F == 13 else {
            throw MediaError.invalidData("H.264 SPS extension: the NAL unit is not an SPS extension (type 13)")
        }
        var r = BitReader(rbsp: RBSP.unescape(bytes.dropFirst().prefix(16)), context: "H.264 SPS extension")
        seq_parameter_set_id = try r.ue("seq_parameter_set_id", in: 0...31)
    }
}
