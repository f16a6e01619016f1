import FormatConv
import MediaCore

/// The pictures a session hands out: their layout and size.
public struct DecoderOutputAttributes: Sendable, Hashable {
    /// The layout of output pictures; nil keeps the decoder's own (the
    /// stream's chroma format and bit depth: I420 for 8-bit 4:2:0, I210 for
    /// 10-bit 4:2:2, `gray12` for 12-bit monochrome HEVC …; NV12 or P010
    /// from a hardware decoder), which is handed out without copying. With
    /// nil, the layout of the first picture holds for the rest of the stream
    /// while its chroma sampling and bit depth do: pictures a software
    /// decoder makes after a hardware failure are repacked into the
    /// hardware's NV12 / P010 (exact). `FormatDescription.planarPixelFormat`
    /// asks for the stream's planar layout whatever the backend. Same-size
    /// changes between I420 and NV12 or I010 and P010 are a repacking of the
    /// samples; any other format is converted with libswscale.
    public var pixelFormat: PixelFormat?
    /// The output width; nil keeps the stream's.
    public var width: Int?
    /// The output height; nil keeps the stream's.
    public var height: Int?

    /// Attributes with the given values; nil keeps the decoder's own.
    public init(pixelFormat: PixelFormat? = nil, width: Int? = nil, height: Int? = nil) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
    }
}

/// One decoded picture and what came with its sample.
public struct DecodedFrame: @unchecked Sendable {
    /// The pixels.
    public let pixelBuffer: PixelBuffer
    /// The presentation time of the sample the picture was decoded from.
    public let pts: MediaTime
    /// The sample's duration (`.invalid` when the sample had none).
    public let duration: MediaTime
    /// Whether the sample was a keyframe.
    public let isKeyframe: Bool
    /// The value passed to `decode(_:userValue:)` with the sample
    /// (VideoToolbox's `sourceFrameRefCon`).
    public let userValue: (any Sendable)?
    /// HDR10 static metadata (mastering display colour volume, content
    /// light level) in effect for this picture, as an attachment of the
    /// frame; nil when neither the bitstream nor the format description
    /// has any. Where it comes from, first found wins:
    ///
    /// 1. HEVC: the SEI messages (payload types 137, 144) as libavcodec
    ///    exports them with the picture (it keeps them for the coded video
    ///    sequence that carried them).
    /// 2. H.264: libavcodec (FFmpeg 5.1) does not export these SEI, so the
    ///    session reads them from the samples itself. A picture gets the
    ///    values of the latest such SEI in a sample at or before its own
    ///    sample in decode order (the metadata is static: encoders write it
    ///    with keyframes, and it holds until replaced); with reordering, a
    ///    picture shown after a later keyframe's new values still gets the
    ///    values of its own position in decode order. They are forgotten
    ///    when a format change rebuilds the decoder.
    /// 3. The sample's `FormatDescription/hdr10` (container metadata read by
    ///    `MovieReader`, or set by the application), when the bitstream has
    ///    carried none.
    public var hdr10: HDR10Metadata?
    /// How the picture compared with its access unit's decoded picture hash
    /// (HEVC), when ``DecompressionSession/verifiesPictureHashes`` is on and
    /// the access unit carried one; nil otherwise. A mismatch marks a
    /// damaged picture that is still delivered.
    public var pictureHash: PictureHashCheck?

    /// A frame with the given values.
    public init(
        pixelBuffer: PixelBuffer, pts: MediaTime, duration: MediaTime, isKeyframe: Bool, userValue: (any Sendable)?,
        hdr10: HDR10Metadata? = nil
    ) {
        self.hdr10 = hdr10
        self.pixelBuffer = pixelBuffer
        self.pts = pts
        self.duration = duration
        self.isKeyframe = isKeyframe
        self.userValue = userValue
    }
}

