import FormatConv
import MediaCore

/// What a the compression session asks an ``EncoderBackend`` to build.
///
/// The session validates its properties before a backend sees them (ranges
/// that do not depend on the library) and passes them as ``settings``; it
/// resolves the values that need the frame rate: ``keyFrameInterval`` already
/// folds in the maximum keyframe interval in seconds.
package struct EncoderConfiguration: Sendable {
    /// Picture size of every frame the session will pass.
    package var width: Int
    package var height: Int
    package var codec: CodecType
    /// The session's properties, already range-checked.
    package var settings: EncoderSettings
    /// Ticks per second of every `pts`/`dts` passed to and returned by the
    /// backend (the session timebase, 90 kHz).
    package var timescale: Int32
    /// The frame rate the encoder should assume, as a fraction
    /// (the expected frame rate, 30/1 when unset).
    package var frameRate: (numerator: Int, denominator: Int)
    /// The longest distance between keyframes in frames, or `nil` for the
    /// library's default.
    package var keyFrameInterval: Int?
    /// The planar layout of the pictures to code, which fixes the stream's
    /// chroma format and bit depth (`.i420`, `.i210`, `.gray12` …). The
    /// session passes frames in this format, except that an `.i420` session
    /// may pass `.nv12` frame by frame.
    package var pixelFormat: PixelFormat

    /// Bits per sample of the pictures: 8, 10 or 12.
    package var bitDepth: Int { pixelFormat.bitDepth }

    package init(
        width: Int, height: Int, codec: CodecType, settings: EncoderSettings, timescale: Int32,
        frameRate: (numerator: Int, denominator: Int), keyFrameInterval: Int?, pixelFormat: PixelFormat
    ) {
        precondition(pixelFormat.isPlanarYCbCr, "encoders code planar Y'CbCr pictures, not \(pixelFormat)")
        self.width = width
        self.height = height
        self.codec = codec
        self.settings = settings
        self.timescale = timescale
        self.frameRate = frameRate
        self.keyFrameInterval = keyFrameInterval
        self.pixelFormat = pixelFormat
    }
}

/// One coded picture as a backend hands it to the session.
package struct EncodedFrame: Sendable {
    /// NAL units of one access unit, each behind a 4-byte big-endian length
    /// (ISO/IEC 14496-15 5.3.2 / 8.3.2 sample format). Parameter sets and
    /// access unit delimiters may be left in; the session strips them and
    /// keeps SEI.
    package var data: [UInt8]
    /// Presentation time in the session timebase; equal to the `pts` the
    /// picture was submitted with.
    package var pts: Int64
    /// Decode time in the session timebase; ≤ `pts`, increasing from frame to
    /// frame, and negative at the start when B-frames delay output.
    package var dts: Int64
    /// An IDR (H.264) or IRAP (HEVC) picture from which decoding can start.
    package var isKeyframe: Bool
    /// Whether decoding this picture needs other pictures (false for intra
    /// pictures).
    package var dependsOnOthers: Bool
    /// The encoder's own PSNR of the picture against its input, when asked for.
    package var psnr: PictureQuality.PSNR?

    package init(
        data: [UInt8], pts: Int64, dts: Int64, isKeyframe: Bool, dependsOnOthers: Bool,
        psnr: PictureQuality.PSNR? = nil
    ) {
        self.psnr = psnr
        self.data = data
        self.pts = pts
        self.dts = dts
        self.isKeyframe = isKeyframe
        self.dependsOnOthers = dependsOnOthers
    }
}

