// Over 400 lines on purpose: the assembler is one state machine (append,
// NAL units, emit, compaction) over private state; the access unit boundary
// rules are in AccessUnitAssembler+Boundary.swift.

/// What ``AccessUnitAssembler`` produces.
public enum AssemblerOutput: Sendable {
    /// A complete access unit in length-prefixed form.
    case sample(CompressedSample)
    /// NAL units that could not become a sample, and why: slices before their
    /// parameter sets (a receiver joining mid-stream), a malformed parameter
    /// set, NAL units after the last picture. Nothing is dropped silently.
    case dropped(reason: String, nalUnitCount: Int)
}

/// Turns an Annex-B byte stream, in chunks of any size as they come off a
/// socket or a pipe, into complete access units as ``CompressedSample``s.
///
/// ```swift
/// var assembler = AccessUnitAssembler(codec: .h264)
/// while let chunk = try socket.read() {
///     for output in try assembler.append(chunk) {
///         if case .sample(let sample) = output { try decoder.decode(sample) }
///     }
/// }
/// let last = assembler.finish()   // the last access unit
/// ```
///
/// Access units are delimited with the standard's first-NAL-unit rules:
/// after a picture's last VCL NAL unit, an AUD, a parameter set, an SEI (H.264;
/// prefix SEI for HEVC) or a reserved type listed in H.264 7.4.1.2.3 /
/// H.265 7.4.2.4.4 starts the next access unit, and so does the first slice of
/// a new picture. For H.264 a slice starts a new picture (7.4.1.2.4) when
/// `first_mb_in_slice` is 0 or does not increase, or when `pic_parameter_set_id`,
/// the IDR-ness or the zero-ness of `nal_ref_idc` differ from the previous
/// slice; slices of arbitrary slice order (Baseline ASO) are therefore not
/// supported. For HEVC it is `first_slice_segment_in_pic_flag` of a base-layer
/// slice.
///
/// AUDs are removed; parameter sets are kept per id and lifted into the
/// sample's ``FormatDescription``; a new description is made when they change.
/// A sample is a keyframe when it holds an IDR picture (H.264), a base-layer
/// IRAP picture (HEVC, types 16 to 23), or an H.264 recovery point SEI
/// (D.2.8), which is how FFmpeg flags keyframes too; streams cut from a
/// broadcast or encoded with open GOPs start at such a picture.
///
/// Until a keyframe whose parameter sets have all arrived, access units are
/// reported as ``AssemblerOutput/dropped(reason:nalUnitCount:)``: a receiver
/// that joins mid-stream starts at the next keyframe.
///
/// Timestamps: Annex-B carries none, so samples are numbered in decode order
/// and `pts == dts == n × frameDuration`, where the frame duration is the one
/// given to `init`, else the description's VUI timing, else 1/30 s. Streams
/// with frame reordering get presentation times only from their container or
/// from the decoder.
///
/// Chunk boundaries never change the result: a NAL unit is handled only once
/// the start code after it has arrived (or at ``finish()``).
///
/// Memory is bounded: an access unit in progress (its NAL units, and a NAL
/// unit whose end has not arrived) may hold at most
/// ``maximumAccessUnitSize`` bytes. Past that — a peer sending one endless NAL
/// unit, say — the access unit is dropped and reported, the bytes up to the
/// next start code are discarded as they arrive, and samples resume at the
/// next keyframe. (Only here can chunking matter: the drop happens at the
/// first `append` that crosses the limit.)
public struct AccessUnitAssembler: Sendable {
    /// The default ``maximumAccessUnitSize``: 64 MiB, several times the
    /// largest coded picture of an 8K stream at high quality.
    public static let defaultMaximumAccessUnitSize = 64 << 20

    /// The stream's codec.
    public let codec: CodecType
    /// The most bytes one access unit in progress may hold (see the type's notes).
    public let maximumAccessUnitSize: Int
    /// The frame duration given to `init`; nil means VUI timing, else 1/30 s.
    public let frameDuration: MediaTime?
    /// The length-prefix size of the samples: 1, 2 or 4.
    public let nalUnitHeaderLength: Int

