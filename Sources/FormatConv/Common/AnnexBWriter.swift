/// When ``AnnexBWriter`` puts the description's parameter sets in front of a
/// sample.
public enum ParameterSetPolicy: Sendable, Hashable {
    /// Never: the receiver gets the parameter sets some other way.
    case never
    /// Before the first sample written, and again whenever the format
    /// description changes.
    case first
    /// Before every keyframe (and whenever the description changes): what a
    /// receiver joining mid-stream needs. The default.
    case beforeEveryKeyframe
}

/// Turns length-prefixed samples (AVCC / HVCC) into Annex-B access units, the
/// way a streaming server sends them.
///
/// ```swift
/// var writer = AnnexBWriter(policy: .beforeEveryKeyframe, insertAccessUnitDelimiters: true)
/// for sample in samples {
///     socket.send(try writer.write(sample))
/// }
/// ```
///
/// Every NAL unit gets a 4-byte start code (`zero_byte` + `00 00 01`, which
/// H.264 B.1.2 requires for parameter sets and for the first NAL unit of an
/// access unit). Parameter sets come from the sample's description and are
/// written once per access unit, after the access unit delimiter, skipping
/// each kind (SPS, PPS, VPS, …) that the sample already carries in band: a
/// keyframe with its own SPS and PPS gets none, one with only a PPS gets the
/// SPS. A sample is a keyframe when ``CompressedSample/isKeyframe`` says so
/// or when it holds an IDR / IRAP NAL unit.
///
/// Cost: one pass over the NAL lengths, then one allocation of the exact
/// output size. When the sample uses 4-byte lengths and nothing is inserted,
/// the length fields are overwritten with start codes in place; pass the sample
/// with `consume` (or a temporary) so that its bytes are uniquely owned and no
/// copy is made.
public struct AnnexBWriter: Sendable {
    /// When parameter sets are written.
    public var policy: ParameterSetPolicy
    /// Whether an access unit delimiter is written first when a sample lacks one.
    public var insertAccessUnitDelimiters: Bool
    /// The codec and record of the description whose parameter sets were
    /// written last (what `FormatDescription`'s `==` compares; kept apart so
    /// that the per-sample check copies no description).
    private var lastWritten: (codec: CodecType, record: [UInt8])?

    /// A writer that puts parameter sets in the stream as `policy` says, with access unit delimiters when asked.
    public init(policy: ParameterSetPolicy = .beforeEveryKeyframe, insertAccessUnitDelimiters: Bool = false) {
        self.policy = policy
        self.insertAccessUnitDelimiters = insertAccessUnitDelimiters
    }

    /// The access unit of `sample` in Annex-B form.
    ///
    /// - Throws: `.invalidData` naming the offset when the sample's NAL unit
    ///   lengths do not add up (see ``LengthPrefixed``).
    public mutating func write(_ sample: consuming CompressedSample) throws(MediaError) -> [UInt8] {
        let lengthSize = sample.formatDescription.nalUnitHeaderLength
        let (layout, sets, delimiter) = try prepare(sample)

        // The in-place case: 4-byte lengths become 4-byte start codes.
        if sets.isEmpty && delimiter.isEmpty && lengthSize == 4 && layout.isContiguous {
            var data = sample.data
            sample.data = []
            Self.replaceLengthsWithStartCodes(in: &data)
            return data
        }

        var output: [UInt8] = []
        Self.emit(sample.data, layout: layout, lengthSize: lengthSize, sets: sets, delimiter: delimiter, into: &output)
        return output
    }

    /// Writes the access unit of `sample` in Annex-B form into `output`,
    /// replacing its contents and reusing its storage.
    ///
    /// This is the form for a sender's hot loop: with one `output` kept across
    /// calls, conversion allocates nothing once the buffer has grown to the
    /// largest access unit. Unlike ``write(_:)`` it never rewrites the sample
    /// in place, so the sample's bytes are only read.
    ///
    /// - Throws: `.invalidData` naming the offset when the sample's NAL unit
    ///   lengths do not add up (see ``LengthPrefixed``); `output` is then
    ///   unchanged.
    public mutating func write(_ sample: CompressedSample, into output: inout [UInt8]) throws(MediaError) {
        let (layout, sets, delimiter) = try prepare(sample)
        let lengthSize = sample.formatDescription.nalUnitHeaderLength
        if sets.isEmpty && delimiter.isEmpty && lengthSize == 4 && layout.isContiguous {
            // Same size: one copy of the whole sample (a memcpy into the kept
            // storage, nothing zero-filled), then start codes over the lengths.
            output.removeAll(keepingCapacity: true)
            sample.data.withUnsafeBufferPointer { output.append(contentsOf: $0) }
            Self.replaceLengthsWithStartCodes(in: &output)
            return
        }
        Self.emit(sample.data, layout: layout, lengthSize: lengthSize, sets: sets, delimiter: delimiter, into: &output)
    }

