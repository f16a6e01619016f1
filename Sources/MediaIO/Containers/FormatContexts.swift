import CFFmpeg
import MediaCore
import NativeCodecs

/// Owns one `AVPacket` (`av_packet_alloc` / `av_packet_free`).
final class Packet {
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

/// Owns one demuxing `AVFormatContext` (`avformat_open_input` /
/// `avformat_close_input`) after `avformat_find_stream_info` has run on it.
final class InputFormatContext {
    let pointer: UnsafeMutablePointer<AVFormatContext>

    init(path: String) throws(MediaError) {
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        let opened = avformat_open_input(&context, path, nil, nil)
        guard opened >= 0, let context else {
            throw Libav.error(opened, while: "opening '\(path)'")
        }
        let probed = avformat_find_stream_info(context, nil)
        if probed < 0 {
            var closing: UnsafeMutablePointer<AVFormatContext>? = context
            avformat_close_input(&closing)
            throw Libav.error(probed, while: "reading the stream information of '\(path)'")
        }
        pointer = context
        LiveObjects.increment(.formatContext)
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&context)
        LiveObjects.decrement(.formatContext)
    }

    /// Reads the next packet into `packet`; false at the end of the file.
    func read(into packet: Packet) throws(MediaError) -> Bool {
        let code = av_read_frame(pointer, packet.pointer)
        if Libav.isEndOfFile(code) { return false }
        try Libav.check(code, while: "reading a packet")
        return true
    }
}

/// Owns one muxing `AVFormatContext` (`avformat_alloc_output_context2` /
/// `avformat_free_context`) and the file it writes (`avio_open` / `avio_closep`).
final class OutputFormatContext {
    let pointer: UnsafeMutablePointer<AVFormatContext>

    init(path: String, muxerName: String) throws(MediaError) {
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        let allocated = avformat_alloc_output_context2(&context, nil, muxerName, path)
        guard allocated >= 0, let context else {
            throw Libav.error(allocated, while: "creating a \(muxerName) muxer for '\(path)'")
        }
        let opened = avio_open(&context.pointee.pb, path, CFFmpeg_AVIO_FLAG_WRITE())
        if opened < 0 {
            avformat_free_context(context)
            throw Libav.error(opened, while: "opening '\(path)' for writing")
        }
        pointer = context
        LiveObjects.increment(.formatContext)
    }

    deinit {
        avio_closep(&pointer.pointee.pb)
        avformat_free_context(pointer)
        LiveObjects.decrement(.formatContext)
    }

    /// Closes the file early (after the trailer), reporting a failed flush.
    func closeFile() throws(MediaError) {
        try Libav.check(avio_closep(&pointer.pointee.pb), while: "closing the output file")
    }
}
