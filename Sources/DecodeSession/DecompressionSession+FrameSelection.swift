import FormatConv
import MediaCore

// Which samples are decoded and which pictures are returned, decided before
// decoding: the wait for a keyframe after a break, the leading pictures of
// the random-access point decoding resumed at (FormatConv's
// `RandomAccessGate`), incomplete access units, the temporal layer limit,
// ``DecompressionSession/frameFilter``, and late and pre-roll samples no
// picture refers to. (The pictures that come out of the decoder are sorted
// in ``DecompressionSession/deliver(_:into:)``.)
extension DecompressionSession {
    /// While the session waits for a keyframe: drops `sample` unless it is
    /// one; at the keyframe, takes what the decoder still holds and reports
    /// the recovery. Returns whether the sample goes on to decoding.
    func resumes(at sample: CompressedSample, into output: inout [DecodedFrame]) -> Bool {
        guard let resync else { return true }
        guard sample.isKeyframe else {
            recordDrop(
                DropReport(
                    pts: sample.pts, kind: .waitingForKeyframe, reason: "waiting for a keyframe: \(resync.reason)"))
            return false
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
        return true
    }

    /// Whether `sample` is decoded; a sample left out is listed in ``drops``
    /// with its reason. `afterBreak`: decoding resumes at this sample (when it
    /// is a keyframe) after a break.
    func selects(
        _ sample: CompressedSample, _ inspection: SampleInspection, afterBreak: Bool,
        into output: inout [DecodedFrame]
    ) -> Bool {
        if sample.isKeyframe {
            randomAccess.pass(
                codec: inspection.codec, pictureType: inspection.pictureType, at: sample.pts, afterBreak: afterBreak)
        } else if randomAccess.isLeadingPicture(pictureType: inspection.pictureType, at: sample.pts) {
            recordDrop(
                DropReport(
                    pts: sample.pts, kind: .skippedLeadingPicture,
                    reason: "a leading picture of the random-access point decoding started at: it refers to "
                        + "pictures before that point, which were never decoded"))
            dropsAtLastDelivery = dropTotal
            return false
        }
        if let problem = Self.incompleteness(inspection, size: sample.data.count, formatDescription) {
            let drop = DropReport(
                pts: sample.pts, kind: .incompleteAccessUnit, reason: "incomplete access unit: \(problem)")
            if sample.isKeyframe || inspection.isReferencePicture {
                // Later pictures refer to this one: what is in flight comes
                // out, then nothing until the next keyframe (which reports
                // this sample among the dropped).
                output += skipToNextKeyframe("an incomplete access unit at pts \(sample.pts) (\(problem))")
                recordDrop(drop)
            } else {
                recordDrop(drop)
                dropsAtLastDelivery = dropTotal
            }
            return false
        }
        if let limit = temporalLevelLimit, let layer = inspection.temporalLayer, layer > limit {
            recordDrop(
                DropReport(pts: sample.pts, kind: .filtered, reason: "temporal layer \(layer) above the limit \(limit)")
            )
            dropsAtLastDelivery = dropTotal
            return false
        }
        if frameFilter == .keyframes && !sample.isKeyframe
            || frameFilter == .nonDroppable && !sample.isKeyframe && !inspection.isReferencePicture
        {
            recordDrop(DropReport(pts: sample.pts, kind: .filtered, reason: "left out by frameFilter \(frameFilter)"))
            dropsAtLastDelivery = dropTotal  // not a loss: no recovery report for it
            return false
        }
        if inspection.containsSEI,
            let found = H264SEI.hdr10(inSample: sample.data, lengthSize: formatDescription.nalUnitHeaderLength)
        {
            bitstreamHDR10 = found
        }
        if !sample.isKeyframe, let (kind, reason) = skipBeforeDecoding(sample, inspection) {
            recordDrop(DropReport(pts: sample.pts, kind: kind, reason: reason))
            dropsAtLastDelivery = dropTotal
            return false
        }
        return true
    }

    /// Why a sample is not a whole access unit, or nil: NAL unit lengths past
    /// its end, no slice, or a first slice that does not start the picture
    /// (H.264 `first_mb_in_slice` above 0, except in Baseline streams, which
    /// may send slices in any order; HEVC `first_slice_segment_in_pic_flag` 0).
    static func incompleteness(_ inspection: SampleInspection, size: Int, _ description: FormatDescription)
        -> String?
    {
        if let malformed = inspection.malformed {
            return "its \(size) bytes do not split into NAL units (\(malformed))"
        }
        guard let header = inspection.header, let type = inspection.pictureType else {
            return "it holds no slice of a picture"
        }
        switch inspection.codec {
        case .h264:
            guard inspection.pictureUnitSize > 1 else {
                return "its first slice NAL unit (type \(type)) has no slice header"
            }
            // The slice header follows the 1-byte NAL unit header; its first
            // field, first_mb_in_slice, is ue(v): 0 exactly when its first bit is 1.
            if header.1 & 0x80 == 0 && !allowsArbitrarySliceOrder(description) {
                return "its first slice does not start at the picture's first macroblock; the slices before it "
                    + "are missing"
            }
        case .hevc:
            guard inspection.pictureUnitSize > 2 else {
                return "its first slice NAL unit (type \(type)) has no slice header"
            }
            // The slice segment header follows the 2-byte NAL unit header;
            // its first bit is first_slice_segment_in_pic_flag.
            if header.2 & 0x80 == 0 {
                return "its first slice segment is not the picture's first (first_slice_segment_in_pic_flag 0); "
                    + "the segments before it are missing"
            }
        }
        return nil
    }

    /// H.264 Baseline without constraint_set1 (not Constrained Baseline)
    /// allows slices in any order (ASO).
    static func allowsArbitrarySliceOrder(_ description: FormatDescription) -> Bool {
        guard description.codec == .h264, description.profile == 66,
            let sps = description.parameterSets.first(where: {
                $0.first.map { H264NALUnitHeader($0).type == .sps } ?? false
            }),
            sps.count > 2
        else { return false }
        // The byte after profile_idc holds constraint_set0_flag … set5; set1 is its bit 6.
        return sps[2] & 0x40 == 0
    }

    /// Whether no picture refers to the sample's: H.264 `nal_ref_idc` 0; HEVC
    /// a sub-layer non-reference type in the highest temporal layer the
    /// stream declares (hvcC `numTemporalLayers`; pictures of higher layers
    /// may refer to a lower layer's non-reference pictures).
    static func isDisposable(_ inspection: SampleInspection, _ description: FormatDescription) -> Bool {
        guard !inspection.isReferencePicture else { return false }
        guard description.codec == .hevc else { return true }
        guard let layers = HEVCDecoderConfigurationRecord.numTemporalLayers(inRecord: description.record),
            let layer = inspection.temporalLayer
        else { return false }
        return layers > 0 && layer == layers - 1
    }

    /// A non-keyframe sample the session leaves out before decoding because
    /// it is before the seek target or late, and no picture refers to it.
    func skipBeforeDecoding(_ sample: CompressedSample, _ inspection: SampleInspection) -> (DropReport.Kind, String)? {
        if let target = preRollTarget, sample.pts < target, Self.isDisposable(inspection, formatDescription) {
            return (.preRoll, "before the seek to \(target) and no picture refers to it: not decoded")
        }
        if let deadline = earliestPresentationTime, sample.pts < deadline,
            Self.isDisposable(inspection, formatDescription)
        {
            return (
                .late,
                "late: presented before the earliest presentation time, and no picture refers to it: not decoded"
            )
        }
        return nil
    }
}

/// What the session reads of a sample before decoding it: whether its NAL
/// unit lengths fit, the kind of its first picture (VCL) NAL unit and the
/// first bytes of that unit's slice header, and whether it carries an H.264
/// SEI NAL unit. One pass over the lengths, no allocation.
struct SampleInspection {
    /// Why the lengths do not split the sample into NAL units, or nil.
    var malformed: String?
    /// The first picture NAL unit's kind.
    var picture: NALUnitKind?
    /// The first picture NAL unit's first three bytes (0 past its end).
    var header: (UInt8, UInt8, UInt8)?
    /// The first picture NAL unit's size.
    var pictureUnitSize = 0
    /// H.264: whether the sample has an SEI NAL unit (HDR10 metadata may be in it).
    var containsSEI = false
    let codec: CodecType