    /// Bytes not yet handed out.
    private var buffer: [UInt8] = []
    /// Where the next search for a start code begins.
    private var scanFrom = 0
    /// The offset just after the start code of the NAL unit in progress.
    private var pendingStart: Int?
    /// The access unit being gathered: NAL ranges into `buffer`.
    private var unit = UnitState()
    private var store: ParameterSetStore
    private var storeChanged = false
    /// The SPS id the current description was made active with.
    private var activeSPS: Int?
    /// The last PPS id looked up and the SPS id it names; cleared when a
    /// parameter set changes.
    private var activeSPSLookup: (ppsId: Int, spsId: Int?)?
    /// The last answer of ``isDecodable(ppsId:)``; cleared with the one above.
    private var decodableLookup: (ppsId: Int, decodable: Bool)?
    /// Storage for `append`'s list of completed NAL units, kept across calls.
    private var completedScratch: [Range<Int>] = []
    private var description: FormatDescription?
    /// Whether a keyframe with its parameter sets has been seen.
    private var synchronized = false
    /// Why samples wait for a keyframe again (an oversized access unit).
    private var resyncReason: String?
    private var nextTime: MediaTime?

    private struct UnitState {
        var ranges: [Range<Int>] = []
        var hasVCL = false
        var isKeyframe = false
        /// H.264: an SEI of the access unit carries a recovery point.
        var hasRecoveryPoint = false
        var isReferenced = false
        var payloadBytes = 0
        /// The PPS id of the first slice, -1 when unknown.
        var ppsId = -1
        var lastSlice: SliceStart?
    }

    /// - Parameters:
    ///   - codec: the stream's codec.
    ///   - frameDuration: the duration of one access unit; nil uses the VUI
    ///     timing of the stream, or 1/30 s without one.
    ///   - nalUnitHeaderLength: the length-prefix size of the samples, 1, 2 or
    ///     4 (anything else is a precondition failure).
    ///   - maximumAccessUnitSize: the most bytes an access unit in progress
    ///     may hold (at least 1 024).
    public init(
        codec: CodecType, frameDuration: MediaTime? = nil, nalUnitHeaderLength: Int = 4,
        maximumAccessUnitSize: Int = defaultMaximumAccessUnitSize
    ) {
        precondition(maximumAccessUnitSize >= 1024, "maximumAccessUnitSize must be at least 1024")
        self.maximumAccessUnitSize = maximumAccessUnitSize
        precondition(
            [1, 2, 4].contains(nalUnitHeaderLength), "nalUnitHeaderLength must be 1, 2 or 4, not \(nalUnitHeaderLength)"
        )
        precondition(frameDuration.map { $0.isValid && $0 > .zero } ?? true, "frameDuration must be positive")
        self.codec = codec
        self.frameDuration = frameDuration
        self.nalUnitHeaderLength = nalUnitHeaderLength
        self.store = ParameterSetStore(codec: codec, nalUnitHeaderLength: nalUnitHeaderLength)
    }

    /// The format description of the last sample, if any.
    public var currentFormatDescription: FormatDescription? { description }

    /// Adds the next bytes of the stream; returns the access units completed
    /// by them (in decode order) and any drop reports.
    public mutating func append(_ bytes: some Collection<UInt8>) -> [AssemblerOutput] {
        // Contiguous input (an array, a buffer pointer, Data) is copied with
        // one memcpy; this generic function is not specialized for the
        // caller's type, so the element-wise path would be taken otherwise.
        let copied: Void? = bytes.withContiguousStorageIfAvailable { buffer.append(contentsOf: $0) }
        if copied == nil { buffer.append(contentsOf: bytes) }
        // The NAL units completed by these bytes; the array's storage is kept
        // across calls.
        var completed = completedScratch
        completedScratch = []
        defer {
            completed.removeAll(keepingCapacity: true)
            completedScratch = completed
        }
        let resumeAt = scanFrom
        let pending = pendingStart
        let (newScanFrom, newPending) = buffer.withUnsafeBytes { input in
            var scanFrom = resumeAt
            var pendingStart = pending
            while true {
                let startCode = AnnexB.findStartCode(in: input, from: scanFrom)
                guard startCode < input.count else {
                    // The last two bytes may begin a start code that the next
                    // chunk completes.
                    scanFrom = max(scanFrom, input.count - 2)
                    break
                }
                if let start = pendingStart {
                    let end = AnnexB.trimmingTrailingZeros(in: input, from: start, to: startCode)
                    if end > start { completed.append(start..<end) }
                }
                pendingStart = startCode + 3
                scanFrom = startCode + 3
            }
            return (scanFrom, pendingStart)
        }
        scanFrom = newScanFrom
        pendingStart = newPending
        var outputs: [AssemblerOutput] = []
        for range in completed { handle(range, into: &outputs) }
        dropOversizedAccessUnit(into: &outputs)
        compact()
        return outputs
    }

    /// The bytes the access unit in progress holds: its NAL units and the one
    /// whose end has not arrived.
    package var bytesInProgress: Int {
        guard let first = unit.ranges.first?.lowerBound ?? pendingStart else { return 0 }
        return buffer.count - first
    }