    /// The access unit of `sample` in Annex-B form as a gather list: the
    /// inserted NAL units (delimiter, parameter sets, as ``write(_:)`` inserts
    /// them) and the sample's own, as byte ranges for `writev` / `sendmsg`,
    /// without copying the sample's NAL units.
    ///
    /// With 4-byte lengths (and no empty NAL units) the sample's lengths are
    /// overwritten with start codes in place, one store per NAL unit; pass the
    /// sample with `consume` (or a temporary) so that its bytes are uniquely
    /// owned — otherwise they are copied once first. With 1- or 2-byte
    /// lengths the sample's bytes are only read, and the list alternates
    /// start codes with NAL units. See ``AnnexBGatherList``.
    ///
    /// Cost: one walk over the NAL unit lengths; the only allocation is the
    /// inserted bytes, when something is inserted (keyframes under
    /// `.beforeEveryKeyframe`).
    ///
    /// - Throws: `.invalidData` naming the offset when the sample's NAL unit
    ///   lengths do not add up (see ``LengthPrefixed``).
    public mutating func gather(_ sample: consuming CompressedSample) throws(MediaError) -> AnnexBGatherList {
        let lengthSize = sample.formatDescription.nalUnitHeaderLength
        let (layout, sets, delimiter) = try prepare(sample)
        var inserted: [UInt8] = []
        if !sets.isEmpty || !delimiter.isEmpty {
            var total = delimiter.isEmpty ? 0 : 4 + delimiter.count
            for set in sets { total += 4 + set.count }
            inserted = [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
                var offset = 0
                for unit in delimiter.isEmpty ? sets : [delimiter] + sets {
                    output[offset] = 0
                    output[offset + 1] = 0
                    output[offset + 2] = 0
                    output[offset + 3] = 1
                    unit.withUnsafeBytes { copyBytes(from: $0, 0..<$0.count, to: output, at: offset + 4) }
                    offset += 4 + unit.count
                }
                initialized = offset
            }
        }
        // After a leading delimiter of the sample's own, unless one is inserted.
        let insertAfterFirst = layout.startsWithDelimiter && delimiter.isEmpty
        var data = sample.data
        sample.data = []
        if lengthSize == 4 && layout.isContiguous {
            // The first NAL unit's end, read before its length is overwritten.
            let insertAt =
                insertAfterFirst
                ? data.withUnsafeBytes { 4 + LengthPrefixed.loadLength($0, at: 0, size: 4) } : 0
            Self.replaceLengthsWithStartCodes(in: &data)
            return AnnexBGatherList(
                sampleBytes: data, insertedBytes: inserted, shape: .annexB(insertAt: insertAt),
                unitCount: layout.unitCount, payloadBytes: layout.payloadTotal)
        }
        return AnnexBGatherList(
            sampleBytes: data, insertedBytes: inserted,
            shape: .lengthPrefixed(lengthSize: lengthSize, insertAfterFirst: insertAfterFirst),
            unitCount: layout.unitCount, payloadBytes: layout.payloadTotal)
    }

