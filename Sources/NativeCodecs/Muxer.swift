import CFFmpeg
import MediaCore

/// The codec parameters of a video track that a ``Muxer`` adds.
package struct MuxedVideoStream: Sendable {
    package var codec: CodecType
    package var width: Int
    package var height: Int
    /// The bitstream's profile and level numbers (H.264 `profile_idc` /
    /// `level_idc`, HEVC `general_profile_idc` / `general_level_idc`).
    package var profile: Int
    package var level: Int
    /// The codec's global header (`extradata`), written byte for byte; nil for none.
    package var extradata: [UInt8]?
    /// The sample entry type to write (`"hvc1"`), four ASCII characters;
    /// nil lets the muxer choose.
    package var codecTag: String?
    /// Ticks per second of the track's timestamps (the time base asked for;
    /// the muxer may pick another when it writes the header).
    package var timescale: Int32
    /// The average frame rate, frames per `frameRateDenominator` seconds, when known.
    package var frameRate: (numerator: Int32, denominator: Int32)?
    /// HDR10 static metadata, written as the stream's side data
    /// (`AV_PKT_DATA_MASTERING_DISPLAY_METADATA`, `AV_PKT_DATA_CONTENT_LIGHT_LEVEL`),
    /// from which libavformat's MP4 muxer writes `mdcv` and `clli` boxes and
    /// its Matroska muxer `MasteringMetadata`, `MaxCLL` and `MaxFALL`.
    package var hdr10: HDR10Metadata?

    package init(
        codec: CodecType, width: Int, height: Int, profile: Int, level: Int, extradata: [UInt8]?,
        codecTag: String?, timescale: Int32, frameRate: (numerator: Int32, denominator: Int32)?,
        hdr10: HDR10Metadata? = nil
    ) {
        self.hdr10 = hdr10
        self.codec = codec
        self.width = width
        self.height = height
        self.profile = profile
        self.level = level
        self.extradata = extradata
        self.codecTag = codecTag
        self.timescale = timescale
        self.frameRate = frameRate
    }
}

