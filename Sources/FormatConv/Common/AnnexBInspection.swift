// What an Annex-B stream holds, as values: access units, keyframes, format
// descriptions, the NAL units left out, and each NAL unit's header.

import MediaCore

/// What an Annex-B H.264/HEVC stream holds, as values an app can print or
/// check: its access units and keyframes as an ``AccessUnitAssembler``
/// finds them, one ``FormatDescription`` per format in stream order, the
/// NAL units the assembler left out (counted per reason), and every NAL
/// unit with its header decoded (``forEachNALUnit(_:)``).
///
/// ```swift
/// let bytes: [UInt8] = [0, 0, 0, 1, 0x09, 0xF0]  // one access unit delimiter
/// let inspection = AnnexBInspection(bytes: bytes, codec: .h264)
/// print(inspection.nalUnitCount, inspection.accessUnits, inspection.keyframes)
/// inspection.forEachNALUnit { print($0.offset, $0.name) }
/// ```
///
/// A stream with no decodable access unit (no keyframe, say) is still
/// described from the parameter sets it carries, when they are complete.
/// The NAL unit list is produced on request, never held whole: a stream of
/// millions of tiny NAL units costs no memory beyond its bytes.
public struct AnnexBInspection: Sendable {
    /// One NAL unit, its header decoded (H.264 7.3.1, H.265 7.3.1.2).
    /// `offset` is where its start code (Annex-B) or length prefix (a
    /// container's sample number `sample`) begins; `size` excludes it.
    public struct NALUnit: Sendable, Hashable {
        /// The sample that holds it (length-prefixed samples), else nil.
        public var sample: Int?
        /// Where its start code or length prefix begins.
        public var offset: Int
        /// Its size without the start code or length prefix.
        public var size: Int
        /// `nal_unit_type` (0 for a truncated HEVC unit).
        public var type = 0
        /// The type's name ("SPS", "IDR_W_RADL", …), or "truncated".
        public var name = "truncated"
        /// HEVC: `nuh_layer_id`.
        public var layerId: Int?
        /// HEVC: `TemporalId` (`nuh_temporal_id_plus1` − 1).
        public var temporalId: Int?

        /// The NAL unit at `range` of `bytes`; an HEVC unit shorter than its
        /// 2-byte header is named "truncated".
        public init(sample: Int? = nil, offset: Int, range: Range<Int>, of bytes: [UInt8], codec: CodecType) {
            self.sample = sample
            self.offset = offset
            size = range.count
            guard range.lowerBound < bytes.count else { return }
            let start = range.lowerBound
            switch codec {
            case .h264:
                let header = H264NALUnitHeader(bytes[start])
                type = Int(header.type.rawValue)
                name = header.type.name
            case .hevc:
                guard range.count >= 2 else { return }
                let header = HEVCNALUnitHeader(bytes[start], bytes[start + 1])
                type = Int(header.type.rawValue)
                name = header.type.name
                layerId = header.layerId
                temporalId = header.temporalId
            }
        }
    }

    /// The codec the stream was read as.
    public let codec: CodecType
    /// The stream's bytes.
    public let bytes: [UInt8]
    /// Access units the assembler made.
    public private(set) var accessUnits = 0
    /// Those of them that are keyframes.
    public private(set) var keyframes = 0
    /// One description per format, in stream order.
    public private(set) var descriptions: [FormatDescription] = []
    /// The NAL units the assembler left out: one entry per distinct reason,
    /// its count the NAL units.
    public private(set) var dropped = ReasonTally()
    /// Every NAL unit (start code to start code).
    public private(set) var nalUnitCount = 0

    /// Reads `bytes` as an Annex-B stream of `codec`.
    public init(bytes: [UInt8], codec: CodecType) {
        self.codec = codec
        self.bytes = bytes
        var assembler = AccessUnitAssembler(codec: codec)
        for output in assembler.append(bytes) + assembler.finish() {
            switch output {
            case .sample(let sample):
                accessUnits += 1
                if sample.isKeyframe { keyframes += 1 }
                if descriptions.last != sample.formatDescription { descriptions.append(sample.formatDescription) }
            case .dropped(let reason, let count):
                dropped.add(reason, count: count)
            }
        }
        if descriptions.isEmpty {
            var store = ParameterSetStore(codec: codec)
            for location in AnnexB.nalUnits(in: bytes) where location.range.count >= codec.nalHeaderSize {
                let first = bytes[location.range.lowerBound]
                let isSet =
                    codec == .h264
                    ? H264NALUnitType(rawValue: first).isParameterSet
                    : HEVCNALUnitType(rawValue: first >> 1).isParameterSet
                if isSet { _ = try? store.update(nal: bytes[location.range]) }
            }
            if store.isComplete, let description = try? store.makeDescription() { descriptions = [description] }
        }
        for _ in AnnexB.nalUnits(in: bytes) { nalUnitCount += 1 }
    }

    /// Calls `body` with each NAL unit, in stream order.
    public func forEachNALUnit(_ body: (NALUnit) throws -> Void) rethrows {
        for location in AnnexB.nalUnits(in: bytes) {
            try body(NALUnit(offset: location.startCodeOffset, range: location.range, of: bytes, codec: codec))
        }
    }

    /// The NAL unit type name of a parameter set ("SPS", "VPS", …).
    public static func parameterSetName(_ set: [UInt8], codec: CodecType) -> String {
        guard let first = set.first else { return "empty" }
        switch codec {
        case .h264: return H264NALUnitType(rawValue: first).name
        case .hevc: return HEVCNALUnitType(rawValue: first >> 1).name
        }
    }
}
