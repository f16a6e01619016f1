import CFFmpeg
import MediaCore

/// Owns one `AVPacket` (`av_packet_alloc` / `av_packet_free`), reused by a
/// ``Demuxer`` or ``Muxer`` for every packet it reads or writes.
final class LibavPacket {
    let pointer: UnsafeMutablePointer<AVPacket>

    init() throws(MediaError) {
        guard let packet = av_packet_alloc() else {
            throw MediaError(.outOfMemory, "av_packet_alloc failed")
        }
        pointer = packet
        LiveObjects.increment(.avPacket)
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
        LiveObjects.decrement(.avPacket)
    }

    /// Drops the payload it references (`av_packet_unref`).
    func unreference() { av_packet_unref(pointer) }
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