    /// Overwrites each 4-byte length of contiguous, validated length-prefixed
    /// NAL units with a 4-byte start code, in place.
    private static func replaceLengthsWithStartCodes(in data: inout [UInt8]) {
        data.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let length = LengthPrefixed.loadLength(UnsafeRawBufferPointer(buffer), at: offset, size: 4)
                buffer.storeBytes(of: UInt32(1).bigEndian, toByteOffset: offset, as: UInt32.self)
                offset += 4 + length
            }
        }
    }

    /// Pass 1 and the decisions that follow: the sample's layout, the
    /// parameter sets to insert before it and the delimiter to put first.
    private mutating func prepare(
        _ sample: borrowing CompressedSample
    ) throws(MediaError) -> (Layout, [[UInt8]], [UInt8]) {
        let description = sample.formatDescription
        let codec = description.codec
        let layout = try Layout(of: sample.data, lengthSize: description.nalUnitHeaderLength, codec: codec)
        let isKeyframe = sample.isKeyframe || layout.holdsKeyframe
        let sets = parameterSetsToInsert(
            description: description, isKeyframe: isKeyframe, inBandSets: layout.inBandSets)
        let delimiter: [UInt8] =
            insertAccessUnitDelimiters && !layout.startsWithDelimiter
            ? Self.accessUnitDelimiter(codec: codec, isKeyframe: isKeyframe) : []
        return (layout, sets, delimiter)
    }

    /// Pass 1 over a sample: what its NAL units hold and how they lie.
    private struct Layout {
        var payloadTotal = 0
        var unitCount = 0
        /// The kinds of parameter set carried in-band (``NALUnitKind/parameterSetBit``).
        var inBandSets: UInt32 = 0
        var startsWithDelimiter = false
        var holdsKeyframe = false
        /// Whether the NAL units follow each other with nothing in between.
        var isContiguous = true

        init(of data: [UInt8], lengthSize: Int, codec: CodecType) throws(MediaError) {
            if lengthSize == 4, let layout = data.withUnsafeBytes({ Self.withFourByteLengths($0, codec: codec) }) {
                self = layout
                return
            }
            var layout = Layout()
            try data.withBytes { (buffer) throws(MediaError) in
                var previousEnd = 0
                try LengthPrefixed.forEachNALUnit(in: buffer, lengthSize: lengthSize, codec: codec) {
                    (range) throws(MediaError) in
                    let kind = NALUnitKind(codec: codec, UnsafeRawBufferPointer(rebasing: buffer[range]))
                    if layout.unitCount == 0 { layout.startsWithDelimiter = kind.isAccessUnitDelimiter }
                    if kind.isParameterSet { layout.inBandSets |= kind.parameterSetBit }
                    if kind.isKeyframe { layout.holdsKeyframe = true }
                    if range.lowerBound - lengthSize != previousEnd { layout.isContiguous = false }
                    previousEnd = range.upperBound
                    layout.payloadTotal += range.count
                    layout.unitCount += 1
                }
                if previousEnd != buffer.count { layout.isContiguous = false }
            }
            self = layout
        }

        private init() {}

        /// The common case, 4-byte lengths, in one loop with plain loads; nil
        /// when anything is malformed, so that the checked walk above reports
        /// it.
        @inline(__always)
        private static func withFourByteLengths(_ buffer: UnsafeRawBufferPointer, codec: CodecType) -> Layout? {
            var layout = Layout()
            let count = buffer.count
            guard count > 0, let base = buffer.baseAddress else { return layout }
            let headerSize = codec.nalHeaderSize
            var offset = 0
            while offset < count {
                guard count - offset >= 4 else { return nil }
                let length = Int(UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                let start = offset + 4
                guard length <= count - start else { return nil }
                if length == 0 {
                    layout.isContiguous = false
                } else {
                    guard length >= headerSize else { return nil }
                    let kind = NALUnitKind(codec: codec, UnsafeRawBufferPointer(start: base + start, count: length))
                    if layout.unitCount == 0 { layout.startsWithDelimiter = kind.isAccessUnitDelimiter }
                    if kind.isParameterSet { layout.inBandSets |= kind.parameterSetBit }
                    if kind.isKeyframe { layout.holdsKeyframe = true }
                    layout.payloadTotal += length
                    layout.unitCount += 1
                }
                offset = start + length
            }
            return layout
        }
    }

    /// The description's parameter sets this access unit needs under the
    /// policy, minus those it already carries; records what was written.
    private mutating func parameterSetsToInsert(
        description: FormatDescription, isKeyframe: Bool, inBandSets: UInt32
    ) -> [[UInt8]] {
        let descriptionChanged =
            lastWritten.map { $0.codec != description.codec || $0.record != description.record } ?? true
        let writeSets: Bool
        switch policy {
        case .never: writeSets = false
        case .first: writeSets = descriptionChanged
        case .beforeEveryKeyframe: writeSets = isKeyframe || descriptionChanged
        }
        guard writeSets else { return [] }
        lastWritten = (description.codec, description.record)
        let codec = description.codec
        var sets: [[UInt8]] = []
        for set in description.parameterSets where set.count >= codec.nalHeaderSize {
            let kind = set.withUnsafeBytes { NALUnitKind(codec: codec, $0) }
            if inBandSets & kind.parameterSetBit == 0 { sets.append(set) }
        }
        return sets
    }

    /// Pass 2: start codes, inserted delimiter and parameter sets, and the
    /// sample's NAL units, into `output`.
    private static func emit(
        _ data: [UInt8], layout: Layout, lengthSize: Int, sets: [[UInt8]], delimiter: [UInt8],
        into output: inout [UInt8]
    ) {
        let startsWithDelimiter = layout.startsWithDelimiter
        let unitCount = layout.unitCount
        var total = 4 * unitCount + layout.payloadTotal
        if !delimiter.isEmpty { total += 4 + delimiter.count }
        for set in sets { total += 4 + set.count }
        data.withUnsafeBytes { input in
            output.overwrite(count: total) { output in
                var offset = 0
                func put(_ range: Range<Int>, of source: UnsafeRawBufferPointer) {
                    output[offset] = 0
                    output[offset + 1] = 0
                    output[offset + 2] = 0
                    output[offset + 3] = 1
                    copyBytes(from: source, range, to: output, at: offset + 4)
                    offset += 4 + range.count
                }
                func putSets() {
                    for set in sets {
                        set.withUnsafeBytes { put(0..<$0.count, of: $0) }
                    }
                }
                if !delimiter.isEmpty {
                    delimiter.withUnsafeBytes { put(0..<$0.count, of: $0) }
                    putSets()
                }
                var index = 0
                // Validated in pass 1; this walk cannot fail.
                try? LengthPrefixed.scan(input, lengthSize: lengthSize, minimumSize: 1) { range in
                    if index == 0 && startsWithDelimiter {
                        put(range, of: input)
                        putSets()
                    } else {
                        if index == 0 && delimiter.isEmpty { putSets() }
                        put(range, of: input)
                    }
                    index += 1
                }
                if unitCount == 0 && delimiter.isEmpty { putSets() }
                precondition(offset == total, "Annex-B size \(offset) differs from the planned \(total)")
            }
        }
    }

    /// Converts length-prefixed NAL units to Annex-B with 4-byte start codes,
    /// inserting nothing; zero-length NAL units are dropped.
    public static func annexB(
        fromLengthPrefixed bytes: consuming [UInt8], lengthSize: Int
    ) throws(MediaError) -> [UInt8] {
        var total = 0
        var contiguous = true
        try bytes.withBytes { (buffer) throws(MediaError) in
            var previousEnd = 0
            try LengthPrefixed.forEachNALUnit(in: buffer, lengthSize: lengthSize) { range in
                if range.lowerBound - lengthSize != previousEnd { contiguous = false }
                previousEnd = range.upperBound
                total += 4 + range.count
            }
            if previousEnd != buffer.count { contiguous = false }
        }
        if lengthSize == 4 && contiguous {
            var data = bytes
            Self.replaceLengthsWithStartCodes(in: &data)
            return data
        }
        let source = bytes
        return source.withUnsafeBytes { input in
            [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
                var offset = 0
                try? LengthPrefixed.scan(input, lengthSize: lengthSize, minimumSize: 1) { range in
                    output[offset] = 0
                    output[offset + 1] = 0
                    output[offset + 2] = 0
                    output[offset + 3] = 1
                    copyBytes(from: input, range, to: output, at: offset + 4)
                    offset += 4 + range.count
                }
                initialized = offset
            }
        }
    }

    /// An access unit delimiter NAL unit. H.264 7.3.2.4: `primary_pic_type`
    /// 0 (I slices only) for a keyframe, 7 (any slice type) otherwise, then the
    /// stop bit. H.265 7.3.2.5: `pic_type` 0 (I) or 2 (B, P, I), then the stop
    /// bit; `nuh_temporal_id_plus1` 1.
    static func accessUnitDelimiter(codec: CodecType, isKeyframe: Bool) -> [UInt8] {
        switch codec {
        case .h264: [0x09, isKeyframe ? 0x10 : 0xF0]
        case .hevc: [0x46, 0x01, isKeyframe ? 0x10 : 0x50]
        }
    }
}