    /// Drops the access unit in progress when it holds more than
    /// ``maximumAccessUnitSize`` bytes, and waits for the next keyframe.
    private mutating func dropOversizedAccessUnit(into outputs: inout [AssemblerOutput]) {
        guard bytesInProgress > maximumAccessUnitSize else { return }
        // When the unending NAL unit would start the next access unit, the
        // one gathered before it is complete: hand it out, drop only the rest.
        if let start = pendingStart, unit.hasVCL, startsNewAccessUnit(at: start) { emit(into: &outputs) }
        let count = unit.ranges.count + (pendingStart == nil ? 0 : 1)
        let reason = "an access unit grew past the maximum of \(maximumAccessUnitSize) bytes"
        outputs.append(
            .dropped(
                reason: "\(reason); dropped, and its bytes up to the next start code discarded",
                nalUnitCount: count))
        unit = UnitState()
        pendingStart = nil
        scanFrom = max(scanFrom, buffer.count - 2)
        if synchronized {
            synchronized = false
            resyncReason = reason
        }
    }

    /// Ends the stream: the last NAL unit (which no start code terminates) and
    /// the last access unit are handed out. The assembler is then empty and
    /// may be used for a new stream with the same parameter sets.
    public mutating func finish() -> [AssemblerOutput] {
        var outputs: [AssemblerOutput] = []
        if let start = pendingStart {
            let end = buffer.withUnsafeBytes { AnnexB.trimmingTrailingZeros(in: $0, from: start, to: $0.count) }
            if end > start { handle(start..<end, into: &outputs) }
        }
        emit(into: &outputs)
        buffer = []
        scanFrom = 0
        pendingStart = nil
        return outputs
    }

    // MARK: - NAL units

    private mutating func handle(_ range: Range<Int>, into outputs: inout [AssemblerOutput]) {
        guard range.count >= codec.nalHeaderSize else {
            outputs.append(
                .dropped(
                    reason: "\(codec) NAL unit of \(range.count) byte(s) is shorter than its header", nalUnitCount: 1))
            return
        }
        let (kind, slice) = buffer.withUnsafeBytes { input in
            Self.classify(UnsafeRawBufferPointer(rebasing: input[range]), codec: codec)
        }
        if unit.hasVCL && beginsAccessUnit(kind, slice) { emit(into: &outputs) }
        if kind.isAccessUnitDelimiter { return }
        if kind.isParameterSet {
            let nal = Array(buffer[range])
            // Answers about the stored sets are asked again after any update.
            activeSPSLookup = nil
            decodableLookup = nil
            do {
                if try store.update(nal: nal) { storeChanged = true }
            } catch {
                outputs.append(.dropped(reason: "malformed parameter set: \(error.message)", nalUnitCount: 1))
            }
            return
        }
        if kind.isVCL, let slice {
            if !unit.hasVCL {
                unit.ppsId = slice.ppsId
            }
            // Partitions B and C carry no slice header to compare with.
            if slice.firstMacroblock != Int.max { unit.lastSlice = slice }
            unit.hasVCL = true
            if kind.isKeyframe { unit.isKeyframe = true }
            if kind.isReferencedByOthers && kind.layerId == 0 { unit.isReferenced = true }
        } else {
            if codec == .h264 && kind.type == H264NALUnitType.sei.rawValue
                && H264SEI.containsRecoveryPoint(buffer[range])
            {
                unit.hasRecoveryPoint = true
            }
        }
        unit.ranges.append(range)
        unit.payloadBytes += range.count
    }

    /// A NAL unit's kind and, for a slice, the start of its header.
    private static func classify(_ bytes: UnsafeRawBufferPointer, codec: CodecType) -> (NALUnitKind, SliceStart?) {
        let kind = NALUnitKind(codec: codec, bytes)
        return (kind, kind.isVCL ? SliceStart(codec: codec, kind: kind, bytes) : nil)
    }

    /// The first-NAL-unit rule (H.264 7.4.1.2.3, H.265 7.4.2.4.4): whether a
    /// NAL unit of `kind` begins a new access unit after the gathered one,
    /// which holds a picture.
    private func beginsAccessUnit(_ kind: NALUnitKind, _ slice: SliceStart?) -> Bool {
        if kind.isAccessUnitDelimiter { return true }
        guard kind.isVCL, let slice else { return kind.startsAccessUnitAfterVCL }
        return slice.startsNewPicture(after: unit.lastSlice)
    }

