import FormatConv
import MediaCore
import NativeCodecs

// Failure handling: a hardware encoder that fails under `.automatic` is
// replaced by software, which encodes again every frame the hardware had
// not returned.
extension CompressionSession {
    /// Replaces the failed hardware encoder by software: encodes again, from
    /// a forced keyframe, every frame the hardware had not returned (the
    /// current one included), under a new format description when the
    /// software encoder's parameter sets differ.
    func fallBackToSoftware(after error: MediaError) throws(MediaError) -> [CompressedSample] {
        let failed = backend
        let software = try factory.software(configuration)
        let description = try Self.description(codec, software.parameterSets, properties: properties)
        // Frames inside the hardware and hardware samples not yet released
        // are all encoded again, in presentation order.
        for (ticks, entry, _) in unreleased { pending[ticks] = entry }
        unreleased.removeAll()
        let held = pending.sorted { $0.key < $1.key }
        let reason = "\(failed) failed: \(error.message)"
        fallbacks.append(
            EncoderFallback(
                frameIndex: framesSubmitted - held.count, pts: held.first?.value.pts ?? lastPTS ?? .zero,
                reason: reason))
        engine = software
        mayFallBack = false
        backend = software.name
        backendInUse = software.backendInUse
        fallbackReason = reason + "; continuing in software"
        CodecLog.log(.warning, subsystem: "EncodeSession", reason + "; continuing in software")
        formatDescription = description
        var frames: [EncodedFrame] = []
        for (index, (ticks, entry)) in held.enumerated() {
            guard let input = entry.retained else {
                throw .backendFailure("\(reason); frame at pts \(entry.pts) was not kept and cannot be encoded again")
            }
            pending[ticks]?.retained = nil
            frames += try software.encode(input, pts: ticks, forceKeyFrame: index == 0)
        }
        return try samples(from: frames)
    }
}
