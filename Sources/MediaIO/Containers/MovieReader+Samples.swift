import FormatConv
import MediaCore
import NativeCodecs

// Packets to samples: the demuxer's packets read in file order, the video
// track's turned into length-prefixed samples with their parameter sets
// lifted into descriptions (and decode times rebuilt for Matroska), the
// other tracks' kept as ``TrackPacket``s.
extension MovieReader {
    func readSample() throws(MediaError) -> CompressedSample? {
        while true {
            guard let packet = try demuxer.readPacket() else {
                reachedEnd = true
                return nil
            }
            packetOrder += 1
            if packet.streamIndex != trackIndex {
                if readsEveryTrack {
                    otherPackets.append((packetOrder, trackPacket(packet)))
                    if readsOnePacket { return nil }
                }
                continue
            }
            if isLive && !startedAtKeyframe {
                // A late joiner: nothing decodes before a keyframe with its
                // parameter sets, so such access units are skipped, not errors.
                guard let sample = try? makeLiveSample(packet), sample.isKeyframe else {
                    skippedBeforeKeyframe += 1
                    continue
                }
                startedAtKeyframe = true
                return sample
            }
            return isLive ? try makeLiveSample(packet) : try makeSample(from: packet)
        }
    }

    /// Live: gives the first sample its times when the demuxer left them
    /// out. libavformat's RTSP demuxer returns the first access unit without
    /// pts or dts (its H.264/HEVC parser has not yet matched it to an RTP
    /// timestamp; the later ones have their pts), and a container cannot
    /// take a sample without a pts. The next sample is read (and held, to
    /// go out second) and the first is placed one frame duration before it:
    /// exact for a stream without B-frames, whose pictures are presented in
    /// decode order. A stream that ends after one sample starts at 0.
    func stampFirstLiveSample() throws(MediaError) {
        guard var first = pending, !first.pts.isValid, !first.dts.isValid else { return }
        guard let second = try readSample() else {
            first.pts = MediaTime(value: 0, timescale: timescale)
            pending = first
            return
        }
        let step =
            first.duration.isValid && first.duration.value > 0
            ? first.duration : second.duration.isValid && second.duration.value > 0 ? second.duration : nil
        if let step, second.pts.isValid {
            first.pts = second.pts - step
            if second.dts.isValid { first.dts = second.dts - step }
        }
        pending = first
        heldLiveSample = (second, packetOrder)
    }

    private func trackPacket(_ packet: DemuxedPacket) -> TrackPacket {
        let track = tracks[packet.streamIndex]
        var result = TrackPacket(
            track: packet.streamIndex, data: packet.data, pts: track.time(packet.pts), dts: track.time(packet.dts),
            duration: packet.duration > 0 ? track.time(packet.duration) : .invalid, isKeyframe: packet.isKeyframe,
            isCorrupt: packet.isCorrupt, sideData: packet.sideData)
        guard track.kind == .audio else { return result }
        if !result.duration.isValid, let samples = track.samplesPerFrame, let rate = track.sampleRate,
            track.timeBase.isValid
        {
            // Packets read while probing may come without a duration.
            result.duration = MediaTime(value: Int64(samples), timescale: Int32(clamping: rate))
                .converted(toTimescale: track.timeBase.timescale)
        }
        // libavformat's parsers split an MPEG-TS audio PES packet into its
        // frames and stamp only the first fully: the others follow it
        // without a gap (audio frames are presented in decode order).
        if !result.pts.isValid && !result.dts.isValid, let expected = nextAudioTime[packet.streamIndex] {
            result.dts = expected
        }
        if !result.pts.isValid { result.pts = result.dts }
        if !result.dts.isValid { result.dts = result.pts }
        let start = result.dts.isValid ? result.dts : result.pts
        nextAudioTime[packet.streamIndex] =
            start.isValid && result.duration.isValid ? start + result.duration : nil
        return result
    }

    private func makeLiveSample(_ packet: DemuxedPacket) throws(MediaError) -> CompressedSample {
        var sample = try makeSample(from: packet)
        // Live demuxers flag keyframes unevenly (RTSP not at all, MPEG-TS's
        // parser also at recovery points): the NAL unit types decide.
        let units = try LengthPrefixed.nalUnits(in: sample.data, lengthSize: outputLengthSize, codec: codec)
        sample.isKeyframe = units.contains { SampleLayout.isKeyframe($0, codec: codec) }
        return sample
    }