    /// Whether the NAL unit starting at `start` (whose end has not arrived)
    /// begins a new access unit, judged from its first bytes by the same rule.
    private func startsNewAccessUnit(at start: Int) -> Bool {
        let available = min(buffer.count - start, 64)
        guard available >= codec.nalHeaderSize else { return false }
        let (kind, slice) = buffer.withUnsafeBytes { input in
            Self.classify(UnsafeRawBufferPointer(rebasing: input[start..<start + available]), codec: codec)
        }
        return beginsAccessUnit(kind, slice)
    }

    /// Hands out the gathered access unit (or the reason it cannot be one).
    private mutating func emit(into outputs: inout [AssemblerOutput]) {
        var state = unit
        unit = UnitState()
        // The next access unit reuses the storage of this one's range list.
        defer {
            state.ranges.removeAll(keepingCapacity: true)
            unit.ranges = state.ranges
        }
        guard !state.ranges.isEmpty else { return }
        // A recovery point is a random access point too (H.264 D.2.8); FFmpeg
        // flags such pictures as keyframes and so do we.
        state.isKeyframe = state.isKeyframe || state.hasRecoveryPoint
        guard state.hasVCL else {
            outputs.append(
                .dropped(
                    reason: "\(state.ranges.count) NAL unit(s) without a picture after the last access unit",
                    nalUnitCount: state.ranges.count))
            return
        }
        let decodable = isDecodable(ppsId: state.ppsId)
        guard decodable else {
            if synchronized { advanceTime() }
            let which = state.ppsId >= 0 ? "PPS id \(state.ppsId) or the SPS/VPS it names" : "its parameter sets"
            outputs.append(
                .dropped(
                    reason: "access unit refers to \(which), which has not arrived", nalUnitCount: state.ranges.count))
            return
        }
        if !synchronized {
            guard state.isKeyframe else {
                let reason =
                    resyncReason.map { "access unit after \($0); samples resume at the next keyframe" }
                    ?? "access unit before the first keyframe; decoding starts at a keyframe"
                outputs.append(.dropped(reason: reason, nalUnitCount: state.ranges.count))
                return
            }
            resyncReason = nil
        }
        let spsId = activeSequenceParameterSetID(ppsId: state.ppsId)
        if storeChanged || description == nil || (spsId != nil && spsId != activeSPS) {
            do {
                let made = try store.makeDescription(activeSequenceParameterSetID: spsId)
                if made != description { description = made }
                storeChanged = false
                activeSPS = spsId
            } catch {
                outputs.append(
                    .dropped(
                        reason: "no format description from the parameter sets: \(error.message)",
                        nalUnitCount: state.ranges.count))
                return
            }
        }
        guard let description else { return }
        let lengthSize = nalUnitHeaderLength
        let limit = LengthPrefixed.maximumLength(lengthSize)
        if let long = state.ranges.first(where: { $0.count > limit }) {
            outputs.append(
                .dropped(
                    reason: "a NAL unit of \(long.count) bytes does not fit a \(lengthSize)-byte length",
                    nalUnitCount: state.ranges.count))
            return
        }
        synchronized = true
        let total = state.payloadBytes + lengthSize * state.ranges.count
        let data = buffer.withUnsafeBytes { input in
            [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
                var offset = 0
                for range in state.ranges {
                    LengthPrefixed.storeLength(range.count, size: lengthSize, into: output, at: offset)
                    copyBytes(from: input, range, to: output, at: offset + lengthSize)
                    offset += lengthSize + range.count
                }
                initialized = offset
            }
        }
        let duration = frameDuration ?? description.vuiFrameRate ?? MediaTime(value: 1, timescale: 30)
        let time = nextTime ?? MediaTime(value: 0, timescale: duration.timescale)
        nextTime = time + duration
        outputs.append(
            .sample(
                CompressedSample(
                    data: data, formatDescription: description, pts: time, dts: time, duration: duration,
                    isKeyframe: state.isKeyframe, dependsOnOthers: state.isReferenced)))
    }

    /// Whether the parameter sets a picture referring to PPS `ppsId` needs
    /// have all arrived (any complete set when the id is unknown, −1); the
    /// last answer is kept until a parameter set changes.
    private mutating func isDecodable(ppsId: Int) -> Bool {
        if let lookup = decodableLookup, lookup.ppsId == ppsId { return lookup.decodable }
        let decodable = ppsId >= 0 ? store.canDecodeSlice(referringToPictureParameterSet: ppsId) : store.isComplete
        decodableLookup = (ppsId, decodable)
        return decodable
    }

