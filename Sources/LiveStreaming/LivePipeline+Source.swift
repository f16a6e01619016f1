// The pipeline's sources: frames the app pushes, a Y4M clip, an encoded file;
// looping with times that keep increasing.
import FormatConv
import MediaCore
import MediaIO
import Synchronization

extension LivePipeline {
    /// Where the pipeline's pictures come from.
    public enum Source: Sendable {
        /// Frames the app hands to ``LivePipeline/push(_:pts:duration:)``,
        /// encoded as they come; `framesPerSecond` is the rate the encoder
        /// expects (and counts the keyframe interval in). The encoder is made
        /// for the first frame's size.
        case frames(framesPerSecond: Double)
        /// A Y4M clip, encoded and paced by its frame rate; with `loop`, again
        /// from the start at the end, the times continuing.
        case y4m(path: String, loop: Bool)
        /// An encoded file (Annex-B H.264/HEVC, or a container's video track
        /// through MediaIO's `EncodedFile`), sent as it is in real time by its
        /// decode times; with `loop`, again from the start, the times shifted
        /// past the pass before. Keyframe requests cannot be honoured (counted).
        case encodedFile(path: String, loop: Bool)
        /// An encoded file already read, as ``encodedFile(path:loop:)``.
        case encoded(EncodedFile, loop: Bool)
    }
}

/// What the source has next.
enum SourceItem {
    case frame(PixelBuffer, pts: MediaTime, duration: MediaTime)
    case sample(CompressedSample)
    /// Nothing yet (pushed frames): ask again after a wait.
    case nothingYet
    case end
}

/// Frames pushed by the app from any thread.
final class FrameQueue: Sendable {
    private let state = Mutex<(frames: [(PixelBuffer, MediaTime, MediaTime)], ended: Bool)>(([], false))

    func push(_ frame: PixelBuffer, pts: MediaTime, duration: MediaTime) {
        state.withLock { $0.frames.append((frame, pts, duration)) }
    }

    func end() { state.withLock { $0.ended = true } }

    func next() -> SourceItem {
        state.withLock { state -> SourceItem in
            guard !state.frames.isEmpty else { return state.ended ? .end : .nothingYet }
            let (frame, pts, duration) = state.frames.removeFirst()
            return .frame(frame, pts: pts, duration: duration)
        }
    }
}

/// Reads a source in order, looping when asked.
final class SourceReader {
    let framesPerSecond: Double
    /// The Y4M header (a clip), for the encoder's size.
    let header: Y4MHeader?
    /// The encoded file (an encoded-file source).
    let file: EncodedFile?
    let queue: FrameQueue?
    private let path: String
    private let loop: Bool
    private var reader: Y4MReader?
    private let frameDuration: MediaTime
    private var frameIndex: Int64 = 0
    private var framesInPass = 0
    private var sampleIndex = 0
    private var passOffset = MediaTime.zero
    /// Passes started after the first (`loop`).
    private(set) var loops = 0

    convenience init(_ source: LivePipeline.Source) throws(MediaError) {
        if case .encodedFile(let path, let loop) = source {
            try self.init(opening: .encoded(try EncodedFile(path: path), loop: loop))
        } else {
            try self.init(opening: source)
        }
    }

    private init(opening source: LivePipeline.Source) throws(MediaError) {
        switch source {
        case .frames(let rate):
            guard rate > 0, rate.isFinite else {
                throw .invalidArgument("frames per second \(rate): must be positive")
            }
            framesPerSecond = rate
            frameDuration = MediaTime(seconds: 1 / rate, timescale: 90000)
            queue = FrameQueue()
            header = nil
            file = nil
            path = ""
            loop = false
        case .y4m(let path, let loop):
            let reader = try Y4MReader(path: path)
            let duration = reader.header.frameDuration
            guard duration.isValid, duration.value > 0 else {
                let rate = reader.header.frameRate
                throw .invalidData("\(path): frame rate \(rate.numerator):\(rate.denominator) is not positive")
            }
            self.reader = reader
            header = reader.header
            frameDuration = duration
            framesPerSecond = 1 / duration.seconds
            queue = nil
            file = nil
            self.path = path
            self.loop = loop
        case .encodedFile(let path, _):
            throw .invalidArgument("\(path): read by the convenience initializer")
        case .encoded(let file, let loop):
            self.file = file
            frameDuration = file.frameDuration
            framesPerSecond = file.framesPerSecond
            queue = nil
            header = nil
            path = ""
            self.loop = loop
        }
    }

    func next() throws(MediaError) -> SourceItem {
        if let queue { return queue.next() }
        if let file { return nextSample(of: file) }
        while let reader {
            if let frame = try reader.readFrame() {
                framesInPass += 1
                defer { frameIndex += 1 }
                return .frame(frame, pts: frameDuration * frameIndex, duration: frameDuration)
            }
            guard loop, framesInPass > 0 else { break }
            self.reader = try Y4MReader(path: path)
            framesInPass = 0
            loops += 1
        }
        return .end
    }

    private func nextSample(of file: EncodedFile) -> SourceItem {
        if sampleIndex == file.samples.count {
            guard loop, !file.samples.isEmpty else { return .end }
            passOffset = passOffset + Self.span(of: file)
            sampleIndex = 0
            loops += 1
        }
        var sample = file.samples[sampleIndex]
        sampleIndex += 1
        if loops > 0 {
            sample.pts = sample.pts.isValid ? sample.pts + passOffset : sample.pts
            sample.dts = sample.dts.isValid ? sample.dts + passOffset : sample.dts
        }
        return .sample(sample)
    }

    /// How far one pass of `file` reaches: from its earliest time to one
    /// frame past its latest, so the next pass starts after every time of this one.
    private static func span(of file: EncodedFile) -> MediaTime {
        let times = file.samples.flatMap { [$0.pts, $0.dts] }.filter(\.isValid)
        guard let first = times.min(), let last = times.max() else {
            return file.frameDuration * Int64(file.samples.count)
        }
        return (last + file.frameDuration - first).converted(toTimescale: 90000)
    }
}