/// The encoder behind a compression session: x264, x265 or VA-API — the
/// mirror of ``DecoderBackend`` (this file and `DecoderBackend.swift` are the
/// two backend contracts; ``EncoderFactory`` and ``DecoderFactory`` make
/// them).
///
/// A backend is a `final class` that owns one C object (an `x264_t`, an
/// `x265_encoder`, an `AVCodecContext` with its hardware contexts). Its
/// contract:
///
/// - **Creation** happens in the backend's own initializer (or factory),
///   which either succeeds whole — the encoder is open and
///   ``parameterSets`` is filled — or frees everything it allocated and
///   throws a ``MediaError`` whose message says why (`.unavailable` when a
///   library, device or profile is missing; `.invalidArgument` naming the
///   property and its range when the library rejects a value;
///   `.backendFailure` with the library's own text otherwise). `deinit`
///   frees the C object. Each owned C object counts itself in
///   ``LiveObjects``.
/// - **Parameter sets**: ``parameterSets`` holds the encoder's headers as
///   bare NAL units (header byte(s) included, emulation-prevention bytes
///   kept, no start codes or length prefixes): SPS and PPS for H.264, VPS,
///   SPS and PPS for HEVC. The session builds its `FormatDescription` from
///   them right after creation, so they must describe every frame the
///   backend will produce (in-band repeats are allowed but ignored).
/// - **Encoding**: ``encode(_:pts:forceKeyFrame:)`` receives frames in
///   presentation order with increasing `pts` (the session checks), of the
///   configured size, in ``EncoderConfiguration/pixelFormat`` (or NV12 for I420). It returns
///   the pictures that are complete, in decode order — zero or more, since
///   encoders with look-ahead or B-frames hold some back. The payloads
///   are copied out of the library's memory before returning (x264 and
///   libavcodec reuse it on the next call). `forceKeyFrame` makes that
///   picture an IDR/IRAP.
/// - **Draining**: ``finish()`` flushes every delayed picture, in decode
///   order. After it, the session does not call ``encode(_:pts:forceKeyFrame:)``
///   again.
/// - **Frames that never come out** are found by the session (it reports
///   each such `pts` in the session's dropped frames); a backend
///   never invents or duplicates a `pts`.
/// - **Reconfiguration**: ``setAverageBitRate(_:)`` changes the target while
///   encoding, or throws `.unsupported` when the backend cannot.
/// - **Threads**: a backend is used from one thread at a time (the session
///   serializes calls); it starts only the threads its library needs.
package protocol EncoderBackend: AnyObject {
    /// The backend's short name, shown as the session's backend:
    /// `"x264"`, `"x265"`, `"vaapi"` (see ``BackendNames``).
    var name: String { get }
    /// Where it runs (the session's `backendInUse`); `.software` unless
    /// the backend says otherwise.
    var backendInUse: CodecBackend { get }
    /// The encoder's headers as bare NAL units (see the protocol's notes).
    var parameterSets: [[UInt8]] { get }
    /// Encodes one frame; returns the pictures ready now, in decode order.
    func encode(_ frame: PixelBuffer, pts: Int64, forceKeyFrame: Bool) throws(MediaError) -> [EncodedFrame]
    /// Returns every picture still inside the encoder, in decode order.
    func finish() throws(MediaError) -> [EncodedFrame]
    /// Changes the average bit rate (bits per second) for the frames that follow.
    func setAverageBitRate(_ bitsPerSecond: Int) throws(MediaError)
    /// The most frames the encoder holds before it returns one (0: one in,
    /// one out), from the library where it says so, else from the settings.
    var maxFrameDelayCount: Int { get }
}

extension EncoderBackend {
    package var backendInUse: CodecBackend { .software }
}

/// How a compression session makes its encoders — the same shape as
/// ``DecoderFactory``; tests pass fakes.
package struct EncoderFactory: Sendable {
    /// The software encoder for the configuration's codec.
    package var software: @Sendable (_ configuration: EncoderConfiguration) throws(MediaError) -> any EncoderBackend
    /// A hardware encoder on `device`. Throws a ``MediaError`` whose message
    /// is the reason hardware cannot be used; the compression session shows
    /// it as its fallback reason under `.automatic` and rethrows it under
    /// `.hardware` and `.vaapi`. Nil when no hardware backend is built in.
    package var hardware:
        (
            @Sendable (_ configuration: EncoderConfiguration, _ device: BackendDevice) throws(MediaError) ->
                any EncoderBackend
        )?

    /// A factory with these makers; `software` defaults to the built-in one.
    package init(
        software: @escaping @Sendable (EncoderConfiguration) throws(MediaError) -> any EncoderBackend =
            EncoderFactory.builtIn.software,
        hardware: (@Sendable (EncoderConfiguration, BackendDevice) throws(MediaError) -> any EncoderBackend)?
    ) {
        self.software = software
        self.hardware = hardware
    }

    /// x264 for H.264 and x265 for HEVC in software; VA-API in hardware
    /// (NVDEC has no encoder: `.nvdec` devices are refused).
    package static let builtIn = EncoderFactory(
        software: { configuration throws(MediaError) in
            switch configuration.codec {
            case .h264: return try X264Encoder(configuration)
            case .hevc: return try X265Encoder(configuration)
            }
        },
        hardware: { configuration, device throws(MediaError) in
            switch device {
            case .vaapi(let path): return try VAAPIEncoder(configuration, devicePath: path)
            case .nvdec:
                throw .unsupported(
                    "nvdec: NVDEC only decodes and CodecSessions has no NVENC encoder; encode with .software, "
                        + ".vaapi or .automatic")
            }
        })
}
