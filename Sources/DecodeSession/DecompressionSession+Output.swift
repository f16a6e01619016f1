import FormatConv
import MediaCore
import NativeCodecs
import PixelTransfer

// Pixels out: feeding the decoder and taking its pictures, converting them
// to the layout asked for, and format changes.
extension DecompressionSession {
    func feed(_ data: [UInt8], token: Int64, isKeyframe: Bool, into output: inout [DecodedFrame])
        throws(MediaError)
    {
        do throws(MediaError) {
            var attempts = 0
            while try !decoder.send(data, token: token, isKeyframe: isKeyframe) {
                // The decoder is full: take its pictures, then send again.
                attempts += 1
                guard attempts < 64 else {
                    throw .backendFailure(
                        "\(decoder.name) decoder: still full after returning its pictures 64 times")
                }
                try receiveAll(into: &output)
            }
            try receiveAll(into: &output)
        } catch {
            try handleFailure(error, into: &output)
        }
        noteSoftwareFallback()
    }

    func receiveAll(into output: inout [DecodedFrame]) throws(MediaError) {
        while let picture = try decoder.receive() {
            deliver(picture, into: &output)
        }
    }

    func deliver(_ picture: any DecoderPicture, into output: inout [DecodedFrame]) {
        let token = picture.token
        // A picture of a sample already delivered or dropped (a replay) is not repeated.
        guard let info = pending[token] else { return }
        if frameFilter == .intra {
            // Intra pictures come out in decode order: earlier samples still
            // pending were skipped.
            for skipped in pending.keys.sorted() where skipped < token {
                drop(skipped, kind: .filtered, reason: "left out by frameFilter intra")
            }
        }
        if let damage = picture.damage {
            drop(token, kind: .damaged, reason: damage + "; dropping until the next keyframe")
            beginResync("damaged picture at pts \(info.pts)", from: token)
            return
        }
        if let resync, let first = resync.damagedFrom, token >= first {
            drop(
                token, kind: .damaged,
                reason: "decoded after damaged data (\(resync.reason)); dropping until the next keyframe")
            return
        }
        if let target = preRollTarget {
            guard info.pts >= target else {
                drop(token, kind: .preRoll, reason: "decoded as pre-roll for the seek to \(target), not returned")
                dropsAtLastDelivery = dropTotal
                return
            }
            preRollTarget = nil
        }
        if let deadline = earliestPresentationTime, info.pts < deadline {
            drop(
                token, kind: .late,
                reason:
                    "late: presented before the earliest presentation time; decoded for later pictures, not returned")
            dropsAtLastDelivery = dropTotal
            return
        }
        // Read before the buffer is made: adopting the pixels may leave the picture blank.
        let hdr10 = picture.hdr10
        let hashCheck = checkPictureHash(of: picture, against: info.pictureHash, pts: info.pts)
        let buffer: PixelBuffer
        do {
            buffer = try outputBuffer(for: picture)
        } catch {
            drop(token, kind: .outputFailure, reason: "the picture cannot be output: \(error.message)")
            return
        }
        pending[token] = nil
        decoded += 1
        dropsAtLastDelivery = dropTotal
        var frame = DecodedFrame(
            pixelBuffer: buffer, pts: info.pts, duration: info.duration, isKeyframe: info.isKeyframe,
            userValue: info.userValue, hdr10: hdr10 ?? info.hdr10)
        frame.pictureHash = hashCheck
        output.append(frame)
    }

    /// Whether samples of `description` can be decoded by the current decoder
    /// without rebuilding it. (The session rebuilds itself when needed, so
    /// `false` only means that a rebuild will happen.)
    public func canAccept(_ description: FormatDescription) -> Bool {
        guard (try? Self.checkOutput(description, outputAttributes)) != nil else { return false }
        return formatDescription.canAccept(description)
    }

