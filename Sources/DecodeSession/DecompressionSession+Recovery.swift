import FormatConv
import MediaCore
import NativeCodecs

// Failure handling: waiting for a keyframe after damage or loss, rebuilding
// a failed decoder and replaying the samples kept since the last keyframe.
extension DecompressionSession {
    func handleFailure(_ failure: MediaError, into output: inout [DecodedFrame]) throws(MediaError) {
        if let refusal = decoder.hardwareRefused {
            dropAllPending(refusal, kind: .decoderFailure)
            throw .unavailable(refusal)
        }
        let onHardware = decoder.isOnHardware
        if onHardware, requestedBackend.isHardware {
            // Hardware only: no software fallback. The samples in flight are
            // lost; the decoder starts again at the next keyframe.
            let reason = decoder.withHardwareErrors("\(decoder.name) decoding failed: \(failure.message)")
            dropAllPending(reason, kind: .decoderFailure)
            decoder.flush()
            replay.reset()
            resync = Resync(reason: reason, damagedFrom: nil)
            throw .backendFailure(reason + " (automatic decoder selection would continue in software)")
        }
        if !replaying && (onHardware || failure.code != .invalidData) {
            let what =
                onHardware
                ? decoder.withHardwareErrors("\(decoder.name) decoding failed: \(failure.message)")
                : "the decoder failed: \(failure.message)"
            rebuildAndReplay(reason: what, disableHardware: onHardware, into: &output)
            return
        }
        // Bad data: drop from the oldest picture still inside the decoder.
        beginResync(failure.message, from: pending.keys.min() ?? nextToken)
    }

    /// Builds a software decoder and decodes again the samples kept since the
    /// last keyframe; pictures already delivered are not repeated.
    func rebuildAndReplay(reason: String, disableHardware: Bool, into output: inout [DecodedFrame]) {
        if disableHardware {
            hardwareDisabled = true
            fallbackReason = reason + "; continuing in software"
            CodecLog.log(.warning, subsystem: "DecodeSession", reason + "; continuing in software")
        }
        do {
            decoder = try factory.software(formatDescription, threadCount)
        } catch {
            dropAllPending("\(reason); no replacement decoder: \(error.message)", kind: .decoderFailure)
            resync = Resync(reason: reason, damagedFrom: nil)
            return
        }
        let samples = replay.replayable
        let firstReplayed = samples.first?.token ?? nextToken
        for token in pending.keys.sorted() where token < firstReplayed {
            let why =
                replay.overflows > 0
                ? "its group of pictures outgrew the replay cache (\(replay.byteLimit) bytes)"
                : "no keyframe precedes it since the decoder started"
            drop(token, kind: .notReplayable, reason: "\(reason); the picture cannot be replayed: \(why)")
        }
        guard !samples.isEmpty else {
            resync = Resync(reason: reason, damagedFrom: nil)
            return
        }
        replaying = true
        defer { replaying = false }
        for sample in samples {
            // A failure during the replay is handled as bad data, so this cannot recurse.
            try? feed(sample.data, token: sample.token, isKeyframe: sample.isKeyframe, into: &output)
        }
    }

    func beginResync(_ reason: String, from token: Int64) {
        if var current = resync {
            current.damagedFrom = min(current.damagedFrom ?? token, token)
            resync = current
        } else {
            resync = Resync(reason: reason, damagedFrom: token)
        }
    }

    /// At a keyframe after damage: takes the good pictures still inside the
    /// decoder, drops the rest, and resets it.
    func resynchronize(into output: inout [DecodedFrame]) {
        let reason = resync?.reason ?? ""
        if !pending.isEmpty {
            do throws(MediaError) {
                try decoder.sendEndOfStream()
                try receiveAll(into: &output)
            } catch {
                // Whatever did not come out is dropped below.
            }
        }
        decoder.flush()
        dropAllPending("no picture came out of the decoder (\(reason))", kind: .notReturned)
        resync = nil
    }

    /// Returns the pictures in flight (complete: nothing in decode order
    /// refers to a later sample), resets the decoder and waits for a keyframe.
    func skipToNextKeyframe(_ reason: String) -> [DecodedFrame] {
        var output: [DecodedFrame] = []
        resync = Resync(reason: reason, damagedFrom: nil)
        resynchronize(into: &output)
        replay.reset()
        resync = Resync(reason: reason, damagedFrom: nil, lossReported: true)
        return output
    }
}
