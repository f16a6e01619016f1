// The real-codec trial's receiver: RTP in, NACK and transport-cc out, access units into libavcodec, PSNR.

import DecodeSession
import FormatConv
import MediaCore
import RTPPayload

extension RealCodecTrialState {
    /// An RTP datagram off the forward link.
    func receivedRTP(_ datagram: [UInt8]) {
        if let header = try? RTPHeader.parse(datagram).0, header.ssrc == mediaSSRC {
            let number = Self.extend(header.sequenceNumber, near: newestReceivedSequenceNumber)
            newestReceivedSequenceNumber = max(newestReceivedSequenceNumber, number)
            deliveredOriginals.insert(number)
        }
        handle(receiver.receiveRTP(datagram, from: 1, at: now))
    }

    /// What the receiver session hands out, then a wake at its next deadline.
    func handle(_ events: [RTPReceiverSession<Int>.Event]) {
        for event in events {
            switch event {
            case .sample(let sample):
                decode(sample)
            case .loss(let loss):
                lossEvents += 1
                let first = Self.extend(loss.firstSequenceNumber, near: newestReceivedSequenceNumber)
                for offset in 0..<Int64(loss.count) { givenUp.insert(first + offset) }
                if let decoder {
                    do {
                        take(try decoder.reportLoss("RTP packets \(loss.firstSequenceNumber) + \(loss.count) lost"))
                    } catch {
                        decoderErrors.append("reportLoss: \(error)")
                    }
                }
            case .rtcp(let datagram, _):
                feedbackSent += 1
                path.reverse.send(
                    SimulatedPacket(
                        flow: rtpFlow, sequenceNumber: nextLinkSequenceNumber(), size: datagram.count,
                        payload: datagram))
            case .streamEnded:
                break
            }
        }
        scheduleReceiverWake()
    }

    private func scheduleReceiverWake() {
        guard let deadline = receiver.nextDeadline else { return }
        let time = Self.nanoseconds(clock.now)
        let wake = max(Int(deadline.converted(toTimescale: 1_000_000_000).value), time + 1000)
        if let scheduled = scheduledReceiverWake, scheduled <= wake, scheduled > time { return }
        scheduledReceiverWake = wake
        clock.schedule(at: .nanoseconds(wake)) { [self] in
            if scheduledReceiverWake == wake { scheduledReceiverWake = nil }
            handle(receiver.poll(at: now))
        }
    }

    private func decode(_ received: CompressedSample) {
        // The receiver counts pts from the first packet it handed on; the sender's RTP timestamps are the source
        // pts at 90 kHz (no offset), so the source pts is the receiver's plus that packet's timestamp.
        var sample = received
        if let origin = receiver.timestampOrigin {
            sample.pts = sample.pts + MediaTime(value: Int64(origin), timescale: 90_000)
        }
        if configuration.keepsReceivedStream { receivedSamples.append(sample) }
        do {
            if decoder == nil {
                decoder = try DecompressionSession(
                    formatDescription: sample.formatDescription, decoder: .software,
                    output: DecoderOutputAttributes(pixelFormat: .i420), threadCount: 1)
            }
            take(try decoder!.decode(sample, userValue: sample.pts))
        } catch {
            decoderErrors.append("decode: \(error)")
        }
    }

    /// Pictures out of the decoder: their luma PSNR against the source frame and, when kept, their MD5.
    func take(_ frames: [DecodedFrame]) {
        let lumaSize = configuration.width * configuration.height
        for frame in frames {
            let pts = frame.pts
            let index = Self.frameIndex(pts)
            let picture = frame.pixelBuffer.packedBytes()
            if configuration.keepsReceivedStream { decodedPictureMD5s.append(MD5.hex(picture)) }
            guard index >= 0, index < clip.frameCount, picture.count >= lumaSize else {
                decoderErrors.append("picture with pts \(pts) is no source frame")
                continue
            }
            let source = clip.frame(at: index).packedBytes()
            let value = psnr(Array(source[..<lumaSize]), Array(picture[..<lumaSize]))
            if decodedPSNR[index] != nil { decoderErrors.append("frame \(index) decoded twice") }
            decodedPSNR[index] = value.isFinite ? value : 99
        }
    }
}