    /// Switches to samples of `description`: the current decoder takes the
    /// new parameter sets in-band when it can; otherwise it is drained (its
    /// pictures go to `output`) and a new one is opened.
    func reconfigure(to description: FormatDescription, isKeyframe: Bool, into output: inout [DecodedFrame])
        throws(MediaError)
    {
        try Self.checkOutput(description, outputAttributes)
        if formatDescription.canAccept(description) {
            // Same decoder: hand it the new parameter sets in-band.
            formatDescription = description
            injectParameterSets = true
            return
        }
        // Drain the old decoder so its pictures (old size) come first.
        if !pending.isEmpty {
            do throws(MediaError) {
                try decoder.sendEndOfStream()
                try receiveAll(into: &output)
            } catch {
                // Leftovers are dropped below.
            }
        }
        dropAllPending("the stream format changed before this picture came out of the decoder", kind: .formatChange)
        let (backend, reason) = try Self.makeDecoder(
            description, choice: requestedBackend, threadCount: threadCount, hardwareDisabled: hardwareDisabled,
            automaticDevicePath: automaticDevicePath, factory: factory)
        decoder = backend
        if let reason, !hardwareDisabled { fallbackReason = reason }
        formatDescription = description
        bitstreamHDR10 = nil
        replay.reset()
        if !isKeyframe {
            resync = Resync(reason: "the stream format changed at a sample that is not a keyframe", damagedFrom: nil)
        } else if resync != nil {
            resync = Resync(reason: resync!.reason, damagedFrom: nil)
        }
    }

    func outputBuffer(for picture: any DecoderPicture) throws(MediaError) -> PixelBuffer {
        let native = picture.nativeFormat
        guard let format = outputAttributes.pixelFormat ?? deliveredLayout(for: native) else {
            throw .unsupported(
                "the stream decodes to \(picture.formatName), which is not an output "
                    + "format; ask for DecoderOutputAttributes(pixelFormat:) to have it converted")
        }
        let (pictureWidth, pictureHeight) = (picture.width, picture.height)
        let width = outputAttributes.width ?? pictureWidth
        let height = outputAttributes.height ?? pictureHeight
        // May leave the picture blank (its pixels move into the buffer).
        let adopted = native == nil ? nil : picture.adoptedBuffer()
        if let adopted, format == native, width == pictureWidth, height == pictureHeight {
            return adopted
        }
        let transfer = self.transfer ?? PixelTransferSession(poolCapacity: 32)
        self.transfer = transfer
        let destination: PixelBuffer
        do {
            destination = try transfer.makeBuffer(width: width, height: height, format: format)
        } catch  where error.code == .poolExhausted {
            // The caller holds many pictures: give this one its own memory.
            destination = try PixelBuffer(width: width, height: height, format: format)
        }
        if let adopted {
            try transfer.transfer(adopted, into: destination)
        } else {
            try picture.withPlanes { planes, format throws(MediaError) in
                try transfer.transfer(
                    planes: planes, libavFormat: format, width: pictureWidth, height: pictureHeight,
                    into: destination)
            }
        }
        return destination
    }

    /// The layout a picture in the decoder's own `native` layout is handed
    /// out in when the caller asked for none: the layout of the pictures
    /// delivered before it while the chroma sampling and bit depth stay the
    /// same, so that a hardware → software fallback (NV12 / P010 before it,
    /// I420 / I010 after) does not change the layout in the middle of a
    /// stream. The two forms hold the same samples; the repacking is exact.
    func deliveredLayout(for native: PixelFormat?) -> PixelFormat? {
        guard let native else { return nil }
        if let pinned = pinnedLayout, pinned != native, pinned.chromaSubsampling == native.chromaSubsampling,
            pinned.bitDepth == native.bitDepth
        {
            return pinned
        }
        pinnedLayout = native
        return native
    }

    /// Checks that pictures of `description` can be output as asked.
    static func checkOutput(_ description: FormatDescription, _ output: DecoderOutputAttributes)
        throws(MediaError)
    {
        guard output.pixelFormat == nil else { return }
        guard description.bitDepthChroma == description.bitDepth || description.chromaFormat == .monochrome,
            PixelFormat.planar(description.chromaFormat, bitDepth: description.bitDepth) != nil
        else {
            throw .unsupported(
                "\(description.codec) \(description.chromaFormat) pictures of \(description.bitDepth)-bit luma and "
                    + "\(description.bitDepthChroma)-bit chroma have no native output format (8, 10 and 12 bits "
                    + "with equal luma and chroma depths have one); pass DecoderOutputAttributes(pixelFormat:) "
                    + "to have them converted")
        }
    }

    /// The current parameter sets as length-prefixed NAL units, to pass them
    /// in-band ahead of a sample after a format change the decoder accepts.
    /// (A parameter set too long for the stream's NAL unit length size
    /// cannot be written; the sample then goes without them.)
    func parameterSetsInBand() -> [UInt8] {
        (try? LengthPrefixed.write(
            formatDescription.parameterSets, lengthSize: formatDescription.nalUnitHeaderLength)) ?? []
    }
}
