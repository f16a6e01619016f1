import FormatConv
import MediaCore
import NativeCodecs
import PixelTransfer

// DecompressionSession's API and state. The rest of the type, by concern:
// +Backend (which decoder opens), +FrameSelection (which samples are decoded:
// keyframe waits, leading pictures, filters, late and pre-roll samples),
// +Output (feeding the decoder, pictures out, format changes), +Recovery and
// +ReplayCache (failure handling), +Accounting (statistics, drops,
// recoveries), +PictureHash, +Types. CompressionSession mirrors this layout.

/// Turns length-prefixed H.264/HEVC samples back into pictures — the role of
/// VideoToolbox's `VTDecompressionSession`.
///
/// ```swift
/// let session = try DecompressionSession(formatDescription: description)
/// for sample in samples {
///     for frame in try session.decode(sample, userValue: sample.pts) { show(frame.pixelBuffer) }
/// }
/// for frame in try session.finish() { show(frame.pixelBuffer) }
/// print(session.statistics)   // submitted 300, decoded 300, dropped 0, pending 0
/// ```
///
/// **Output.** `decode` returns the pictures that became ready, in
/// presentation order (libavcodec reorders B-frames). Each is the cropped
/// picture its SPS defines (H.264 `frame_crop_*_offset`, the HEVC
/// conformance window), for any crop, aligned or not, so its size is the
/// description's `width` × `height`; the crop moves the plane pointers
/// and costs no copy. Pictures in the
/// decoder's own layout — the stream's chroma format and bit depth as
/// libavcodec's software decoder gives it (I420, I422, I444, gray, I010,
/// I210, I410, gray10, I012, I212, I412, gray12), or NV12 / P010 after a
/// hardware download — are handed out without copying: the `PixelBuffer` keeps the decoder's
/// frame referenced and releases it when it dies. Another layout or size asked
/// for in ``DecoderOutputAttributes`` is made with a `PixelTransferSession`
/// into pooled buffers.
///
/// **Format changes.** A sample whose description differs from the current
/// one reconfigures the session: when the current decoder can take it
/// (``canAccept(_:)``, same size, profile and chroma format) the new
/// parameter sets are passed in-band ahead of the sample; otherwise the old
/// decoder is drained (its pictures are returned first) and a new one built,
/// so the first picture after the change has the new size.
///
/// **Recovery.** Damaged input never stops the session. A picture libavcodec
/// flags as damaged, or a decoding error, drops that sample with the reason
/// and every later picture until the next keyframe, where the decoder is
/// drained, reset and decoding resumes. A stream that starts without a
/// keyframe, and decoding after ``flush()`` or ``finish()``, likewise waits
/// for one, as do the samples after a loss the caller reports with
/// ``reportLoss(_:)``: no picture that refers to a missing or damaged one is
/// returned, and ``recoveries`` says where decoding resumed. When the decoder itself breaks (a hardware failure, libavcodec
/// running out of memory) under `.automatic` or `.software`, the session
/// builds a software decoder and decodes again, from the keyframe before the
/// oldest picture still in flight (for an HEVC CRA, from the keyframe before
/// that, so that its leading pictures decode too), the samples it kept; pictures already
/// delivered are not delivered again, and every other picture is delivered
/// once. This holds for a failure at any point — before or after pictures
/// came out, in any group of pictures — as long as the samples since that
/// keyframe fit in the replay cache (``defaultReplayByteLimit`` bytes); a
/// group that outgrows it is counted in ``replayCacheOverflows``, and a
/// failure inside it drops the pictures in flight, each listed in ``drops``
/// with that reason. A session created with a hardware backend (`.hardware`,
/// `.vaapi`, `.nvdec`) does not fall back: a device failure throws, naming
/// what the driver reported. Every sample is accounted for:
/// ``statistics`` always satisfies `submitted == decoded + dropped + pending`
/// and ``drops`` lists each dropped sample's pts and reason.
///
/// **Threads.** A session is used from one thread at a time; libavcodec's
/// frame threads are its own. ``AsyncDecompressionSession`` wraps a session
/// for use from Swift concurrency.
public final class DecompressionSession {
    /// Which pictures are decoded: `.all` (the default), `.nonDroppable`,
    /// `.intra` or `.keyframes`. The samples left out are listed in
    /// ``drops`` as ``DropReport/Kind/filtered``: keyframes and non-droppable
    /// samples are told from their flags and NAL unit headers before
    /// decoding; for `.intra` libavcodec skips the other pictures, and a
    /// sample is listed once a later one's picture came out (intra pictures
    /// come out in decode order) or at ``finish()``.
    public var frameFilter: FrameFilter = .all {
        didSet { decoderSlot?.setSkipsNonIntraPictures(frameFilter == .intra) }
    }

