/// The one rule for resuming an H.264 or HEVC stream after a break (its
/// start, a loss, a seek, damaged data): wait for a random-access point
/// (an H.264 IDR or recovery point, an HEVC IRAP), then leave out that
/// point's leading pictures, which may refer to pictures before it that
/// were never decoded.
///
/// Which pictures are leading:
/// - H.264: after a random-access point that is not an IDR (a recovery
///   point in an open GOP) where decoding resumed, the pictures presented
///   before it (H.264 D.2.8: pictures that precede the recovery point in
///   output order are not guaranteed to be correct).
/// - HEVC: the RASL pictures (types 8 and 9) after a CRA where decoding
///   resumed, and after any BLA, whose RASL pictures are never output
///   (H.265 8.1.3: `NoRaslOutputFlag` is 1 for a BLA, and for a CRA that
///   starts decoding).
///
/// A random-access point that is not one of these (an IDR, an HEVC CRA in
/// the middle of a stream that never broke) ends the leading pictures of the
/// point before it. The caller decides where the breaks are and what a
/// random-access point is in its container (a sample's keyframe flag, or the
/// NAL units of an RTP access unit); the gate keeps what follows from it.
///
/// `Time` is the presentation time the caller has: a `MediaTime`, or an
/// extended RTP timestamp.
package struct RandomAccessGate<Time: Comparable & Sendable>: Sendable {
    /// Which pictures after the current random-access point are its leading pictures.
    package enum LeadingPictures: Sendable, Equatable {
        /// HEVC: RASL pictures.
        case hevcRASL
        /// H.264: pictures presented before this time (the recovery point's).
        case presentedBefore(Time)
    }

    /// The leading pictures of the random-access point passed last, or nil
    /// when it has none that must be left out.
    package private(set) var leadingPictures: LeadingPictures?

    /// A gate before any random-access point.
    package init() {}

    /// Passes a random-access point whose first picture NAL unit has
    /// `pictureType` (nil: the sample holds no picture), presented at
    /// `time`; `afterBreak` says whether decoding resumes here.
    package mutating func pass(codec: CodecType, pictureType: UInt8?, at time: Time, afterBreak: Bool) {
        leadingPictures = Self.leadingPictures(
            codec: codec, pictureType: pictureType, at: time, afterBreak: afterBreak)
    }

    /// Whether a picture that is not a random-access point, whose first
    /// picture NAL unit has `pictureType`, presented at `time`, is a leading
    /// picture of the last random-access point to leave out.
    package func isLeadingPicture(pictureType: UInt8?, at time: Time) -> Bool {
        switch leadingPictures {
        case nil: false
        case .hevcRASL: pictureType.map { HEVCNALUnitType(rawValue: $0).isRASL } ?? false
        case .presentedBefore(let point): time < point
        }
    }

    /// The leading pictures that follow a random-access point; see the type's notes.
    package static func leadingPictures(codec: CodecType, pictureType: UInt8?, at time: Time, afterBreak: Bool)
        -> LeadingPictures?
    {
        guard let pictureType else { return nil }
        switch codec {
        case .h264:
            return afterBreak && H264NALUnitType(rawValue: pictureType) != .idr ? .presentedBefore(time) : nil
        case .hevc:
            let type = HEVCNALUnitType(rawValue: pictureType)
            return type.isBLA || afterBreak && type == .cra ? .hevcRASL : nil
        }
    }
}
