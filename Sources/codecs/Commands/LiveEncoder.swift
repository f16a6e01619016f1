import EncodeSession
import MediaCore
import MediaIO

/// An encoder for a Y4M clip sent live (`stream serve`, `stream send`): the
/// clip's frame rate as the expected rate, and a keyframe every two seconds
/// unless the options set an interval, so a receiver that joins or loses
/// data waits at most that long.
struct LiveEncoder {
    let session: CompressionSession
    /// One frame's duration (the Y4M `F` tag: denominator / numerator seconds).
    let frameDuration: MediaTime
    let framesPerSecond: Double

    init(header: Y4MHeader, input: String, options: EncodeOptions) throws(MediaError) {
        let rate = header.frameRate
        guard rate.numerator > 0, rate.denominator > 0 else {
            throw .invalidData("\(input): frame rate \(rate.numerator):\(rate.denominator) is not positive")
        }
        frameDuration = MediaTime(value: Int64(rate.denominator), timescale: Int32(clamping: rate.numerator))
        framesPerSecond = Double(rate.numerator) / Double(rate.denominator)
        var properties = options.properties
        properties.expectedFrameRate = properties.expectedFrameRate ?? framesPerSecond
        if properties.maxKeyFrameInterval == nil && properties.maxKeyFrameIntervalDuration == nil {
            properties.maxKeyFrameInterval = max(1, Int((2 * framesPerSecond).rounded()))
        }
        session = try CompressionSession(
            width: header.width, height: header.height, codec: options.codec, encoder: options.encoder,
            properties: properties)
    }
}