    /// HEVC: the highest temporal layer decoded (`nil`: all). Samples whose
    /// pictures are in a higher layer (`TemporalId` from the NAL unit header)
    /// are left out before decoding, as a bitstream operation: the layers
    /// below never refer to them. Each is listed in ``drops`` as
    /// ``DropReport/Kind/filtered``. H.264 streams have one layer.
    public var temporalLevelLimit: Int?

    /// The player's clock (`nil`, the default: no picture is late). A sample
    /// presented before this time is late: when no other picture refers to
    /// it (H.264 `nal_ref_idc` 0; an HEVC sub-layer non-reference picture in
    /// the stream's highest temporal layer) it is skipped before decoding;
    /// otherwise it is decoded, because later pictures need it, and its
    /// picture is not returned. Keyframes are always decoded. Each is listed
    /// in ``drops`` as ``DropReport/Kind/late``. A player that falls behind
    /// sets it to the time it is showing, and catches up without a picture
    /// that refers to a skipped one.
    public var earliestPresentationTime: MediaTime?

    /// HEVC: whether each delivered picture is checked against the decoded
    /// picture hash SEI message (MD5, CRC or checksum; H.265 D.3.19) its
    /// access unit carries, when it carries one. The result is each frame's
    /// ``DecodedFrame/pictureHash``, counted in ``pictureHashStatistics``; a
    /// mismatched picture is still delivered (flagged), and its pts is listed
    /// in ``pictureHashMismatches``. Off by default: hashing reads every
    /// sample of the whole decoded picture.
    public var verifiesPictureHashes = false
    /// The pictures checked while ``verifiesPictureHashes`` was on.
    public internal(set) var pictureHashStatistics = PictureHashStatistics()
    /// The pts of each delivered picture whose hash did not match, in delivery order.
    public internal(set) var pictureHashMismatches: [MediaTime] = []

    /// The description of the samples decoded last (changes with the stream).
    public internal(set) var formatDescription: FormatDescription
    /// The backend the caller asked for.
    public let requestedBackend: CodecBackend
    /// The pictures the caller asked for.
    public let outputAttributes: DecoderOutputAttributes
    /// libavcodec frame threads for software decoding; 0 = one per core.
    public let threadCount: Int
    /// Why hardware is not in use, when ``requestedBackend`` allowed it: no
    /// device, libavcodec refusing the stream's profile, or a mid-stream failure.
    public internal(set) var fallbackReason: String?
    /// How many dropped samples ``drops`` keeps at least (the last ones).
    public static let maximumDropHistory = 4096
    /// How many recoveries ``recoveries`` keeps at least (the last ones).
    public static let maximumRecoveryHistory = 1024
    var dropLog: [DropReport] = []
    /// Every drop ever recorded (``drops`` keeps the last ones).
    var dropTotal = 0
    var recoveryLog: [RecoveryReport] = []
    /// The default most bytes of samples kept for replay after a decoder
    /// failure (64 MiB: about 90 s of a 6 Mbit/s stream).
    public static let defaultReplayByteLimit = 64 << 20