/// Where every sample handed to a session stands. Always
/// `submitted == decoded + dropped + pending`.
public struct DecodeStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Samples handed to `decode`.
    public var submitted: Int = 0
    /// Samples whose picture was delivered.
    public var decoded: Int = 0
    /// Samples reported in ``DecompressionSession/drops``.
    public var dropped: Int = 0
    /// Samples inside the decoder whose picture has not come out yet.
    public var pending: Int = 0

    /// Statistics with the given counts.
    public init(submitted: Int = 0, decoded: Int = 0, dropped: Int = 0, pending: Int = 0) {
        self.submitted = submitted
        self.decoded = decoded
        self.dropped = dropped
        self.pending = pending
    }

    /// "submitted 30, decoded 28, dropped 2, pending 0".
    public var description: String {
        "submitted \(submitted), decoded \(decoded), dropped \(dropped), pending \(pending)"
    }
}

/// A sample whose picture was not delivered, and why.
public struct DropReport: Sendable, Hashable, CustomStringConvertible {
    /// Why a sample was dropped, as a kind to match on (``reason`` says it in words).
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Before the first keyframe, or after a loss until the next one: its
        /// picture would refer to one that is missing.
        case waitingForKeyframe
        /// The decoder flagged the picture as damaged, or it was decoded from
        /// data after damage.
        case damaged
        /// The decoder failed (hardware malfunction, bad data) with the sample in flight.
        case decoderFailure
        /// A replacement decoder could not rebuild it (the replay cache overflowed).
        case notReplayable
        /// The stream's format changed and this sample's picture did not come out first.
        case formatChange
        /// The picture could not be put in the requested output layout.
        case outputFailure
        /// The decoder held it at the end of the stream and never returned it.
        case notReturned
        /// Discarded on purpose: ``DecompressionSession/flush()``, `invalidate()`.
        case discarded
        /// Left out by ``DecompressionSession/frameFilter`` or
        /// ``DecompressionSession/temporalLevelLimit``.
        case filtered
        /// A leading picture of the random-access point decoding started at
        /// (after a seek, a loss or at the start of the stream): an HEVC RASL
        /// picture after a CRA or BLA, or an H.264 picture presented before
        /// the non-IDR keyframe it follows. It refers to pictures before that
        /// point, which the decoder never had, so it is not decoded.
        case skippedLeadingPicture
        /// The sample is not a whole access unit: its NAL unit lengths run
        /// past its end, it holds no slice, or its first slice is not the
        /// first of the picture (the slices before it are missing).
        case incompleteAccessUnit
        /// Presented before ``DecompressionSession/earliestPresentationTime``:
        /// skipped before decoding when no picture refers to it, otherwise
        /// decoded (later pictures need it) and not returned.
        case late
        /// Before the target of ``DecompressionSession/flush(seekingTo:)``:
        /// decoded when later pictures need it, not returned.
        case preRoll
    }

    /// The sample's presentation time.
    public var pts: MediaTime
    /// Why, as a kind.
    public var kind: Kind
    /// Why, in words.
    public var reason: String

    /// A report with the given values.
    public init(pts: MediaTime, kind: Kind, reason: String) {
        self.pts = pts
        self.kind = kind
        self.reason = reason
    }

    /// A report whose kind is ``Kind/discarded`` (a sample let go on purpose).
    public init(pts: MediaTime, reason: String) {
        self.init(pts: pts, kind: .discarded, reason: reason)
    }

    /// "pts 1/30: reason".
    public var description: String { "pts \(pts): \(reason)" }
}

/// Where decoding resumed after a loss: the keyframe (IDR, IRAP or recovery
/// point) from which pictures are complete again, and how many samples were
/// dropped since the last picture delivered.
public struct RecoveryReport: Sendable, Hashable, CustomStringConvertible {
    /// The presentation time of the keyframe decoding resumed at.
    public var pts: MediaTime
    /// The samples dropped between the last picture delivered and this keyframe.
    public var droppedSamples: Int
    /// What caused the loss, in words.
    public var cause: String

