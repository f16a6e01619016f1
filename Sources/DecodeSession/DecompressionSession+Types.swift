import FormatConv
import MediaCore

// Types: what the session keeps for each sample in flight, and the state
// of a resynchronization.
extension DecompressionSession {
    /// The sample data the session keeps for a picture not yet out of the decoder.
    struct PendingSample {
        var pts: MediaTime
        var duration: MediaTime
        var isKeyframe: Bool
        var userValue: (any Sendable)?
        /// The HDR10 metadata in effect for this sample when the decoder
        /// exports none with its picture (see ``DecodedFrame/hdr10``).
        var hdr10: HDR10Metadata?
        /// The decoded picture hash its access unit carried, when verified.
        var pictureHash: HEVCDecodedPictureHash?
    }

    /// Why the session is waiting for a keyframe, and the first sample (in
    /// decode order) whose picture can no longer be trusted.
    struct Resync {
        var reason: String
        var damagedFrom: Int64?
        /// Samples were lost before the session saw them (``reportLoss(_:)``):
        /// the resumption is reported even when the session itself dropped nothing.
        var lossReported = false
    }
}