    private func makeSample(from packet: DemuxedPacket) throws(MediaError) -> CompressedSample {
        let pts = Self.time(packet.pts, numerator: timeBaseNumerator, timescale: timescale)
        let dts = Self.time(packet.dts, numerator: timeBaseNumerator, timescale: timescale)
        let duration =
            packet.duration > 0
            ? Self.time(packet.duration, numerator: timeBaseNumerator, timescale: timescale) : .invalid
        defer { packetNumber += 1 }
        return try makeSample(packet.data, pts: pts, dts: dts, duration: duration, isKeyframe: packet.isKeyframe)
    }

    private func makeSample(
        _ bytes: [UInt8], pts: MediaTime, dts: MediaTime, duration: MediaTime, isKeyframe: Bool
    ) throws(MediaError) -> CompressedSample {
        let place = "track \(trackIndex) packet \(packetNumber) (dts \(dts))"
        var data = bytes
        let units: [ArraySlice<UInt8>]
        if let stored = storedNALUnitLengthSize {
            if stored == 3 {
                // ISO/IEC 14496-15 5.3.3.1.2 allows lengthSizeMinusOne 2; FormatConv
                // converts those samples to 4-byte lengths on explicit request.
                data = try Self.tagged(place) { () throws(MediaError) in
                    try LengthPrefixed.convert(data, from: 3, to: 4)
                }
            }
            let source = data
            units = try Self.tagged(place) { () throws(MediaError) in
                try LengthPrefixed.nalUnits(in: source, lengthSize: outputLengthSize, codec: codec)
            }
        } else {
            let source = data
            units = AnnexB.nalUnits(in: source).map { source[$0.range] }
        }

        var kept: [ArraySlice<UInt8>] = []
        kept.reserveCapacity(units.count)
        var removedAny = false
        var setsChanged = false
        for unit in units {
            if SampleLayout.isParameterSet(unit, codec: codec) {
                removedAny = true
                let changed = try Self.tagged(place) { () throws(MediaError) in
                    try parameterSets.update(nal: unit)
                }
                setsChanged = setsChanged || changed
            } else if storedNALUnitLengthSize == nil && SampleLayout.isAccessUnitDelimiter(unit, codec: codec) {
                removedAny = true
            } else {
                kept.append(unit)
            }
        }
        if setsChanged && parameterSets.isComplete {
            var description = try Self.tagged(place) { () throws(MediaError) in
                try parameterSets.makeDescription()
            }
            description.hdr10 = containerHDR10
            if description != currentDescription { currentDescription = description }
        }
        guard let description = currentDescription else {
            throw .invalidData(
                "\(place): no parameter sets yet; the track has no \(SampleLayout.recordName(codec)) with "
                    + "parameter sets and no complete set arrived in band before this sample")
        }
        if storedNALUnitLengthSize == nil || removedAny {
            let units = kept
            data = try Self.tagged(place) { () throws(MediaError) in
                try LengthPrefixed.write(units, lengthSize: outputLengthSize)
            }
        }
        var dts = dts
        if rebuildsDecodeTimes && pts.isValid {
            dts = decodeTime(for: pts, duration: duration, description: description)
        }
        let referenced = kept.lazy.compactMap { SampleLayout.isReferenced($0, codec: self.codec) }.first ?? true
        return CompressedSample(
            data: data, formatDescription: description, pts: pts, dts: dts, duration: duration,
            isKeyframe: isKeyframe, dependsOnOthers: referenced)
    }

    /// The decode time of the next sample in decode order, rebuilt from
    /// presentation times: with a reorder depth of `d` pictures (H.264 VUI
    /// `max_num_reorder_frames`, H.265 `sps_max_num_reorder_pics`), the i-th
    /// decode time is the (i − d)-th smallest presentation time, which is
    /// known once i + 1 samples have been seen. The first `d` samples step
    /// back from the first presentation time by one frame each, so the first
    /// picture still shows at its own time and every dts ≤ pts.
    private func decodeTime(for pts: MediaTime, duration: MediaTime, description: FormatDescription) -> MediaTime {
        let depth = description.maxReorderFrames ?? description.maxReferenceFrames
        let value = pts.value
        let insertAt = presentationTimesAhead.firstIndex { $0 > value } ?? presentationTimesAhead.count
        presentationTimesAhead.insert(value, at: insertAt)
        let first = firstPresentationTime ?? value
        firstPresentationTime = first
        defer { rebuiltCount += 1 }
        if rebuiltCount >= depth {
            return MediaTime(value: presentationTimesAhead.removeFirst(), timescale: pts.timescale)
        }
        let frame =
            duration.isValid && duration.value > 0
            ? duration.converted(toTimescale: pts.timescale)
            : (description.vuiFrameRate ?? MediaTime(value: 1, timescale: 30)).converted(toTimescale: pts.timescale)
        return MediaTime(value: first - max(frame.value, 1) * Int64(depth - rebuiltCount), timescale: pts.timescale)
    }
}