    /// A report with the given values.
    public init(pts: MediaTime, droppedSamples: Int, cause: String) {
        self.pts = pts
        self.droppedSamples = droppedSamples
        self.cause = cause
    }

    /// "resumed at pts 10/30 after 5 dropped sample(s): cause".
    public var description: String { "resumed at pts \(pts) after \(droppedSamples) dropped sample(s): \(cause)" }
}

/// Which pictures a ``DecompressionSession`` decodes (VideoToolbox's
/// `OnlyTheseFrames`), for thumbnails, trick play and seeking.
public enum FrameFilter: Sendable, Hashable, CaseIterable {
    /// Every picture.
    case all
    /// Pictures other pictures refer to: H.264 `nal_ref_idc` above 0; HEVC
    /// all but the sub-layer non-reference types (TRAIL_N, TSA_N, STSA_N,
    /// RADL_N, RASL_N and the reserved _N types).
    case nonDroppable
    /// Intra-coded pictures only (libavcodec's `skip_frame` NONINTRA).
    case intra
    /// Keyframes only (IDR / IRAP samples).
    case keyframes
}

/// How a picture compared with the decoded picture hash SEI message its
/// HEVC access unit carried (payload type 132; H.265 D.3.19): an MD5, CRC or
/// checksum of each colour component of the whole decoded picture, computed
/// by the encoder. A mismatch means the picture is not the one the encoder
/// reconstructed: damage the decoder did not detect (a corrupted slice, a
/// decoder bug). Pictures that refer to it usually mismatch too.
public struct PictureHashCheck: Sendable, Hashable, CustomStringConvertible {
    /// The message's `hash_type`.
    public enum Method: String, Sendable, Hashable, CaseIterable {
        case md5, crc, checksum
    }

    /// The method the stream used.
    public var method: Method
    /// The components (0 = Y, 1 = Cb, 2 = Cr) whose hash differed; empty when
    /// the picture matched.
    public var mismatchedComponents: [Int]
    /// The stream's hash of each component, as hexadecimal digits.
    public var expected: [String]
    /// The hash of each component of the decoded picture, as hexadecimal digits.
    public var computed: [String]

    /// A check with the given values.
    public init(method: Method, mismatchedComponents: [Int], expected: [String], computed: [String]) {
        self.method = method
        self.mismatchedComponents = mismatchedComponents
        self.expected = expected
        self.computed = computed
    }

    /// Whether every component matched.
    public var matches: Bool { mismatchedComponents.isEmpty }

    /// "md5 matched", or the method and the components that differ.
    public var description: String {
        guard !matches else { return "\(method) matched" }
        let names = ["Y", "Cb", "Cr"]
        return "\(method) mismatch in "
            + mismatchedComponents.map { "\(names[$0]) (stream \(expected[$0]), decoded \(computed[$0]))" }
            .joined(separator: ", ")
    }
}

/// What ``DecompressionSession/verifiesPictureHashes`` found over the
/// pictures a session delivered.
public struct PictureHashStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Pictures whose every component matched the stream's hash.
    public var matched = 0
    /// Pictures with at least one component that did not match.
    public var mismatched = 0
    /// Pictures delivered without a check: their access unit carried no
    /// decoded picture hash (H.264 has none), or the picture's layout is not
    /// one whose samples the check can read (planar or semi-planar Y'CbCr
    /// and gray, little-endian, are read).
    public var unchecked = 0

    /// Counts with the given values.
    public init(matched: Int = 0, mismatched: Int = 0, unchecked: Int = 0) {
        self.matched = matched
        self.mismatched = mismatched
        self.unchecked = unchecked
    }

    /// "picture hashes: 30 matched, 0 mismatched, 0 without a hash".
    public var description: String {
        "picture hashes: \(matched) matched, \(mismatched) mismatched, \(unchecked) without a hash"
    }
}