    /// The decoder; nil after ``invalidate()``.
    var decoderSlot: (any DecoderBackend)?
    /// The decoder, for code that runs only while the session is valid.
    var decoder: any DecoderBackend {
        get { decoderSlot! }
        set {
            decoderSlot = newValue
            newValue.setSkipsNonIntraPictures(frameFilter == .intra)
        }
    }
    var pending: [Int64: PendingSample] = [:]
    var nextToken: Int64 = 0
    var submitted = 0
    var decoded = 0
    var resync: Resync?
    var replay: ReplayCache
    var replaying = false
    /// `dropTotal` when the last picture was delivered (or a recovery reported).
    var dropsAtLastDelivery = 0
    var hardwareDisabled = false
    /// The layout of the pictures handed out so far when the caller asked
    /// for none (see ``deliveredLayout(for:)``).
    var pinnedLayout: PixelFormat?
    /// The random-access point decoding started at, while its leading
    /// pictures may follow (see ``DropReport/Kind/skippedLeadingPicture``).
    var randomAccess = RandomAccessGate<MediaTime>()
    /// ``flush(seekingTo:)``'s target until a picture at or after it came out.
    var preRollTarget: MediaTime?
    var injectParameterSets = false
    /// H.264: the HDR10 metadata of the latest SEI messages seen in the
    /// samples (libavcodec does not export them from H.264 streams); kept
    /// until newer ones arrive or the stream format is replaced.
    var bitstreamHDR10: HDR10Metadata?
    var transfer: PixelTransferSession?
    /// The VA-API device `.automatic` tries (nil: `CODECS_VAAPI_DEVICE` or the first render node).
    let automaticDevicePath: String?
    /// Makes the decoders (libavcodec, or a test's fakes).
    let factory: DecoderFactory

    /// Creates a session for samples of `formatDescription`.
    ///
    /// - Parameters:
    ///   - formatDescription: the parameter sets of the first samples.
    ///   - decoder: where to decode (`CodecBackend`).
    ///   - output: the layout and size of output pictures.
    ///   - threadCount: software frame threads, nil or 0 for one per core.
    /// - Throws: `MediaError.Code.unsupported` for a stream whose pictures
    ///   have no output layout (4:2:2, 4:4:4, more than 10 bits) unless
    ///   `output.pixelFormat` asks for a conversion;
    ///   `MediaError.Code.unavailable` when `.hardware` has no usable device;
    ///   `MediaError.Code.invalidArgument` for a bad output size or thread count.
    public convenience init(
        formatDescription: FormatDescription, decoder: CodecBackend = .automatic,
        output: DecoderOutputAttributes = .init(), threadCount: Int? = nil
    ) throws(MediaError) {
        try self.init(
            formatDescription: formatDescription, decoder: decoder, output: output, threadCount: threadCount,
            automaticDevicePath: nil)
    }

    /// Creates a session whose `.automatic` choice tries the VA-API device at
    /// `automaticDevicePath` (tests point it at a fake device of the test driver).
    package init(
        formatDescription: FormatDescription, decoder: CodecBackend, output: DecoderOutputAttributes,
        threadCount: Int?, automaticDevicePath: String?, factory: DecoderFactory = .builtIn,
        replayByteLimit: Int = DecompressionSession.defaultReplayByteLimit
    ) throws(MediaError) {
        if let width = output.width, !(1...16384).contains(width) {
            throw .invalidArgument("output width \(width): must be 1...16384")
        }
        if let height = output.height, !(1...16384).contains(height) {
            throw .invalidArgument("output height \(height): must be 1...16384")
        }
        let threads = threadCount ?? 0
        guard (0...64).contains(threads) else {
            throw .invalidArgument("threadCount \(threads): must be 0 (automatic) ... 64")
        }
        try Self.checkOutput(formatDescription, output)
        self.formatDescription = formatDescription
        self.requestedBackend = decoder
        self.outputAttributes = output
        self.threadCount = threads
        self.automaticDevicePath = automaticDevicePath
        self.factory = factory
        self.replay = ReplayCache(byteLimit: replayByteLimit)
        let (backend, reason) = try Self.makeDecoder(
            formatDescription, choice: decoder, threadCount: threads, hardwareDisabled: false,
            automaticDevicePath: automaticDevicePath, factory: factory)
        self.decoderSlot = backend
        self.fallbackReason = reason
        self.resync = Resync(reason: "the stream has not reached a keyframe yet", damagedFrom: nil)
    }

