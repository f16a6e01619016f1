// Encoding a whole clip: frames pulled one by one, timed by one frame
// duration, every sample handed on in decode order, a report at the end.
import FormatConv
import MediaCore

extension CompressionSession {
    /// What ``encodeFrames(frameDuration:frameLimit:shouldStop:nextFrame:write:progress:)`` did.
    public struct FramesReport: Sendable, Equatable {
        /// The frames submitted to the encoder.
        public var frames = 0
        /// The sum of what `write` returned for every sample.
        public var bytes = 0
        /// The media time of the frames, in seconds: frames × frame duration.
        public var mediaSeconds = 0.0
        /// Frames the encoder took but never returned (``CompressionSession/droppedFrames``).
        public var droppedFrames = 0

        /// The average bit rate over ``mediaSeconds`` in bits per second (0 for no media time).
        public var bitsPerSecond: Double { mediaSeconds > 0 ? Double(bytes) * 8 / mediaSeconds : 0 }
    }

    /// Encodes the frames `nextFrame` returns until it returns nil, until
    /// `frameLimit` frames, or until `shouldStop` returns true, then
    /// finishes the session. Frame `n` gets the presentation time
    /// `n × frameDuration`; every sample goes to `write` in decode order,
    /// which returns the bytes it wrote; `progress` hears the frames and
    /// bytes so far after each frame.
    ///
    /// - Throws: `MediaError.Code.invalidArgument` for a `frameDuration`
    ///   that is not a positive time, and what `nextFrame`, ``encode(_:pts:duration:options:)``,
    ///   ``finish()`` or `write` throws.
    public func encodeFrames(
        frameDuration: MediaTime, frameLimit: Int? = nil, shouldStop: () -> Bool = { false },
        nextFrame: () throws(MediaError) -> PixelBuffer?,
        write: (CompressedSample) throws(MediaError) -> Int,
        progress: (_ frames: Int, _ bytes: Int) -> Void = { _, _ in }
    ) throws(MediaError) -> FramesReport {
        guard frameDuration.isValid, frameDuration.value > 0, frameDuration.timescale > 0 else {
            throw .invalidArgument("frame duration \(frameDuration): expected a positive time")
        }
        var report = FramesReport()
        while frameLimit.map({ report.frames < $0 }) ?? true, !shouldStop() {
            guard let frame = try nextFrame() else { break }
            let pts = MediaTime(value: Int64(report.frames) * frameDuration.value, timescale: frameDuration.timescale)
            for sample in try encode(frame, pts: pts) { report.bytes += try write(sample) }
            report.frames += 1
            progress(report.frames, report.bytes)
        }
        for sample in try finish() { report.bytes += try write(sample) }
        report.mediaSeconds =
            Double(report.frames) * Double(frameDuration.value) / Double(frameDuration.timescale)
        report.droppedFrames = droppedFrames.count
        return report
    }
}
