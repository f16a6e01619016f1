import FormatConv
import MediaCore
import NativeCodecs

// Samples out: encoded pictures matched with the frames submitted, given
// durations and decode times, stripped of parameter sets, and held back
// under `.automatic` until no earlier frame can still come out.
extension CompressionSession {
    func samples(from frames: [EncodedFrame]) throws(MediaError) -> [CompressedSample] {
        let converted = try convert(frames)
        guard mayFallBack else {
            samplesReturned += converted.count
            return converted.map(\.sample)
        }
        unreleased += converted
        let oldestInside = pending.keys.min()
        var count = 0
        while count < unreleased.count, oldestInside.map({ unreleased[count].ticks < $0 }) ?? true { count += 1 }
        let released = unreleased.prefix(count).map(\.sample)
        unreleased.removeFirst(count)
        samplesReturned += count
        return released
    }

    func convert(_ frames: [EncodedFrame]) throws(MediaError) -> [(
        ticks: Int64, entry: PendingFrame, sample: CompressedSample
    )] {
        var result: [(ticks: Int64, entry: PendingFrame, sample: CompressedSample)] = []
        result.reserveCapacity(frames.count)
        for frame in frames {
            guard let entry = pending.removeValue(forKey: frame.pts) else {
                throw .backendFailure("\(backend): returned a picture with pts \(frame.pts), which was never submitted")
            }
            var duration = entry.duration
            if !duration.isValid {
                duration = entry.nextPTS.map { $0 - entry.pts } ?? lastDuration ?? defaultDuration
            }
            lastDuration = duration
            let data = try stripParameterSets(frame.data)
            var sample = CompressedSample(
                data: data, formatDescription: formatDescription, pts: entry.pts, dts: decodeTime(frame.dts),
                duration: duration, isKeyframe: frame.isKeyframe, dependsOnOthers: frame.dependsOnOthers)
            sample.encoderPSNR = frame.psnr
            result.append((frame.pts, entry, sample))
        }
        return result
    }

    /// The decode time in the caller's timescale when it converts exactly.
    func decodeTime(_ ticks: Int64) -> MediaTime {
        let time = MediaTime(value: ticks, timescale: Self.backendTimescale)
        if let outputTimescale {
            let converted = time.converted(toTimescale: outputTimescale)
            if converted == time { return converted }
        }
        return time
    }

    /// Removes parameter sets and access unit delimiters from a
    /// length-prefixed access unit (they belong in the format description,
    /// ISO/IEC 14496-15 5.3.2 / 8.3.2); SEI and slices stay.
    func stripParameterSets(_ data: [UInt8]) throws(MediaError) -> [UInt8] {
        let ranges = try LengthPrefixed.nalUnitRanges(in: data, lengthSize: 4, codec: codec)
        let kept = ranges.filter { range in
            let header = data[range.lowerBound]
            switch codec {
            case .h264:
                let type = H264NALUnitType(rawValue: header)
                return !type.isParameterSet && type != .accessUnitDelimiter
            case .hevc:
                let type = HEVCNALUnitType(rawValue: header >> 1)
                return !type.isParameterSet && type != .accessUnitDelimiter
            }
        }
        if kept.count == ranges.count { return data }
        return try LengthPrefixed.write(kept.map { data[$0] }, lengthSize: 4)
    }
}