    /// Decodes one sample and returns the pictures that became ready, in
    /// presentation order.
    ///
    /// `userValue` comes back with the picture decoded from this sample.
    /// Damaged data is not an error (see the type's documentation on
    /// recovery); a sample that cannot be decoded is listed in ``drops``.
    ///
    /// **Ownership of the sample.** The caller keeps `sample`. Its bytes are
    /// copied into a libavcodec packet during this call, and the decoder
    /// keeps nothing of the caller's. The session keeps the sample's pts,
    /// duration, keyframe flag and `userValue` until its picture is returned
    /// or the sample is dropped. For replay after a decoder failure it also
    /// keeps the sample's `data` array (a value whose storage it shares, not
    /// a copy of the bytes) while the sample belongs to the group of pictures
    /// that starts at the last keyframe at or before the oldest sample still
    /// in the decoder: it lets go once a later keyframe starts that group, or
    /// at ``flush()``, ``finish()``, ``invalidate()``, a format change that
    /// builds a new decoder, or a group larger than the replay limit.
    ///
    /// **Ownership of the pictures.** The returned frames belong to the
    /// caller. A picture in the decoder's own layout shares libavcodec's
    /// frame memory: it stays valid as long as its `PixelBuffer` lives, even
    /// after the session is invalidated, and the decoder may go on reading
    /// that memory as a reference picture, so treat its planes as read-only
    /// (convert or copy it to change pixels). A converted or scaled picture
    /// is a buffer of the session's pool (or its own allocation when the pool
    /// is exhausted), reused only once the caller releases it.
    ///
    /// - Throws: `MediaError.Code.unsupported` when the sample's description
    ///   has no output layout; `MediaError.Code.unavailable` when `.hardware`
    ///   was chosen and libavcodec cannot decode the stream on the device;
    ///   `MediaError.Code.backendFailure` when `.hardware` was chosen and the
    ///   device fails while decoding (the message carries what the driver
    ///   reported; the session tries the device again at the next keyframe).
    ///   The sample, and every sample in flight, is then listed in ``drops``.
    public func decode(_ sample: CompressedSample, userValue: (any Sendable)? = nil) throws(MediaError)
        -> [DecodedFrame]
    {
        try checkValid()
        var output: [DecodedFrame] = []
        submitted += 1
        let token = nextToken
        nextToken += 1
        if sample.formatDescription != formatDescription {
            do {
                try reconfigure(to: sample.formatDescription, isKeyframe: sample.isKeyframe, into: &output)
            } catch {
                recordDrop(
                    DropReport(pts: sample.pts, kind: .formatChange, reason: "format change refused: \(error.message)"))
                throw error
            }
        }
        let afterBreak = resync != nil
        guard resumes(at: sample, into: &output) else { return output }
        let inspection = SampleInspection(sample.data, formatDescription)
        guard selects(sample, inspection, afterBreak: afterBreak, into: &output) else { return output }
        pending[token] = PendingSample(
            pts: sample.pts, duration: sample.duration, isKeyframe: sample.isKeyframe, userValue: userValue,
            hdr10: bitstreamHDR10 ?? formatDescription.hdr10, pictureHash: expectedPictureHash(in: sample))
        var data = sample.data
        if injectParameterSets {
            data = parameterSetsInBand() + data
            injectParameterSets = false
        }
        replay.record(
            token: token, data: data, isKeyframe: sample.isKeyframe,
            opensGroup: sample.isKeyframe && inspection.isCleanRandomAccess,
            oldestPending: pending.keys.min() ?? token)
        try feed(data, token: token, isKeyframe: sample.isKeyframe, into: &output)
        return output
    }