    init(_ data: [UInt8], _ description: FormatDescription) {
        codec = description.codec
        var picture: NALUnitKind?
        var header: (UInt8, UInt8, UInt8)?
        var size = 0
        var sei = false
        let codec = codec
        malformed = data.withUnsafeBytes { buffer -> String? in
            do throws(MediaError) {
                // Every NAL unit holds at least its header (`codec` is passed).
                try LengthPrefixed.forEachNALUnit(
                    in: buffer, lengthSize: description.nalUnitHeaderLength, codec: codec
                ) { range in
                    let first = buffer[range.lowerBound]
                    let isPicture: Bool
                    switch codec {
                    case .h264:
                        let type = H264NALUnitHeader(first).type
                        if type == .sei { sei = true }
                        isPicture = type.isVCL
                    case .hevc:
                        isPicture = HEVCNALUnitHeader(first, buffer[range.lowerBound + 1]).type.isVCL
                    }
                    guard picture == nil, isPicture else { return }
                    picture = NALUnitKind(codec: codec, UnsafeRawBufferPointer(rebasing: buffer[range]))
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
        self.picture = picture
        self.header = header
        pictureUnitSize = size
        containsSEI = sei
    }

    /// The NAL unit type of the first picture NAL unit.
    var pictureType: UInt8? { picture?.type }

    /// HEVC `TemporalId` (`nuh_temporal_id_plus1` − 1); nil for H.264.
    var temporalLayer: Int? {
        guard codec == .hevc, let header else { return nil }
        return HEVCNALUnitHeader(header.0, header.1).temporalId
    }

    /// Whether other pictures may refer to this one: H.264 `nal_ref_idc`
    /// above 0; HEVC not a sub-layer non-reference picture. True when the
    /// sample holds no picture.
    var isReferencePicture: Bool { picture?.isReferencedByOthers ?? true }

    /// An HEVC clean random access picture (CRA), after which leading
    /// pictures may follow that refer to the group before it.
    var isCleanRandomAccess: Bool {
        codec == .hevc && picture.map { HEVCNALUnitType(rawValue: $0.type) == .cra } ?? false
    }
}
