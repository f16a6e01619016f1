// MovieWriter's flushing, and the wait before the header for the first ADTS
// header of each AAC track it converts.

import FormatConv
import MediaCore

extension MovieWriter {
    /// A sample or a copied packet appended before the header was written.
    enum HeldItem {
        case sample(CompressedSample)
        case packet(TrackPacket, track: Int)

        var isSample: Bool { if case .sample = self { true } else { false } }
    }

    /// How long, in decode time after the first sample, the header waits for
    /// the first packet of each converted ADTS track.
    static let adtsWait = 1.0

    /// Writes everything appended so far to the file: the samples and
    /// packets libavformat holds to interleave tracks, the fragment being
    /// built (fragmented MP4: it becomes a `moof`+`mdat`; Matroska: the
    /// cluster is closed), and the bytes in its I/O buffer. A process killed
    /// after this returns leaves a file that a reader reads up to here
    /// (fragmented MP4, Matroska, MPEG-TS; a plain MP4 still has no index).
    ///
    /// Before the first sample there is nothing to write: held packets wait
    /// for the header. Calling it often makes small fragments; once a second
    /// (``MovieWriterOptions/flushInterval``) is what live recording needs.
    ///
    /// - Throws: libavformat's errors, such as a full disk.
    public func flush() throws(MediaError) {
        precondition(!finished, "MovieWriter.flush after finish()")
        if track == nil {
            guard heldItems.contains(where: \.isSample) else { return }
            try startWriting()
        }
        try muxer.flush(while: "flushing '\(path)'")
        if options.fragmented && !wroteMovieHeader {
            // With delay_moov the first flush writes the `moov` alone and
            // keeps the samples for the next fragment: write them too.
            wroteMovieHeader = true
            try muxer.flush(while: "flushing '\(path)'")
        }
        lastFlushDTS = nil
    }

    /// Flushes when `dts` is ``MovieWriterOptions/flushInterval`` or more
    /// past the first sample written since the last flush.
    func flushIfDue(before dts: MediaTime) throws(MediaError) {
        guard let interval = options.flushInterval else { return }
        guard let first = lastFlushDTS else {
            lastFlushDTS = dts
            return
        }
        if (dts - first).seconds >= interval {
            try flush()
            lastFlushDTS = dts
        }
    }

    /// Whether the header still waits for an ADTS track's first packet: one
    /// has not come, and the held samples span less than ``adtsWait``
    /// before `dts`.
    func waitsForADTSHeaders(before dts: MediaTime) -> Bool {
        guard adtsTracks.values.contains(where: { $0.configuration == nil }) else { return false }
        guard case .sample(let first)? = heldItems.first(where: \.isSample) else { return true }
        let firstDTS = first.dts.isValid ? first.dts : first.pts
        return (dts - firstDTS).seconds < Self.adtsWait
    }

    /// Takes the configuration of converted track `outputTrack` from its
    /// first packet; a first packet without an ADTS header ends the
    /// conversion (the track is raw AAC after all and is written as it is).
    func learnADTSConfiguration(from packet: TrackPacket, track outputTrack: Int) throws(MediaError) {
        guard let header = ADTSHeader(packet.data) else {
            if track == nil { adtsTracks[outputTrack] = nil }
            return
        }
        if let refusal = header.refusal {
            throw .unsupported("\(copiedTracks[outputTrack - 1]): a packet (pts \(packet.pts)): \(refusal)")
        }
        adtsTracks[outputTrack]?.configuration = header
    }

    /// Writes the header from the first held sample, then every held item
    /// in the order appended. An ADTS track whose first packet has not come
    /// is described as AAC LC at its sample rate and channels.
    func startWriting() throws(MediaError) {
        for (outputTrack, conversion) in adtsTracks where conversion.configuration == nil {
            let copied = copiedTracks[outputTrack - 1]
            guard let fallback = ADTSHeader(lowComplexitySampleRate: copied.sampleRate, channels: copied.channelCount)
            else {
                throw .unsupported(
                    "\(copied): no ADTS header came within \(Self.adtsWait) s of the video, and its sample rate "
                        + "and channels have no AAC configuration")
            }
            adtsTracks[outputTrack]?.configuration = fallback
        }
        guard case .sample(let first)? = heldItems.first(where: \.isSample) else { return }
        track = try createTrack(for: first)
        let held = heldItems
        heldItems = []
        for item in held {
            switch item {
            case .sample(let sample): try writeSample(sample)
            case .packet(let packet, let outputTrack): try writeCopied(packet, track: outputTrack)
            }
        }
    }
}
