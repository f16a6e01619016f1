import CFFmpeg
import MediaCore

/// One track of a file opened by a ``Demuxer``, as libavformat describes it
/// after probing (`AVStream` and its `AVCodecParameters`).
package struct DemuxedStream: Sendable {
    /// The track's index among the file's tracks.
    package var index: Int
    /// `"video"`, `"audio"`, `"subtitle"`, …; nil when libavutil has no name for it.
    package var mediaType: String?
    /// Whether the track is video.
    package var isVideo: Bool
    /// Whether the track is a cover image (`AV_DISPOSITION_ATTACHED_PIC`), not a movie.
    package var isAttachedPicture: Bool
    /// The codec when it is H.264 or HEVC, else nil.
    package var codec: CodecType?
    /// libavcodec's name for the codec (`"h264"`, `"aac"`), for messages.
    package var codecName: String
    /// The container's codec tag (an MP4 sample entry type such as `avc1`,
    /// packed little-endian), 0 when there is none.
    package var codecTag: UInt32
    /// The timestamps' time base: `timeBaseNumerator / timeBaseDenominator` seconds per tick.
    package var timeBaseNumerator: Int32
    package var timeBaseDenominator: Int32
    /// The track's duration in ticks, when the container states it.
    package var duration: Int64?
    /// The number of frames the container says the track has (0 when unknown).
    package var frameCount: Int64
    /// The codec's global header (`extradata`): the avcC/hvcC record in MP4 and
    /// Matroska, empty when there is none.
    package var extradata: [UInt8]
    /// The track's HDR10 static metadata from the container (MP4 `mdcv` /
    /// `clli`, Matroska `MasteringMetadata` / `MaxCLL` / `MaxFALL`), which
    /// libavformat returns as stream side data; nil when there is none.
    package var hdr10: HDR10Metadata?
    /// The track's language (ISO 639-2 code from the `language` metadata
    /// entry), nil when the container names none or says `und`.
    package var language: String?
    /// `AV_DISPOSITION_*` flags (default, forced, hearing impaired, …).
    package var disposition: Int32
    /// Audio: samples per second and channels; 0 for other tracks.
    package var sampleRate: Int
    package var channelCount: Int
    /// Audio: samples per frame when the codec has a fixed frame size (AAC's 1024); else 0.
    package var frameSize: Int
    /// Video: the coded picture size; 0 for other tracks.
    package var width: Int
    package var height: Int
    /// A copy of the track's `AVCodecParameters`, for a ``Muxer`` that copies
    /// the track's packets as they are.
    package var parameters: CodecParameters
}

/// One packet side data entry (`AVPacketSideData`): its
/// `AVPacketSideDataType` as a raw value and its bytes, copied.
package struct PacketSideData: Sendable, Equatable {
    package var type: UInt32
    package var bytes: [UInt8]
}

/// One packet read by a ``Demuxer``, copied out of libavformat's buffer.
package struct DemuxedPacket: Sendable {
    /// The track it belongs to.
    package var streamIndex: Int
    package var data: [UInt8]
    /// Presentation and decode times in the track's time base; nil when the
    /// container has none.
    package var pts: Int64?
    package var dts: Int64?
    /// The duration in the track's time base; 0 or less when unknown.
    package var duration: Int64
    package var isKeyframe: Bool
    /// Whether the demuxer flagged the payload as damaged
    /// (`AV_PKT_FLAG_CORRUPT`: an MPEG-TS continuity error, a short read).
    package var isCorrupt: Bool = false
    /// The packet's side data (skip samples, new extradata, …), copied.
    package var sideData: [PacketSideData] = []
}