/// Writes a media file through libavformat: owns one muxing `AVFormatContext`
/// (`avformat_alloc_output_context2` / `avformat_free_context`), the file it
/// writes (`avio_open` / `avio_closep`) and the packet it writes from.
///
/// The order is libavformat's: ``addVideoStream(_:)`` for each track,
/// ``writeHeader(options:while:)`` once, ``writePacket(_:stream:pts:dts:duration:isKeyframe:while:)``
/// in decode order, then ``writeTrailer(while:)`` and ``closeFile()``. A muxer
/// released before that leaves an unfinished file behind.
package final class Muxer {
    /// The largest payload one packet can carry (libavformat sizes packets with `int`).
    package static let maximumPacketSize = Int(Int32.max)

    private let context: UnsafeMutablePointer<AVFormatContext>
    private let packet: LibavPacket
    /// For a network URL: the URL (for messages) and the deadline its
    /// interrupt callback checks; the context holds an unretained pointer to
    /// the deadline, so the muxer keeps it alive.
    private let network: (url: String, deadline: NetworkDeadline)?

    /// Creates the muxer libavformat calls `formatName` (`"mp4"`, `"matroska"`)
    /// and opens `path` for writing.
    ///
    /// - Throws: libavformat's errors when there is no such muxer or the file
    ///   cannot be created.
    package init(path: String, formatName: String) throws(MediaError) {
        let packet = try LibavPacket()
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        HardwareLog.installLogCallback()
        let allocated = avformat_alloc_output_context2(&context, nil, formatName, path)
        guard allocated >= 0, let context else {
            throw Libav.error(allocated, while: "creating a \(formatName) muxer for '\(path)'")
        }
        let opened = avio_open(&context.pointee.pb, path, CFFmpeg_AVIO_FLAG_WRITE())
        if opened < 0 {
            avformat_free_context(context)
            throw Libav.error(opened, while: "opening '\(path)' for writing")
        }
        self.context = context
        self.packet = packet
        self.network = nil
        LiveObjects.increment(.formatContext)
    }

    /// Creates the muxer `formatName` (`"mpegts"`, `"flv"`, `"rtsp"`,
    /// `"hls"`) for the network URL `url`, whose blocking calls stop when
    /// `deadline` expires (arm it before each call).
    ///
    /// For a muxer that writes through AVIO (MPEG-TS, FLV) the connection is
    /// opened here (`avio_open2`) with `protocolOptions` (such as
    /// `pkt_size`, `latency`, `mode`); a muxer that opens its own
    /// connections (`AVFMT_NOFILE`: RTSP, HLS) connects in
    /// ``writeHeader(options:while:)`` and takes its options there.
    ///
    /// - Throws: `.connectionFailed` for a refused or failed connection,
    ///   `.timedOut` when `deadline` stopped it, libavformat's errors otherwise;
    ///   messages start with `url`.
    package init(url: String, formatName: String, protocolOptions: [String: String], deadline: NetworkDeadline)
        throws(MediaError)
    {
        _ = Libav.networkReady
        let packet = try LibavPacket()
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        HardwareLog.installLogCallback()
        let allocated = avformat_alloc_output_context2(&context, nil, formatName, url)
        guard allocated >= 0, let context else {
            throw Libav.error(allocated, while: "creating a \(formatName) muxer for '\(url)'")
        }
        context.pointee.interrupt_callback = deadline.callback
        if context.pointee.oformat.pointee.flags & CFFmpeg_AVFMT_NOFILE() == 0 {
            var options = Libav.dictionary(protocolOptions)
            defer { av_dict_free(&options) }
            var callback = deadline.callback
            let opened = avio_open2(&context.pointee.pb, url, CFFmpeg_AVIO_FLAG_WRITE(), &callback, &options)
            if opened < 0 {
                avformat_free_context(context)
                throw Libav.networkError(opened, url: url, while: "connecting", deadline: deadline)
            }
        }
        self.context = context
        self.packet = packet
        self.network = (url, deadline)
        LiveObjects.increment(.formatContext)
    }

    /// The error for a failed call: network errors name the URL.
    private func failure(_ status: Int32, _ action: String) -> MediaError {
        if let network {
            return Libav.networkError(status, url: network.url, while: action, deadline: network.deadline)
        }
        return Libav.error(status, while: action)
    }

    deinit {
        avio_closep(&context.pointee.pb)
        avformat_free_context(context)
        LiveObjects.decrement(.formatContext)
    }

    /// Adds a video track and returns its index.
    package func addVideoStream(_ track: MuxedVideoStream) throws(MediaError) -> Int {
        guard let stream = avformat_new_stream(context, nil), let parameters = stream.pointee.codecpar else {
            throw MediaError(.outOfMemory, "avformat_new_stream failed")
        }
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = NativeLibraries.codecID(track.codec)
        parameters.pointee.width = Int32(track.width)
        parameters.pointee.height = Int32(track.height)
        parameters.pointee.profile = Int32(track.profile)
        parameters.pointee.level = Int32(track.level)
        if let extradata = track.extradata {
            // The codec parameters own extradata from here on (freed with the context).
            parameters.pointee.extradata = try Libav.paddedCopy(of: extradata)
            parameters.pointee.extradata_size = Int32(extradata.count)
        }
        if let tag = track.codecTag {
            let characters = Array(tag.utf8)
            precondition(characters.count == 4, "a codec tag has four characters, not '\(tag)'")
            parameters.pointee.codec_tag = CFFmpeg_MKTAG(characters[0], characters[1], characters[2], characters[3])
        }
        stream.pointee.time_base = AVRational(num: 1, den: track.timescale)
        if let frameRate = track.frameRate {
            stream.pointee.avg_frame_rate = AVRational(num: frameRate.numerator, den: frameRate.denominator)
        }
        // The stream owns the side data (freed with the context).
        if let mastering = track.hdr10?.libavMasteringDisplay {
            guard
                let data = av_stream_new_side_data(
                    stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, MemoryLayout<AVMasteringDisplayMetadata>.size)
            else { throw MediaError(.outOfMemory, "av_stream_new_side_data failed") }
            UnsafeMutableRawPointer(data).storeBytes(of: mastering, as: AVMasteringDisplayMetadata.self)
        }
        if let light = track.hdr10?.libavContentLight {
            guard
                let data = av_stream_new_side_data(
                    stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, MemoryLayout<AVContentLightMetadata>.size)
            else { throw MediaError(.outOfMemory, "av_stream_new_side_data failed") }
            UnsafeMutableRawPointer(data).storeBytes(of: light, as: AVContentLightMetadata.self)
        }
        return Int(stream.pointee.index)
    }

    /// Whether this muxer can store a track of `parameters`' codec:
    /// `avformat_query_codec` at normal compliance says yes or no, or nil when
    /// the muxer keeps no list (MPEG-TS, which writes any codec it has no
    /// stream type for as private data).
    package func canStore(_ parameters: CodecParameters) -> Bool? {
        let answer = avformat_query_codec(
            context.pointee.oformat, parameters.pointer.pointee.codec_id, FF_COMPLIANCE_NORMAL)
        return answer < 0 ? nil : answer == 1
    }

    /// Whether libavformat's muxer `formatName` can store a track of
    /// `parameters`' codec (see ``canStore(_:)``); nil when it keeps no list
    /// or there is no such muxer.
    package static func canStore(_ parameters: CodecParameters, formatName: String) -> Bool? {
        guard let format = av_guess_format(formatName, nil, nil) else { return nil }
        let answer = avformat_query_codec(format, parameters.pointer.pointee.codec_id, FF_COMPLIANCE_NORMAL)
        return answer < 0 ? nil : answer == 1
    }

    /// Why libavformat's muxer `formatName` refuses to write a header for a
    /// file holding a copied track of `parameters` (its logged errors, or
    /// its return code when it logged none), or nil when it writes one. The
    /// header goes to a memory buffer, with muxer `options`; it is what
    /// `avformat_query_codec` does not check: FLAC in MP4 is "experimental"
    /// in libavformat 5, Opus and FLAC are refused in QuickTime.
    package static func headerRefusal(
        for parameters: CodecParameters, formatName: String, options: [String: String], extradata: [UInt8]? = nil
    ) -> String? {
        HardwareLog.installLogCallback()
        var allocated: UnsafeMutablePointer<AVFormatContext>? = nil
        guard avformat_alloc_output_context2(&allocated, nil, formatName, nil) >= 0, let context = allocated else {
            return nil
        }
        defer { avformat_free_context(context) }
        guard let stream = avformat_new_stream(context, nil), let target = stream.pointee.codecpar,
            avcodec_parameters_copy(target, parameters.pointer) >= 0
        else { return nil }
        target.pointee.codec_tag = 0
        if let extradata {
            av_freep(&target.pointee.extradata)
            guard let copy = try? Libav.paddedCopy(of: extradata) else { return nil }
            target.pointee.extradata = copy
            target.pointee.extradata_size = Int32(extradata.count)
        }
        guard avio_open_dyn_buf(&context.pointee.pb) >= 0, let io = context.pointee.pb else { return nil }
        // A memory buffer seeks; the MP4 muxer wants a seekable output unless it writes fragments.
        io.pointee.seekable = CFFmpeg_AVIO_SEEKABLE_NORMAL()
        defer {
            var buffer: UnsafeMutablePointer<UInt8>? = nil
            _ = avio_close_dyn_buf(io, &buffer)
            av_free(buffer)
            context.pointee.pb = nil
        }
        var dictionary = Libav.dictionary(options)
        defer { av_dict_free(&dictionary) }
        let (status, errors) = HardwareLog.capture(forwarding: false) { avformat_write_header(context, &dictionary) }
        guard status < 0 else { return nil }
        return errors.isEmpty ? Libav.error(status, while: "writing the header").message : HardwareLog.summary(errors)
    }

    /// Adds a track that carries another file's packets as they are (stream
    /// copy): `parameters` are copied into the new stream, except the codec
    /// tag, which belongs to the source container (the muxer picks its own).
    /// `timeBase` is the source track's (a hint: the muxer may choose
    /// another when it writes the header). `extradata`, when given, replaces
    /// the source's codec configuration (an AudioSpecificConfig made from an
    /// ADTS header). Returns the new track's index.
    package func addCopiedStream(
        _ parameters: CodecParameters, timeBase: (numerator: Int32, denominator: Int32), language: String?,
        disposition: Int32, extradata: [UInt8]? = nil
    ) throws(MediaError) -> Int {
        guard let stream = avformat_new_stream(context, nil), let target = stream.pointee.codecpar else {
            throw MediaError(.outOfMemory, "avformat_new_stream failed")
        }
        try Libav.check(avcodec_parameters_copy(target, parameters.pointer), while: "copying codec parameters")
        target.pointee.codec_tag = 0
        if let extradata {
            // The codec parameters own extradata from here on (freed with the context).
            av_freep(&target.pointee.extradata)
            target.pointee.extradata = try Libav.paddedCopy(of: extradata)
            target.pointee.extradata_size = Int32(extradata.count)
        }
        stream.pointee.time_base = AVRational(num: timeBase.numerator, den: timeBase.denominator)
        stream.pointee.disposition = disposition
        if let language {
            try Libav.check(
                av_dict_set(&stream.pointee.metadata, "language", language, 0), while: "setting a track's language")
        }
        return Int(stream.pointee.index)
    }

    /// Writes the file header (`avformat_write_header`) with muxer `options`
    /// such as `["movflags": "+faststart"]`; options the muxer does not know
    /// are ignored. `action` names the step in the error message.
    package func writeHeader(options: [String: String], while action: @autoclosure () -> String)
        throws(MediaError)
    {
        var dictionary = Libav.dictionary(options)
        defer { av_dict_free(&dictionary) }
        let status = avformat_write_header(context, &dictionary)
        if status < 0 { throw failure(status, action()) }
    }

    /// Writes one packet of track `stream` (`av_interleaved_write_frame`),
    /// with its times rescaled to the time base the muxer chose for the track,
    /// rounded to nearest. A nil `duration` is written as unknown (0).
    ///
    /// - Precondition: `data.count` ≤ ``maximumPacketSize``.
    package func writePacket(
        _ data: [UInt8], stream: Int, pts: MediaTime, dts: MediaTime, duration: MediaTime?, isKeyframe: Bool,
        while action: @autoclosure () -> String
    ) throws(MediaError) {
        try writeAnyPacket(
            data, stream: stream, pts: pts, dts: dts, duration: duration, isKeyframe: isKeyframe, sideData: [],
            while: action())
    }

    /// Writes one packet of a copied track (see ``addCopiedStream(_:timeBase:language:disposition:)``)
    /// with its side data; a nil `pts` or `dts` is written as unknown
    /// (`AV_NOPTS_VALUE`), and the muxer derives what it needs.
    ///
    /// - Precondition: `data.count` ≤ ``maximumPacketSize``.
    package func writeCopiedPacket(
        _ data: [UInt8], stream: Int, pts: MediaTime?, dts: MediaTime?, duration: MediaTime?, isKeyframe: Bool,
        sideData: [PacketSideData], while action: @autoclosure () -> String
    ) throws(MediaError) {
        try writeAnyPacket(
            data, stream: stream, pts: pts, dts: dts, duration: duration, isKeyframe: isKeyframe, sideData: sideData,
            while: action())
    }

    private func writeAnyPacket(
        _ data: [UInt8], stream: Int, pts: MediaTime?, dts: MediaTime?, duration: MediaTime?, isKeyframe: Bool,
        sideData: [PacketSideData], while action: @autoclosure () -> String
    ) throws(MediaError) {
        precondition(data.count <= Self.maximumPacketSize, "a packet of \(data.count) bytes is too large")
        let avPacket = packet.pointer
        try Libav.check(av_new_packet(avPacket, Int32(data.count)), while: "allocating a packet")
        data.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { avPacket.pointee.data.update(from: base, count: source.count) }
        }
        for entry in sideData {
            // The packet owns the side data from here on (freed with its payload).
            guard let target = av_packet_new_side_data(avPacket, AVPacketSideDataType(entry.type), entry.bytes.count)
            else {
                packet.unreference()
                throw MediaError(.outOfMemory, "av_packet_new_side_data failed")
            }
            entry.bytes.withUnsafeBufferPointer { source in
                if let base = source.baseAddress { target.update(from: base, count: source.count) }
            }
        }
        let timeBase = context.pointee.streams[stream]!.pointee.time_base
        let none = CFFmpeg_AV_NOPTS_VALUE()
        avPacket.pointee.pts = pts.map { Self.ticks($0, in: timeBase) } ?? none
        avPacket.pointee.dts = dts.map { Self.ticks($0, in: timeBase) } ?? none
        avPacket.pointee.duration = duration.map { Self.ticks($0, in: timeBase) } ?? 0
        avPacket.pointee.stream_index = Int32(stream)
        avPacket.pointee.flags = isKeyframe ? CFFmpeg_AV_PKT_FLAG_KEY() : 0
        // On return the muxer holds the payload (or freed it) and the packet is blank again.
        let code = av_interleaved_write_frame(context, avPacket)
        if code < 0 {
            packet.unreference()
            throw failure(code, action())
        }
    }

    /// Writes every packet held so far to the file: the interleaving queue
    /// (`av_interleaved_write_frame` with no packet), the muxer's own buffer
    /// (`av_write_frame` with no packet: the MP4 muxer's fragment, the
    /// Matroska cluster, the MPEG-TS PES data), then the I/O buffer
    /// (`avio_flush`). `action` names the step in the error message.
    package func flush(while action: @autoclosure () -> String) throws(MediaError) {
        var status = av_interleaved_write_frame(context, nil)
        if status >= 0 { status = av_write_frame(context, nil) }
        if status >= 0, let io = context.pointee.pb {
            avio_flush(io)
            status = io.pointee.error
        }
        if status < 0 { throw failure(status, action()) }
    }

    /// Writes the index or trailer (`av_write_trailer`). `action` names the
    /// step in the error message.
    package func writeTrailer(while action: @autoclosure () -> String) throws(MediaError) {
        let status = av_write_trailer(context)
        if status < 0 { throw failure(status, action()) }
    }

    /// Closes the file early (after the trailer), reporting a failed flush.
    package func closeFile() throws(MediaError) {
        let status = avio_closep(&context.pointee.pb)
        if status < 0 { throw failure(status, network == nil ? "closing the output file" : "closing the connection") }
    }

    /// `time` in ticks of `timeBase`, rounded to nearest.
    private static func ticks(_ time: MediaTime, in timeBase: AVRational) -> Int64 {
        av_rescale_q(time.value, AVRational(num: 1, den: time.timescale), timeBase)
    }
}