    /// Ends the stream: drains the decoder and returns every picture it
    /// still holds (VideoToolbox's `WaitForAsynchronousFrames`). This is what
    /// `finish()` means on every session, encoding or decoding: nothing stays
    /// inside, and what never came out is accounted for — here each sample
    /// without a picture is listed in ``drops``, and ``statistics`` shows
    /// nothing pending. A decompression session may then start another
    /// stream, from a keyframe, as after ``flush()``.
    public func finish() throws(MediaError) -> [DecodedFrame] {
        try checkValid()
        var output: [DecodedFrame] = []
        for _ in 0..<3 {
            do throws(MediaError) {
                try decoder.sendEndOfStream()
                try receiveAll(into: &output)
                break
            } catch {
                try handleFailure(error, into: &output)
            }
        }
        decoder.flush()
        if frameFilter == .intra {
            dropAllPending("left out by frameFilter intra", kind: .filtered)
        }
        dropAllPending("the decoder returned no picture for this sample by the end of the stream", kind: .notReturned)
        replay.reset()
        resync = Resync(reason: "decoding restarts after finish()", damagedFrom: nil)
        return output
    }

    /// Tells the session that samples are missing before the next one given
    /// (a transport saw a gap in its sequence numbers, a packet was lost).
    ///
    /// The pictures of the samples given so far are complete — in decode
    /// order nothing refers to a later sample — so they are returned now. The
    /// decoder is then reset, and the samples that follow are dropped, each
    /// listed in ``drops`` as ``DropReport/Kind/waitingForKeyframe`` with
    /// `reason`, until a keyframe, where decoding resumes and ``recoveries``
    /// reports it. So no picture that refers to a missing sample is ever
    /// returned. The missing samples never reached the session and are not
    /// counted in ``statistics``. Calling it again before the keyframe changes
    /// nothing.
    public func reportLoss(_ reason: String) throws(MediaError) -> [DecodedFrame] {
        try checkValid()
        guard resync == nil else { return [] }
        return skipToNextKeyframe(reason)
    }

    /// Discards everything in flight (a seek): no picture of a sample given
    /// before the flush is returned after it. The discarded samples are listed
    /// in ``drops``; decoding resumes at the next keyframe.
    public func flush() {
        guard decoderSlot != nil else { return }
        decoder.flush()
        dropAllPending("discarded by flush()", kind: .discarded)
        replay.reset()
        resync = Resync(reason: "flush() reset the decoder", damagedFrom: nil)
        preRollTarget = nil
    }

    /// ``flush()`` for a seek: the caller then gives the samples from the
    /// random-access point at or before `target` (`MovieReader` seeks
    /// there), and the session returns pictures from the one presented at
    /// `target` on. The pictures before it are the pre-roll: decoded when a
    /// later picture refers to them, skipped before decoding otherwise, and
    /// never returned; each is listed in ``drops`` as
    /// ``DropReport/Kind/preRoll``. The leading pictures of the
    /// random-access point are listed as ``DropReport/Kind/skippedLeadingPicture``.
    /// The first picture returned is the first at or after `target`.
    public func flush(seekingTo target: MediaTime) {
        flush()
        preRollTarget = target
    }

    /// Whether ``invalidate()`` was called.
    public var isInvalidated: Bool { decoderSlot == nil }

    /// Closes the decoder and frees it now; later ``decode(_:userValue:)`` and
    /// ``finish()`` calls throw `MediaError.Code.invalidated` and ``flush()``
    /// does nothing. Pictures still inside the decoder are discarded and their
    /// samples listed in ``drops`` (call ``finish()`` first to keep them).
    public func invalidate() {
        guard decoderSlot != nil else { return }
        dropAllPending("discarded by invalidate()", kind: .discarded)
        decoderSlot = nil
        replay.reset()
        transfer = nil
    }

    func checkValid() throws(MediaError) {
        guard decoderSlot != nil else {
            throw MediaError(.invalidated, "the decompression session was invalidated")
        }
    }
}