/// Reads a media file through libavformat: owns one demuxing
/// `AVFormatContext` (`avformat_open_input` / `avformat_close_input`), probed
/// with `avformat_find_stream_info`, and the packet it reads into.
///
/// `init` opens and probes the file and lists its tracks; ``select(stream:)``
/// keeps one track, and ``readPacket()`` returns that track's packets in file
/// order, copied into Swift arrays.
package final class Demuxer {
    /// libavformat's name for the demuxer, such as `"mov,mp4,m4a,3gp,3g2,mj2"`.
    package let formatName: String
    /// Every track in the file, in file order.
    package let streams: [DemuxedStream]

    private let context: UnsafeMutablePointer<AVFormatContext>
    private let packet: LibavPacket
    private var selectedStream: Int?
    /// For a network URL: the URL (for messages) and the deadline its
    /// interrupt callback checks (kept alive here: the context holds an
    /// unretained pointer to it).
    private let network: (url: String, deadline: NetworkDeadline)?

    /// Opens and probes `path`.
    ///
    /// - Throws: libavformat's errors for a file that cannot be opened or probed.
    package init(path: String) throws(MediaError) {
        let packet = try LibavPacket()
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        HardwareLog.installLogCallback()
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
        self.context = context
        self.packet = packet
        self.network = nil
        self.formatName = String(cString: context.pointee.iformat.pointee.name)
        self.streams = try Self.describeStreams(of: context)
        LiveObjects.increment(.formatContext)
    }

    /// Opens the network URL `url` (connecting, or waiting for a peer when
    /// the options make it a listener) with the demuxer `formatName` (nil:
    /// libavformat picks it from the URL and the first bytes) and `options`
    /// (format, protocol and demuxer options together, such as `probesize`,
    /// `fflags`, `rtsp_transport`, `listen`). Blocking calls stop when
    /// `deadline` expires; it is armed with `openTimeout` here.
    ///
    /// Stream probing (`avformat_find_stream_info`) runs only when opening
    /// found no H.264/HEVC video track (FLV announces its tracks in its
    /// first packets; MPEG-TS and RTSP name the codec in their headers), or
    /// with `probingEveryTrack`: the other tracks' codec parameters (an AAC
    /// track's sample rate) are complete only after it.
    /// It runs without `AVFMT_FLAG_NOBUFFER`, so that the packets read while
    /// probing are kept and returned by ``readPacket()``, not dropped.
    ///
    /// - Throws: `.connectionFailed`, `.timedOut` or libavformat's errors,
    ///   with messages that start with `url`.
    package init(
        url: String, formatName: String?, options: [String: String], deadline: NetworkDeadline, openTimeout: Double?,
        probingEveryTrack: Bool = false
    ) throws(MediaError) {
        _ = Libav.networkReady
        let packet = try LibavPacket()
        HardwareLog.installLogCallback()
        guard var context = avformat_alloc_context() else {
            throw MediaError(.outOfMemory, "avformat_alloc_context failed")
        }
        context.pointee.interrupt_callback = deadline.callback
        let format: UnsafePointer<AVInputFormat>? = formatName.flatMap { av_find_input_format($0) }
        var dictionary = Libav.dictionary(options)
        defer { av_dict_free(&dictionary) }
        deadline.arm(seconds: openTimeout)
        var opening: UnsafeMutablePointer<AVFormatContext>? = context
        let opened = avformat_open_input(&opening, url, format, &dictionary)
        // On failure avformat_open_input has freed the context.
        guard opened >= 0, let openedContext = opening else {
            throw Libav.networkError(opened, url: url, while: "opening the stream", deadline: deadline)
        }
        context = openedContext
        let knowsCodec = (0..<Int(context.pointee.nb_streams)).contains { index in
            let parameters = context.pointee.streams[index]!.pointee.codecpar.pointee
            return parameters.codec_id == AV_CODEC_ID_H264 || parameters.codec_id == AV_CODEC_ID_HEVC
        }
        if !knowsCodec || probingEveryTrack {
            let flags = context.pointee.flags
            context.pointee.flags = flags & ~CFFmpeg_AVFMT_FLAG_NOBUFFER()
            let probed = avformat_find_stream_info(context, nil)
            context.pointee.flags = flags
            if probed < 0 {
                var closing: UnsafeMutablePointer<AVFormatContext>? = context
                avformat_close_input(&closing)
                throw Libav.networkError(
                    probed, url: url, while: "reading the stream information", deadline: deadline)
            }
        }
        self.context = context
        self.packet = packet
        self.network = (url, deadline)
        self.formatName = String(cString: context.pointee.iformat.pointee.name)
        self.streams = try Self.describeStreams(of: context)
        LiveObjects.increment(.formatContext)
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&context)
        LiveObjects.decrement(.formatContext)
    }

    /// Keeps only the track at `index`: libavformat discards the others
    /// (`AVDISCARD_ALL`) and ``readPacket()`` skips any it still returns.
    package func select(stream index: Int) {
        precondition(streams.indices.contains(index), "stream \(index) is not in the file")
        for other in streams.indices where other != index {
            context.pointee.streams[other]!.pointee.discard = AVDISCARD_ALL
        }
        selectedStream = index
    }

    /// Moves to the keyframe at or before `ticks` (in the selected track's
    /// time base) with `av_seek_frame(AVSEEK_FLAG_BACKWARD)`.
    package func seek(toTicks ticks: Int64) throws(MediaError) {
        let stream = Int32(selectedStream ?? -1)
        try Libav.check(av_seek_frame(context, stream, ticks, AVSEEK_FLAG_BACKWARD), while: "seeking")
    }

    /// The next packet of the selected track (of any track before
    /// ``select(stream:)``), or nil at the end of the file.
    package func readPacket() throws(MediaError) -> DemuxedPacket? {
        while true {
            packet.unreference()
            let code = av_read_frame(context, packet.pointer)
            if Libav.isEndOfFile(code) { return nil }
            if code < 0, let network {
                throw Libav.networkError(code, url: network.url, while: "reading", deadline: network.deadline)
            }
            try Libav.check(code, while: "reading a packet")
            defer { packet.unreference() }
            let raw = packet.pointer.pointee
            let streamIndex = Int(raw.stream_index)
            if let selectedStream, streamIndex != selectedStream { continue }
            var sideData: [PacketSideData] = []
            for entry in 0..<Int(raw.side_data_elems) {
                let item = raw.side_data[entry]
                let bytes = item.size > 0 ? Array(UnsafeBufferPointer(start: item.data, count: item.size)) : []
                sideData.append(PacketSideData(type: item.type.rawValue, bytes: bytes))
            }
            return DemuxedPacket(
                streamIndex: streamIndex,
                data: raw.size > 0 ? Array(UnsafeBufferPointer(start: raw.data, count: Int(raw.size))) : [],
                pts: Libav.timestamp(raw.pts), dts: Libav.timestamp(raw.dts), duration: raw.duration,
                isKeyframe: raw.flags & CFFmpeg_AV_PKT_FLAG_KEY() != 0,
                isCorrupt: raw.flags & CFFmpeg_AV_PKT_FLAG_CORRUPT() != 0, sideData: sideData)
        }
    }

    /// Every track of `context`; on failure the context is closed.
    private static func describeStreams(of context: UnsafeMutablePointer<AVFormatContext>) throws(MediaError)
        -> [DemuxedStream]
    {
        var streams: [DemuxedStream] = []
        for index in 0..<Int(context.pointee.nb_streams) {
            do {
                streams.append(try describe(context.pointee.streams[index]!, index: index))
            } catch {
                var closing: UnsafeMutablePointer<AVFormatContext>? = context
                avformat_close_input(&closing)
                throw error
            }
        }
        return streams
    }

    private static func describe(_ stream: UnsafeMutablePointer<AVStream>, index: Int) throws(MediaError)
        -> DemuxedStream
    {
        let parameters = stream.pointee.codecpar.pointee
        let codec: CodecType? =
            switch parameters.codec_id {
            case AV_CODEC_ID_H264: .h264
            case AV_CODEC_ID_HEVC: .hevc
            default: nil
            }
        let extradata: [UInt8] =
            parameters.extradata_size > 0 && parameters.extradata != nil
            ? Array(UnsafeBufferPointer(start: parameters.extradata, count: Int(parameters.extradata_size))) : []
        return DemuxedStream(
            index: index,
            mediaType: av_get_media_type_string(parameters.codec_type).map { String(cString: $0) },
            isVideo: parameters.codec_type == AVMEDIA_TYPE_VIDEO,
            isAttachedPicture: stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0,
            codec: codec, codecName: String(cString: avcodec_get_name(parameters.codec_id)),
            codecTag: parameters.codec_tag, timeBaseNumerator: stream.pointee.time_base.num,
            timeBaseDenominator: stream.pointee.time_base.den, duration: Libav.timestamp(stream.pointee.duration),
            frameCount: stream.pointee.nb_frames, extradata: extradata, hdr10: hdr10(of: stream),
            language: language(of: stream), disposition: stream.pointee.disposition,
            sampleRate: parameters.codec_type == AVMEDIA_TYPE_AUDIO ? Int(parameters.sample_rate) : 0,
            channelCount: parameters.codec_type == AVMEDIA_TYPE_AUDIO ? Int(parameters.ch_layout.nb_channels) : 0,
            frameSize: parameters.codec_type == AVMEDIA_TYPE_AUDIO ? Int(parameters.frame_size) : 0,
            width: parameters.codec_type == AVMEDIA_TYPE_VIDEO ? Int(parameters.width) : 0,
            height: parameters.codec_type == AVMEDIA_TYPE_VIDEO ? Int(parameters.height) : 0,
            parameters: try CodecParameters(copying: stream.pointee.codecpar))
    }

    /// The `language` metadata entry, unless it is missing or `und` (undetermined).
    private static func language(of stream: UnsafeMutablePointer<AVStream>) -> String? {
        guard let entry = av_dict_get(stream.pointee.metadata, "language", nil, 0), let value = entry.pointee.value
        else { return nil }
        let language = String(cString: value)
        return language.isEmpty || language == "und" ? nil : language
    }

    private static func hdr10(of stream: UnsafeMutablePointer<AVStream>) -> HDR10Metadata? {
        func sideData<T>(_ type: AVPacketSideDataType, as _: T.Type) -> T? {
            var size = 0
            guard let data = av_stream_get_side_data(stream, type, &size), size >= MemoryLayout<T>.size else {
                return nil
            }
            return UnsafeRawPointer(data).loadUnaligned(as: T.self)
        }
        return HDR10Metadata(
            libavMasteringDisplay: sideData(
                AV_PKT_DATA_MASTERING_DISPLAY_METADATA, as: AVMasteringDisplayMetadata.self),
            contentLight: sideData(AV_PKT_DATA_CONTENT_LIGHT_LEVEL, as: AVContentLightMetadata.self))
    }
}
