import CFFmpeg
import MediaCore

/// The owner of every `AVPacket`: `av_packet_alloc` in `init`,
/// `av_packet_free` in `deinit` and nowhere else. The demuxer, the muxer, the
/// decoder and the VA-API encoder each reuse one for every packet.
final class LibavPacket {
    let pointer: UnsafeMutablePointer<AVPacket>
    private let kind: LiveObjects.Kind

    /// A packet counted as `kind` in ``LiveObjects``.
    init(kind: LiveObjects.Kind = .avPacket) throws(MediaError) {
        guard let packet = av_packet_alloc() else {
            throw MediaError(.outOfMemory, "av_packet_alloc failed")
        }
        pointer = packet
        self.kind = kind
        LiveObjects.increment(kind)
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
        LiveObjects.decrement(kind)
    }

    /// Drops the payload it references (`av_packet_unref`).
    func unreference() { av_packet_unref(pointer) }
}

/// The owner of every reusable `AVFrame`: `av_frame_alloc` in `init`,
/// `av_frame_free` in `deinit` and nowhere else (``DecodedPicture`` owns the
/// frames it hands out the same way).
final class LibavFrame {
    let pointer: UnsafeMutablePointer<AVFrame>
    private let kind: LiveObjects.Kind

    /// A frame counted as `kind` in ``LiveObjects``.
    init(kind: LiveObjects.Kind = .avFrame) throws(MediaError) {
        guard let frame = av_frame_alloc() else {
            throw MediaError(.outOfMemory, "av_frame_alloc failed")
        }
        pointer = frame
        self.kind = kind
        LiveObjects.increment(kind)
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
        LiveObjects.decrement(kind)
    }
}

extension Libav {
    /// A timestamp in ticks, or nil for `AV_NOPTS_VALUE` (no timestamp).
    static func timestamp(_ ticks: Int64) -> Int64? { ticks == CFFmpeg_AV_NOPTS_VALUE() ? nil : ticks }

    /// A copy of `bytes` in `av_mallocz` memory with the zeroed padding that
    /// libavcodec's readers need (`AV_INPUT_BUFFER_PADDING_SIZE`). The caller
    /// owns it until it hands it to a structure that frees it (`extradata`).
    static func paddedCopy(of bytes: [UInt8]) throws(MediaError) -> UnsafeMutablePointer<UInt8> {
        let size = bytes.count + Int(CFFmpeg_AV_INPUT_BUFFER_PADDING_SIZE())
        guard let memory = av_mallocz(size)?.assumingMemoryBound(to: UInt8.self) else {
            throw MediaError(.outOfMemory, "av_mallocz(\(size)) failed")
        }
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { memory.update(from: base, count: source.count) }
        }
        return memory
    }
}
