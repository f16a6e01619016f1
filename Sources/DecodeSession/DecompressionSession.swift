import FormatConv
import MediaCore
import NativeCodecs
import PixelTransfer

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
    public private(set) var formatDescription: FormatDescription
    /// The backend the caller asked for.
    public let requestedBackend: CodecBackend
    /// The pictures the caller asked for.
    public let outputAttributes: DecoderOutputAttributes
    /// libavcodec frame threads for software decoding; 0 = one per core.
    public let threadCount: Int
    /// Why hardware is not in use, when ``requestedBackend`` allowed it: no
    /// device, libavcodec refusing the stream's profile, or a mid-stream failure.
    public private(set) var fallbackReason: String?
    /// Each dropped sample's pts and why, in the order they were dropped.
    /// The most recent ``maximumDropHistory`` entries at least (older ones
    /// are let go, so a long-running session's memory stays bounded; the
    /// total is ``statistics``' `dropped`).
    public var drops: [DropReport] { dropLog }
    /// How many dropped samples ``drops`` keeps at least (the last ones).
    public static let maximumDropHistory = 4096
    /// How many recoveries ``recoveries`` keeps at least (the last ones).
    public static let maximumRecoveryHistory = 1024
    private var dropLog: [DropReport] = []
    /// Every drop ever recorded (``drops`` keeps the last ones).
    private var dropTotal = 0
    private var recoveryLog: [RecoveryReport] = []
    /// Where decoding resumed after each loss: the keyframe, how many samples
    /// were dropped since the last picture delivered, and why.
    /// (The most recent ``maximumRecoveryHistory`` at least.)
    public var recoveries: [RecoveryReport] { recoveryLog }
    /// ``drops`` coalesced: each distinct reason once, with how many samples it dropped.
    public var dropReasons: ReasonTally { ReasonTally(drops.map(\.reason)) }
    /// The default most bytes of samples kept for replay after a decoder
    /// failure (64 MiB: about 90 s of a 6 Mbit/s stream).
    public static let defaultReplayByteLimit = 64 << 20
    /// How many times a group of pictures outgrew the replay cache (see
    /// ``defaultReplayByteLimit``); a decoder failure inside such a group drops
    /// the pictures in flight, each listed in ``drops`` with the reason.
    public var replayCacheOverflows: Int { replay.overflows }

    /// The decoder; nil after ``invalidate()``.
    private var decoderSlot: (any DecoderBackend)?
    /// The decoder, for code that runs only while the session is valid.
    private var decoder: any DecoderBackend {
        get { decoderSlot! }
        set {
            decoderSlot = newValue
            newValue.setSkipsNonIntraPictures(frameFilter == .intra)
        }
    }
    private var pending: [Int64: PendingSample] = [:]
    private var nextToken: Int64 = 0
    private var submitted = 0
    private var decoded = 0
    private var resync: Resync?
    private var replay: ReplayCache
    private var replaying = false
    /// `dropTotal` when the last picture was delivered (or a recovery reported).
    private var dropsAtLastDelivery = 0
    private var hardwareDisabled = false
    /// The layout of the pictures handed out so far when the caller asked
    /// for none (see ``deliveredLayout(for:)``).
    private var pinnedLayout: PixelFormat?
    /// The random-access point decoding started at, while its leading
    /// pictures may follow (see ``DropReport/Kind/skippedLeadingPicture``).
    private var leadingPictures: LeadingPictures?
    /// ``flush(seekingTo:)``'s target until a picture at or after it came out.
    private var preRollTarget: MediaTime?
    private var injectParameterSets = false
    /// H.264: the HDR10 metadata of the latest SEI messages seen in the
    /// samples (libavcodec does not export them from H.264 streams); kept
    /// until newer ones arrive or the stream format is replaced.
    private var bitstreamHDR10: HDR10Metadata?
    private var transfer: PixelTransferSession?
    /// The VA-API device `.automatic` tries (nil: `CODECS_VAAPI_DEVICE` or the first render node).
    private let automaticDevicePath: String?
    /// Makes the decoders (libavcodec, or a test's fakes).
    private let factory: DecoderFactory

    /// The sample data the session keeps for a picture not yet out of the decoder.
    private struct PendingSample {
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

    /// Which samples after a random-access point are its undecodable leading pictures.
    private enum LeadingPictures {
        /// HEVC: RASL pictures (after a CRA decoding started at, or any BLA).
        case hevcRASL
        /// H.264: pictures presented before this non-IDR keyframe.
        case h264Before(MediaTime)
    }

    /// Why the session is waiting for a keyframe, and the first sample (in
    /// decode order) whose picture can no longer be trusted.
    private struct Resync {
        var reason: String
        var damagedFrom: Int64?
        /// Samples were lost before the session saw them (``reportLoss(_:)``):
        /// the resumption is reported even when the session itself dropped nothing.
        var lossReported = false
    }

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
        threadCount: Int?, automaticDevicePath: String?, factory: DecoderFactory = .libavcodec,
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

    /// The decoder in use by name: "software", "vaapi" or "cuda".
    public var backend: String { decoderSlot?.name ?? "invalidated" }

    /// Where the session decodes now: `.software`, `.vaapi(device:)` or
    /// `.nvdec(device:)` with the device it opened (after a fallback, `.software`).
    public var backendInUse: CodecBackend {
        decoderSlot?.backendInUse ?? .software
    }

    /// Where every submitted sample stands.
    public var statistics: DecodeStatistics {
        DecodeStatistics(submitted: submitted, decoded: decoded, dropped: dropTotal, pending: pending.count)
    }

    /// Whether samples of `description` can be decoded by the current decoder
    /// without rebuilding it. (The session rebuilds itself when needed, so
    /// `false` only means that a rebuild will happen.)
    public func canAccept(_ description: FormatDescription) -> Bool {
        guard (try? Self.checkOutput(description, outputAttributes)) != nil else { return false }
        return formatDescription.canAccept(description)
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
        let startsHere = resync != nil
        if let resync {
            guard sample.isKeyframe else {
                recordDrop(
                    DropReport(
                        pts: sample.pts, kind: .waitingForKeyframe, reason: "waiting for a keyframe: \(resync.reason)"))
                return output
            }
            resynchronize(into: &output)
            // Pictures are complete again from this keyframe on; say so when
            // something was lost on the way here.
            if dropTotal > dropsAtLastDelivery || resync.lossReported {
                recordRecovery(
                    RecoveryReport(
                        pts: sample.pts, droppedSamples: dropTotal - dropsAtLastDelivery, cause: resync.reason))
                dropsAtLastDelivery = dropTotal
            }
        }
        let layout = SampleLayout(sample.data, formatDescription)
        if sample.isKeyframe {
            leadingPictures = Self.leadingPictures(after: sample, layout, startsHere: startsHere)
        } else if let leading = leadingPictures, Self.isLeading(sample, layout, leading) {
            recordDrop(
                DropReport(
                    pts: sample.pts, kind: .skippedLeadingPicture,
                    reason: "a leading picture of the random-access point decoding started at: it refers to "
                        + "pictures before that point, which were never decoded"))
            dropsAtLastDelivery = dropTotal
            return output
        }
        if let problem = Self.incompleteness(layout, size: sample.data.count, formatDescription) {
            let drop = DropReport(
                pts: sample.pts, kind: .incompleteAccessUnit, reason: "incomplete access unit: \(problem)")
            if sample.isKeyframe || layout.isReferencePicture {
                // Later pictures refer to this one: what is in flight comes
                // out, then nothing until the next keyframe (which reports
                // this sample among the dropped).
                output += skipToNextKeyframe("an incomplete access unit at pts \(sample.pts) (\(problem))")
                recordDrop(drop)
            } else {
                recordDrop(drop)
                dropsAtLastDelivery = dropTotal
            }
            return output
        }
        if let limit = temporalLevelLimit, let layer = layout.temporalLayer,
            layer > limit
        {
            recordDrop(
                DropReport(pts: sample.pts, kind: .filtered, reason: "temporal layer \(layer) above the limit \(limit)")
            )
            dropsAtLastDelivery = dropTotal
            return output
        }
        if frameFilter == .keyframes && !sample.isKeyframe
            || frameFilter == .nonDroppable && !sample.isKeyframe
                && !layout.isReferencePicture
        {
            recordDrop(DropReport(pts: sample.pts, kind: .filtered, reason: "left out by frameFilter \(frameFilter)"))
            dropsAtLastDelivery = dropTotal  // not a loss: no recovery report for it
            return output
        }
        if layout.containsSEI,
            let found = H264SEI.hdr10(inSample: sample.data, lengthSize: formatDescription.nalUnitHeaderLength)
        {
            bitstreamHDR10 = found
        }
        if !sample.isKeyframe, let (kind, reason) = skipBeforeDecoding(sample, layout) {
            recordDrop(DropReport(pts: sample.pts, kind: kind, reason: reason))
            dropsAtLastDelivery = dropTotal
            return output
        }
        pending[token] = PendingSample(
            pts: sample.pts, duration: sample.duration, isKeyframe: sample.isKeyframe, userValue: userValue,
            hdr10: bitstreamHDR10 ?? formatDescription.hdr10, pictureHash: expectedPictureHash(in: sample))
        var data = sample.data
        if injectParameterSets {
            data =
                Self.lengthPrefixed(formatDescription.parameterSets, size: formatDescription.nalUnitHeaderLength)
                + data
            injectParameterSets = false
        }
        replay.record(
            token: token, data: data, isKeyframe: sample.isKeyframe,
            opensGroup: sample.isKeyframe && layout.isCleanRandomAccess,
            oldestPending: pending.keys.min() ?? token)
        try feed(data, token: token, isKeyframe: sample.isKeyframe, into: &output)
        return output
    }

    /// Returns every picture the decoder still holds (VideoToolbox's
    /// `WaitForAsynchronousFrames`). Samples that produced no picture are
    /// listed in ``drops``; afterwards ``statistics`` shows nothing pending.
    /// Decoding may go on after `finish()`, starting at a keyframe.
    public func finish() throws(MediaError) -> [DecodedFrame] {
        try checkValid()
        var output: [DecodedFrame] = []
        for _ in 0..<3 {
            do throws(DecoderFailure) {
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

    /// Returns the pictures in flight (complete: nothing in decode order
    /// refers to a later sample), resets the decoder and waits for a keyframe.
    private func skipToNextKeyframe(_ reason: String) -> [DecodedFrame] {
        var output: [DecodedFrame] = []
        resync = Resync(reason: reason, damagedFrom: nil)
        resynchronize(into: &output)
        replay.reset()
        resync = Resync(reason: reason, damagedFrom: nil, lossReported: true)
        return output
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

    private func checkValid() throws(MediaError) {
        guard decoderSlot != nil else {
            throw MediaError(.invalidated, "the decompression session was invalidated")
        }
    }

    // MARK: - Feeding the decoder

    private func feed(_ data: [UInt8], token: Int64, isKeyframe: Bool, into output: inout [DecodedFrame])
        throws(MediaError)
    {
        do throws(DecoderFailure) {
            var attempts = 0
            while try !decoder.send(data, token: token, isKeyframe: isKeyframe) {
                // The decoder is full: take its pictures, then send again.
                attempts += 1
                guard attempts < 64 else {
                    throw DecoderFailure(
                        "\(decoder.name) decoder: still full after returning its pictures 64 times",
                        isInvalidData: false)
                }
                try receiveAll(into: &output)
            }
            try receiveAll(into: &output)
        } catch {
            try handleFailure(error, into: &output)
        }
        noteSoftwareFallback()
    }

    private func receiveAll(into output: inout [DecodedFrame]) throws(DecoderFailure) {
        while let picture = try decoder.receive() {
            deliver(picture, into: &output)
        }
    }

    private func deliver(_ picture: any DecoderPicture, into output: inout [DecodedFrame]) {
        let token = picture.token
        // A picture of a sample already delivered or dropped (a replay) is not repeated.
        guard let info = pending[token] else { return }
        if frameFilter == .intra {
            // Intra pictures come out in decode order: earlier samples still
            // pending were skipped.
            for skipped in pending.keys.sorted() where skipped < token {
                drop(skipped, kind: .filtered, reason: "left out by frameFilter intra")
            }
        }
        if let damage = picture.damage {
            drop(token, kind: .damaged, reason: damage + "; dropping until the next keyframe")
            beginResync("damaged picture at pts \(info.pts)", from: token)
            return
        }
        if let resync, let first = resync.damagedFrom, token >= first {
            drop(
                token, kind: .damaged,
                reason: "decoded after damaged data (\(resync.reason)); dropping until the next keyframe")
            return
        }
        if let target = preRollTarget {
            guard info.pts >= target else {
                drop(token, kind: .preRoll, reason: "decoded as pre-roll for the seek to \(target), not returned")
                dropsAtLastDelivery = dropTotal
                return
            }
            preRollTarget = nil
        }
        if let deadline = earliestPresentationTime, info.pts < deadline {
            drop(
                token, kind: .late,
                reason:
                    "late: presented before the earliest presentation time; decoded for later pictures, not returned")
            dropsAtLastDelivery = dropTotal
            return
        }
        // Read before the buffer is made: adopting the pixels may leave the picture blank.
        let hdr10 = picture.hdr10
        let hashCheck = checkPictureHash(of: picture, against: info.pictureHash, pts: info.pts)
        let buffer: PixelBuffer
        do {
            buffer = try outputBuffer(for: picture)
        } catch {
            drop(token, kind: .outputFailure, reason: "the picture cannot be output: \(error.message)")
            return
        }
        pending[token] = nil
        decoded += 1
        dropsAtLastDelivery = dropTotal
        var frame = DecodedFrame(
            pixelBuffer: buffer, pts: info.pts, duration: info.duration, isKeyframe: info.isKeyframe,
            userValue: info.userValue, hdr10: hdr10 ?? info.hdr10)
        frame.pictureHash = hashCheck
        output.append(frame)
    }

    // MARK: - Recovery

    private func handleFailure(_ failure: DecoderFailure, into output: inout [DecodedFrame]) throws(MediaError) {
        if let refusal = decoder.hardwareRefused {
            dropAllPending(refusal, kind: .decoderFailure)
            throw .unavailable(refusal)
        }
        let onHardware = decoder.isOnHardware
        if onHardware, requestedBackend.isHardware {
            // Hardware only: no software fallback. The samples in flight are
            // lost; the decoder starts again at the next keyframe.
            let reason = decoder.withHardwareErrors("\(decoder.name) decoding failed: \(failure)")
            dropAllPending(reason, kind: .decoderFailure)
            decoder.flush()
            replay.reset()
            resync = Resync(reason: reason, damagedFrom: nil)
            throw .backendFailure(reason + " (automatic decoder selection would continue in software)")
        }
        if !replaying && (onHardware || !failure.isInvalidData) {
            let what =
                onHardware
                ? decoder.withHardwareErrors("\(decoder.name) decoding failed: \(failure)")
                : "the decoder failed: \(failure)"
            rebuildAndReplay(reason: what, disableHardware: onHardware, into: &output)
            return
        }
        // Bad data: drop from the oldest picture still inside the decoder.
        beginResync(failure.description, from: pending.keys.min() ?? nextToken)
    }

    /// What the session reads of a sample before decoding it: whether its
    /// NAL unit lengths fit, and the first three bytes of its first picture
    /// (VCL) NAL unit. One pass over the lengths, no allocation.
    private struct SampleLayout {
        /// Why the lengths do not split the sample into NAL units, or nil.
        var malformed: String?
        /// The first picture NAL unit's first three bytes (0 past its end), and its size.
        var header: (UInt8, UInt8, UInt8)?
        var headerUnitSize = 0
        /// H.264: whether the sample has an SEI NAL unit (HDR10 metadata may be in it).
        var containsSEI = false
        let codec: CodecType

        init(_ data: [UInt8], _ description: FormatDescription) {
            codec = description.codec
            var header: (UInt8, UInt8, UInt8)?
            var size = 0
            var sei = false
            let codec = codec
            malformed = data.withUnsafeBytes { buffer -> String? in
                do throws(MediaError) {
                    try LengthPrefixed.forEachNALUnit(
                        in: buffer, lengthSize: description.nalUnitHeaderLength, codec: codec
                    ) { range in
                        let first = buffer[range.lowerBound]
                        if codec == .h264 && first & 0x1F == 6 { sei = true }
                        guard header == nil else { return }
                        let isPicture = codec == .h264 ? (1...5).contains(first & 0x1F) : (first >> 1) & 0x3F < 32
                        guard isPicture else { return }
                        header = (
                            first, range.count > 1 ? buffer[range.lowerBound + 1] : 0,
                            range.count > 2 ? buffer[range.lowerBound + 2] : 0
                        )
                        size = range.count
                    }
                    return nil
                } catch {
                    return error.message
                }
            }
            self.header = header
            headerUnitSize = size
            containsSEI = sei
        }

        /// The NAL unit type of the first picture NAL unit.
        var pictureType: UInt8? {
            guard let header else { return nil }
            return codec == .h264 ? header.0 & 0x1F : (header.0 >> 1) & 0x3F
        }

        /// HEVC `TemporalId` (`nuh_temporal_id_plus1` − 1); nil for H.264.
        var temporalLayer: Int? {
            guard codec == .hevc, let header else { return nil }
            return Int(header.1 & 0x07) - 1
        }

        /// Whether other pictures may refer to this one: H.264 `nal_ref_idc`
        /// above 0; HEVC not a sub-layer non-reference type (an even type below 16).
        var isReferencePicture: Bool {
            guard let header, let type = pictureType else { return true }
            return codec == .h264 ? header.0 & 0x60 != 0 : !(type < 16 && type % 2 == 0)
        }

        /// An HEVC clean random access picture (CRA, type 21), after which
        /// leading pictures may follow that refer to the group before it.
        var isCleanRandomAccess: Bool { codec == .hevc && pictureType == 21 }
    }

    /// What follows a keyframe that may have undecodable leading pictures: an
    /// HEVC BLA (its RASL pictures are never output), a CRA decoding starts
    /// at, or an H.264 non-IDR keyframe decoding starts at.
    private static func leadingPictures(
        after keyframe: CompressedSample, _ layout: SampleLayout, startsHere: Bool
    ) -> LeadingPictures? {
        guard let type = layout.pictureType else { return nil }
        switch layout.codec {
        case .h264:
            return startsHere && type != 5 ? .h264Before(keyframe.pts) : nil
        case .hevc:
            return (16...18).contains(type) || startsHere && type == 21 ? .hevcRASL : nil
        }
    }

    private static func isLeading(_ sample: CompressedSample, _ layout: SampleLayout, _ leading: LeadingPictures)
        -> Bool
    {
        switch leading {
        case .h264Before(let pts): return sample.pts < pts
        case .hevcRASL: return layout.pictureType == 8 || layout.pictureType == 9
        }
    }

    /// Why a sample is not a whole access unit, or nil: NAL unit lengths past
    /// its end, no slice, or a first slice that does not start the picture
    /// (H.264 `first_mb_in_slice` above 0, except in Baseline streams, which
    /// may send slices in any order; HEVC `first_slice_segment_in_pic_flag` 0).
    private static func incompleteness(_ layout: SampleLayout, size: Int, _ description: FormatDescription)
        -> String?
    {
        if let malformed = layout.malformed {
            return "its \(size) bytes do not split into NAL units (\(malformed))"
        }
        guard let header = layout.header, let type = layout.pictureType else {
            return "it holds no slice of a picture"
        }
        switch layout.codec {
        case .h264:
            guard layout.headerUnitSize > 1 else {
                return "its first slice NAL unit (type \(type)) has no slice header"
            }
            // first_mb_in_slice is ue(v): 0 exactly when its first bit is 1.
            if header.1 & 0x80 == 0 && !allowsArbitrarySliceOrder(description) {
                return "its first slice does not start at the picture's first macroblock; the slices before it "
                    + "are missing"
            }
        case .hevc:
            guard layout.headerUnitSize > 2 else {
                return "its first slice NAL unit (type \(type)) has no slice header"
            }
            if header.2 & 0x80 == 0 {
                return "its first slice segment is not the picture's first (first_slice_segment_in_pic_flag 0); "
                    + "the segments before it are missing"
            }
        }
        return nil
    }

    /// H.264 Baseline without constraint_set1 (not Constrained Baseline)
    /// allows slices in any order (ASO).
    private static func allowsArbitrarySliceOrder(_ description: FormatDescription) -> Bool {
        guard description.codec == .h264, description.profile == 66,
            let sps = description.parameterSets.first(where: { $0.first.map { $0 & 0x1F == 7 } ?? false }),
            sps.count > 2
        else { return false }
        return sps[2] & 0x40 == 0
    }

    /// Whether no picture refers to the sample's: H.264 `nal_ref_idc` 0; HEVC
    /// a sub-layer non-reference type in the highest temporal layer the
    /// stream declares (hvcC `numTemporalLayers`; pictures of higher layers
    /// may refer to a lower layer's non-reference pictures).
    private static func isDisposable(_ layout: SampleLayout, _ description: FormatDescription) -> Bool {
        guard !layout.isReferencePicture else { return false }
        guard description.codec == .hevc else { return true }
        let record = description.record
        guard record.count > 21, let layer = layout.temporalLayer else { return false }
        let layers = Int(record[21] >> 3) & 0x07
        return layers > 0 && layer == layers - 1
    }

    /// A non-keyframe sample the session leaves out before decoding because
    /// it is before the seek target or late, and no picture refers to it.
    private func skipBeforeDecoding(_ sample: CompressedSample, _ layout: SampleLayout) -> (DropReport.Kind, String)? {
        if let target = preRollTarget, sample.pts < target, Self.isDisposable(layout, formatDescription) {
            return (.preRoll, "before the seek to \(target) and no picture refers to it: not decoded")
        }
        if let deadline = earliestPresentationTime, sample.pts < deadline, Self.isDisposable(layout, formatDescription)
        {
            return (
                .late,
                "late: presented before the earliest presentation time, and no picture refers to it: not decoded"
            )
        }
        return nil
    }

    /// Builds a software decoder and decodes again the samples kept since the
    /// last keyframe; pictures already delivered are not repeated.
    private func rebuildAndReplay(reason: String, disableHardware: Bool, into output: inout [DecodedFrame]) {
        if disableHardware {
            hardwareDisabled = true
            fallbackReason = reason + "; continuing in software"
        }
        do {
            decoder = try factory.software(formatDescription, threadCount)
        } catch {
            dropAllPending("\(reason); no replacement decoder: \(error.message)", kind: .decoderFailure)
            resync = Resync(reason: reason, damagedFrom: nil)
            return
        }
        let samples = replay.replayable
        let firstReplayed = samples.first?.token ?? nextToken
        for token in pending.keys.sorted() where token < firstReplayed {
            let why =
                replay.overflows > 0
                ? "its group of pictures outgrew the replay cache (\(replay.byteLimit) bytes)"
                : "no keyframe precedes it since the decoder started"
            drop(token, kind: .notReplayable, reason: "\(reason); the picture cannot be replayed: \(why)")
        }
        guard !samples.isEmpty else {
            resync = Resync(reason: reason, damagedFrom: nil)
            return
        }
        replaying = true
        defer { replaying = false }
        for sample in samples {
            // A failure during the replay is handled as bad data, so this cannot recurse.
            try? feed(sample.data, token: sample.token, isKeyframe: sample.isKeyframe, into: &output)
        }
    }

    private func beginResync(_ reason: String, from token: Int64) {
        if var current = resync {
            current.damagedFrom = min(current.damagedFrom ?? token, token)
            resync = current
        } else {
            resync = Resync(reason: reason, damagedFrom: token)
        }
    }

    /// At a keyframe after damage: takes the good pictures still inside the
    /// decoder, drops the rest, and resets it.
    private func resynchronize(into output: inout [DecodedFrame]) {
        let reason = resync?.reason ?? ""
        if !pending.isEmpty {
            do throws(DecoderFailure) {
                try decoder.sendEndOfStream()
                try receiveAll(into: &output)
            } catch {
                // Whatever did not come out is dropped below.
            }
        }
        decoder.flush()
        dropAllPending("no picture came out of the decoder (\(reason))", kind: .notReturned)
        resync = nil
    }

    private func noteSoftwareFallback() {
        if fallbackReason == nil, let reason = decoder.softwareFallbackReason {
            fallbackReason = reason
        }
    }

    private func drop(_ token: Int64, kind: DropReport.Kind, reason: String) {
        guard let info = pending.removeValue(forKey: token) else { return }
        recordDrop(DropReport(pts: info.pts, kind: kind, reason: reason))
    }

    private func dropAllPending(_ reason: String, kind: DropReport.Kind) {
        for token in pending.keys.sorted() { drop(token, kind: kind, reason: reason) }
    }

    // MARK: - Format changes

    private func reconfigure(to description: FormatDescription, isKeyframe: Bool, into output: inout [DecodedFrame])
        throws(MediaError)
    {
        try Self.checkOutput(description, outputAttributes)
        if formatDescription.canAccept(description) {
            // Same decoder: hand it the new parameter sets in-band.
            formatDescription = description
            injectParameterSets = true
            return
        }
        // Drain the old decoder so its pictures (old size) come first.
        if !pending.isEmpty {
            do throws(DecoderFailure) {
                try decoder.sendEndOfStream()
                try receiveAll(into: &output)
            } catch {
                // Leftovers are dropped below.
            }
        }
        dropAllPending("the stream format changed before this picture came out of the decoder", kind: .formatChange)
        let (backend, reason) = try Self.makeDecoder(
            description, choice: requestedBackend, threadCount: threadCount, hardwareDisabled: hardwareDisabled,
            automaticDevicePath: automaticDevicePath, factory: factory)
        decoder = backend
        if let reason, !hardwareDisabled { fallbackReason = reason }
        formatDescription = description
        bitstreamHDR10 = nil
        replay.reset()
        if !isKeyframe {
            resync = Resync(reason: "the stream format changed at a sample that is not a keyframe", damagedFrom: nil)
        } else if resync != nil {
            resync = Resync(reason: resync!.reason, damagedFrom: nil)
        }
    }

    // MARK: - Helpers

    /// Lists a dropped sample, letting the oldest entries go past twice
    /// ``maximumDropHistory`` (the total keeps counting).
    private func recordDrop(_ drop: DropReport) {
        dropLog.append(drop)
        dropTotal += 1
        if dropLog.count > 2 * Self.maximumDropHistory { dropLog.removeFirst(dropLog.count - Self.maximumDropHistory) }
    }

    private func recordRecovery(_ recovery: RecoveryReport) {
        recoveryLog.append(recovery)
        if recoveryLog.count > 2 * Self.maximumRecoveryHistory {
            recoveryLog.removeFirst(recoveryLog.count - Self.maximumRecoveryHistory)
        }
    }

    private func outputBuffer(for picture: any DecoderPicture) throws(MediaError) -> PixelBuffer {
        let native = picture.nativeFormat
        guard let format = outputAttributes.pixelFormat ?? deliveredLayout(for: native) else {
            throw .unsupported(
                "the stream decodes to \(picture.formatName), which is not an output "
                    + "format; ask for DecoderOutputAttributes(pixelFormat:) to have it converted")
        }
        let (pictureWidth, pictureHeight) = (picture.width, picture.height)
        let width = outputAttributes.width ?? pictureWidth
        let height = outputAttributes.height ?? pictureHeight
        // May leave the picture blank (its pixels move into the buffer).
        let adopted = native == nil ? nil : picture.adoptedBuffer()
        if let adopted, format == native, width == pictureWidth, height == pictureHeight {
            return adopted
        }
        let transfer = self.transfer ?? PixelTransferSession(poolCapacity: 32)
        self.transfer = transfer
        let destination: PixelBuffer
        do {
            destination = try transfer.makeBuffer(width: width, height: height, format: format)
        } catch  where error.code == .poolExhausted {
            // The caller holds many pictures: give this one its own memory.
            destination = try PixelBuffer(width: width, height: height, format: format)
        }
        if let adopted {
            try transfer.transfer(adopted, into: destination)
        } else {
            try picture.convert(into: destination, using: transfer)
        }
        return destination
    }

    /// The layout a picture in the decoder's own `native` layout is handed
    /// out in when the caller asked for none: the layout of the pictures
    /// delivered before it while the chroma sampling and bit depth stay the
    /// same, so that a hardware → software fallback (NV12 / P010 before it,
    /// I420 / I010 after) does not change the layout in the middle of a
    /// stream. The two forms hold the same samples; the repacking is exact.
    private func deliveredLayout(for native: PixelFormat?) -> PixelFormat? {
        guard let native else { return nil }
        if let pinned = pinnedLayout, pinned != native, pinned.chromaSubsampling == native.chromaSubsampling,
            pinned.bitDepth == native.bitDepth
        {
            return pinned
        }
        pinnedLayout = native
        return native
    }

    /// Checks that pictures of `description` can be output as asked.
    private static func checkOutput(_ description: FormatDescription, _ output: DecoderOutputAttributes)
        throws(MediaError)
    {
        guard output.pixelFormat == nil else { return }
        guard description.bitDepthChroma == description.bitDepth || description.chromaFormat == .monochrome,
            PixelFormat.planar(description.chromaFormat, bitDepth: description.bitDepth) != nil
        else {
            throw .unsupported(
                "\(description.codec) \(description.chromaFormat) pictures of \(description.bitDepth)-bit luma and "
                    + "\(description.bitDepthChroma)-bit chroma have no native output format (8, 10 and 12 bits "
                    + "with equal luma and chroma depths have one); pass DecoderOutputAttributes(pixelFormat:) "
                    + "to have them converted")
        }
    }

    /// Opens the decoder for `choice`; the second value says why hardware
    /// is not used when the choice allowed it.
    private static func makeDecoder(
        _ description: FormatDescription, choice: CodecBackend, threadCount: Int, hardwareDisabled: Bool,
        automaticDevicePath: String?, factory: DecoderFactory
    ) throws(MediaError) -> (any DecoderBackend, String?) {
        func software() throws(MediaError) -> any DecoderBackend {
            try factory.software(description, threadCount)
        }
        switch choice {
        case .software:
            return (try software(), nil)
        case .automatic:
            if hardwareDisabled { return (try software(), nil) }
            var reasons: [String] = []
            for device in [DecoderDevice.vaapi(path: automaticDevicePath), .cuda(index: nil)] {
                do {
                    return (try factory.hardware(description, device, true), nil)
                } catch {
                    reasons.append(error.message)
                }
            }
            return (try software(), "no hardware decoder: " + reasons.joined(separator: "; "))
        case .hardware, .vaapi, .nvdec:
            if hardwareDisabled { return (try software(), nil) }
            let devices: [DecoderDevice]
            switch choice {
            case .vaapi(let path): devices = [.vaapi(path: path)]
            case .nvdec(let index): devices = [.cuda(index: index.map(String.init))]
            default: devices = [.vaapi(path: nil), .cuda(index: nil)]
            }
            var reasons: [String] = []
            for device in devices {
                do {
                    return (try factory.hardware(description, device, false), nil)
                } catch {
                    reasons.append(error.message)
                }
            }
            throw .unavailable("no hardware decoder: " + reasons.joined(separator: "; "))
        }
    }

    /// Parameter sets as length-prefixed NAL units, to pass them in-band.
    private static func lengthPrefixed(_ units: [[UInt8]], size: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for unit in units {
            for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: unit.count >> shift))
            }
            bytes += unit
        }
        return bytes
    }
}

/// The samples a replacement decoder needs to rebuild every picture not yet
/// delivered: from the last keyframe at or before the oldest sample still in
/// flight, in decode order. Older groups are released as soon as none of
/// their pictures is pending. The cache holds at most `byteLimit` bytes; past
/// that it gives up on the group (``overflows`` counts it) and holds nothing
/// until the next keyframe.
struct ReplayCache {
    struct Sample {
        var token: Int64
        var data: [UInt8]
        var isKeyframe: Bool
        /// An HEVC CRA: the pictures after it in decode order may include
        /// RASL pictures, which decode only from the group before.
        var opensGroup: Bool
    }

    let byteLimit: Int
    private(set) var samples: [Sample] = []
    private(set) var bytes = 0
    /// Where each group of pictures starts in `samples` (the first is 0), so
    /// pruning looks at a handful of groups, not at every sample of a long one.
    private var groupStarts: [Int] = []
    /// Whether `samples` starts at a keyframe and nothing after it is missing.
    private var complete = false
    /// How many times a group outgrew `byteLimit`.
    private(set) var overflows = 0

    init(byteLimit: Int) { self.byteLimit = byteLimit }

    /// Records a sample given to the decoder; `oldestPending` is the oldest
    /// token whose picture has not come out yet (this sample's at the latest).
    mutating func record(token: Int64, data: [UInt8], isKeyframe: Bool, opensGroup: Bool, oldestPending: Int64) {
        if isKeyframe && !complete {
            reset()
            complete = true
        }
        guard complete else { return }
        if isKeyframe { groupStarts.append(samples.count) }
        samples.append(Sample(token: token, data: data, isKeyframe: isKeyframe, opensGroup: opensGroup))
        bytes += data.count
        // Keep from the last group that starts at or before the oldest pending
        // picture, or from the group before it when that one starts at a CRA
        // (its leading pictures need the earlier group).
        if var keep = groupStarts.lastIndex(where: { samples[$0].token <= oldestPending }) {
            if samples[groupStarts[keep]].opensGroup && keep > 0 { keep -= 1 }
            guard keep > 0 else { return checkLimit() }
            let start = groupStarts[keep]
            bytes -= samples[..<start].reduce(0) { $0 + $1.data.count }
            samples.removeFirst(start)
            groupStarts = groupStarts[keep...].map { $0 - start }
        }
        checkLimit()
    }

    private mutating func checkLimit() {
        if bytes > byteLimit {
            reset()
            overflows += 1
        }
    }

    /// Forgets everything (a flush, a new decoder for a new format).
    mutating func reset() {
        samples = []
        bytes = 0
        groupStarts = []
        complete = false
    }

    var replayable: [Sample] { complete ? samples : [] }
}