    /// The SPS id named by the stored PPS `ppsId` (H.264 7.3.2.2, H.265 7.3.2.3.1);
    /// the last answer is kept until a parameter set changes.
    private mutating func activeSequenceParameterSetID(ppsId: Int) -> Int? {
        if let lookup = activeSPSLookup, lookup.ppsId == ppsId { return lookup.spsId }
        var spsId: Int?
        if ppsId >= 0, let pps = store.pictureParameterSet(id: ppsId) {
            switch codec {
            case .h264: spsId = try? H264PictureParameterSetIDs(nal: pps).seq_parameter_set_id
            case .hevc: spsId = try? HEVCPictureParameterSet(nal: pps).pps_seq_parameter_set_id
            }
        }
        activeSPSLookup = (ppsId, spsId)
        return spsId
    }

    private mutating func advanceTime() {
        guard let time = nextTime else { return }
        let duration = frameDuration ?? description?.vuiFrameRate ?? MediaTime(value: 1, timescale: 30)
        nextTime = time + duration
    }

    /// Drops the bytes no pending NAL unit or access unit refers to.
    private mutating func compact() {
        var keepFrom = max(0, (pendingStart ?? scanFrom) - 4)
        if let first = unit.ranges.first { keepFrom = min(keepFrom, first.lowerBound) }
        keepFrom = min(keepFrom, scanFrom)
        guard keepFrom >= 4096, keepFrom * 2 >= buffer.count else { return }
        buffer.removeSubrange(0..<keepFrom)
        scanFrom -= keepFrom
        pendingStart = pendingStart.map { $0 - keepFrom }
        unit.ranges = unit.ranges.map { ($0.lowerBound - keepFrom)..<($0.upperBound - keepFrom) }
    }
}

/// The first syntax elements of a slice header, enough to tell whether a
/// slice starts a new picture and which PPS it uses.
package struct SliceStart: Sendable, Hashable {
    var codec: CodecType
    /// H.264 `first_mb_in_slice`; for HEVC 0 when
    /// `first_slice_segment_in_pic_flag` is set, else 1.
    package var firstMacroblock: Int
    /// `pic_parameter_set_id` / `slice_pic_parameter_set_id`; −1 when unreadable.
    package var ppsId: Int
    var isIDR: Bool
    var isReference: Bool
    /// Whether this slice belongs to the base layer (always for H.264).
    var isBaseLayer: Bool

    /// Reads the start of the slice header of `bytes` (a whole VCL NAL unit).
    /// H.264 7.3.3: `first_mb_in_slice` ue(v), `slice_type` ue(v),
    /// `pic_parameter_set_id` ue(v). H.265 7.3.6.1:
    /// `first_slice_segment_in_pic_flag` u(1), `no_output_of_prior_pics_flag`
    /// u(1) for IRAP types, `slice_pic_parameter_set_id` ue(v).
    package init(codec: CodecType, kind: NALUnitKind, _ bytes: UnsafeRawBufferPointer) {
        self.codec = codec
        isIDR = kind.isKeyframe
        isReference = kind.isReferencedByOthers
        isBaseLayer = kind.layerId == 0
        let header = codec.nalHeaderSize
        // 24 escaped bytes hold far more than the three exp-Golomb codes.
        var reader = SliceHeaderBits(UnsafeRawBufferPointer(rebasing: bytes[header..<min(bytes.count, header + 24)]))
        switch codec {
        case .h264:
            // Partitions B and C (types 3 and 4) start with slice_id, not with
            // the slice header; they never start a picture.
            if kind.type == 3 || kind.type == 4 {
                firstMacroblock = Int.max
                ppsId = -1
                return
            }
            firstMacroblock = reader.ue()
            _ = reader.ue()
            ppsId = reader.ue()
        case .hevc:
            firstMacroblock = reader.flag() ? 0 : 1
            if (16...23).contains(kind.type) { _ = reader.flag() }
            ppsId = reader.ue()
        }
        if reader.overrun {
            ppsId = -1
            if reader.bitCount == 0 { firstMacroblock = codec == .h264 ? Int.max : 1 }
        }
    }

    /// Whether this slice is the first of a new picture when `previous` was
    /// the last slice of the current one (H.264 7.4.1.2.4, H.265 7.4.2.4.4).
    package func startsNewPicture(after previous: SliceStart?) -> Bool {
        switch codec {
        case .h264:
            guard let previous else { return true }
            if firstMacroblock == Int.max { return false }
            return firstMacroblock == 0 || firstMacroblock <= previous.firstMacroblock
                || (ppsId != previous.ppsId && ppsId >= 0 && previous.ppsId >= 0)
                || isIDR != previous.isIDR || isReference != previous.isReference
        case .hevc:
            return isBaseLayer && firstMacroblock == 0
        }
    }
}
