import FormatConv
import MediaCore

/// One picture a ``DecoderBackend`` returns. It may be valid only until the
/// backend's next ``DecoderBackend/receive()`` or ``DecoderBackend/flush()``
/// (libavcodec's decoder hands out the same object each time), so the session
/// takes what it keeps before asking for the next one.
package protocol DecoderPicture: AnyObject {
    /// The token the session gave the sample this picture was decoded from.
    var token: Int64 { get }
    var width: Int { get }
    var height: Int { get }
    /// Why the decoder flagged the picture as damaged, or nil.
    var damage: String? { get }
    /// HDR10 static metadata the stream attached to the picture.
    var hdr10: HDR10Metadata? { get }
    /// Its layout as a ``PixelFormat``, when it has one (then it can be adopted).
    var nativeFormat: PixelFormat? { get }
    /// The layout's name for messages (`yuv422p`).
    var formatName: String { get }
    /// The picture as a buffer of its own layout without copying, or nil.
    /// The buffer may take the picture's pixels over, leaving the picture
    /// blank: read everything else (``hdr10``, ``damage``) first.
    func adoptedBuffer() -> PixelBuffer?
    /// Lends the picture's planes, in their own layout `format`, to `body`
    /// (which converts them; it must not keep the pointers).
    func withPlanes(
        _ body: (_ planes: [(base: UnsafeRawPointer, stride: Int)], _ format: LibavPixelFormat) throws(MediaError)
            -> Void
    ) throws(MediaError)
    /// The HEVC decoded picture hash (H.265 D.3.19) of the whole decoded
    /// picture, before its crop, by `method`; nil when the backend cannot
    /// compute it (the pixels were taken already, or a layout it cannot read).
    func pictureHash(_ method: HEVCDecodedPictureHash.Method) -> HEVCDecodedPictureHash?
}

extension DecoderPicture {
    /// No hash: for pictures that do not hold decoded samples (test fakes).
    package func pictureHash(_ method: HEVCDecodedPictureHash.Method) -> HEVCDecodedPictureHash? { nil }
}

/// The decoder behind a decompression session — the mirror of
/// ``EncoderBackend`` (this file and `EncoderBackend.swift` are the two
/// backend contracts; ``DecoderFactory`` and ``EncoderFactory`` make them),
/// so that the session's recovery logic (drop to the next keyframe, rebuild
/// and replay, hardware fallback) can be driven by a fake decoder in tests.
///
/// Contract: ``send(_:token:isKeyframe:)`` takes one length-prefixed sample
/// and returns false when the decoder is full (the session then takes
/// pictures with ``receive()`` and sends the same sample again);
/// ``receive()`` returns the next picture or nil when none is ready;
/// ``sendEndOfStream()`` makes every held picture come out;
/// ``flush()`` discards everything in flight. A backend that runs on a device
/// says so in ``backendInUse``; ``softwareFallbackReason`` is set when it went
/// on in software by itself, ``hardwareRefused`` when it refused the stream
/// and software was not allowed.
///
/// **Errors** are ``MediaError``s, as on the encode side: code
/// `.invalidData` when the decoder blamed the input (the session drops to the
/// next keyframe), any other code when it failed itself (the session rebuilds
/// it and replays); the message is the library's own words.
package protocol DecoderBackend: AnyObject {
    /// The backend's short name, shown as the session's backend:
    /// `"libavcodec"`, `"vaapi"`, `"nvdec"` (see ``BackendNames``).
    var name: String { get }
    /// Where it decodes now.
    var backendInUse: CodecBackend { get }
    /// Why a hardware decoder went on in software by itself, or nil.
    var softwareFallbackReason: String? { get }
    /// Why a hardware decoder refused the stream when software was not allowed, or nil.
    var hardwareRefused: String? { get }
    /// `text` followed by what the hardware reported in the latest call.
    func withHardwareErrors(_ text: String) -> String
    /// Hands one sample to the decoder; false when it is full (take pictures, then send it again).
    func send(_ data: [UInt8], token: Int64, isKeyframe: Bool) throws(MediaError) -> Bool
    /// Makes every picture the decoder holds come out.
    func sendEndOfStream() throws(MediaError)
    /// The next picture, or nil when none is ready.
    func receive() throws(MediaError) -> (any DecoderPicture)?
    /// Discards everything in flight.
    func flush()
    /// Whether pictures that are not intra coded are skipped (no picture
    /// comes out of their samples).
    func setSkipsNonIntraPictures(_ skips: Bool)
}

extension DecoderBackend {
    /// Whether the backend decodes on a device right now.
    package var isOnHardware: Bool { backendInUse.isHardware }
}

/// The backend names, one vocabulary for sessions (`backend`), capability
/// lists (`CodecBackendInfo.name`) and the tool's output: a software backend
/// is named for its library, a hardware one for its device interface (the
/// names of the ``CodecBackend`` cases that choose it).
package enum BackendNames {
    /// x264, the software H.264 encoder.
    package static let x264 = "x264"
    /// x265, the software HEVC encoder.
    package static let x265 = "x265"
    /// libavcodec's software decoders.
    package static let libavcodec = "libavcodec"
    /// VA-API, encoding and decoding.
    package static let vaapi = "vaapi"
    /// NVIDIA NVDEC, decoding only.
    package static let nvdec = "nvdec"
}

/// A hardware device a backend can be opened on: the device part of a
/// ``CodecBackend`` choice.
package enum BackendDevice: Sendable, Hashable {
    /// A VA-API device: a DRM render node, or nil for the device rule's choice.
    case vaapi(path: String?)
    /// A CUDA device for NVDEC, by index (0 when nil).
    case nvdec(index: Int?)
}

/// How a decompression session makes its decoders — the same shape as
/// ``EncoderFactory``; tests pass fakes.
package struct DecoderFactory: Sendable {
    /// A software decoder for `description` with `threads` frame threads.
    package var software:
        @Sendable (_ description: FormatDescription, _ threads: Int) throws(MediaError) -> any DecoderBackend
    /// A decoder on `device`; `allowSoftwareFallback` lets the library go on in
    /// software when it cannot set the device up for the stream. Nil when no
    /// hardware backend is built in.
    package var hardware:
        (
            @Sendable (_ description: FormatDescription, _ device: BackendDevice, _ allowSoftwareFallback: Bool)
                throws(MediaError) -> any DecoderBackend
        )?

    /// A factory with these makers; `software` defaults to the built-in one.
    package init(
        software: @escaping @Sendable (FormatDescription, Int) throws(MediaError) -> any DecoderBackend =
            DecoderFactory.builtIn.software,
        hardware: (@Sendable (FormatDescription, BackendDevice, Bool) throws(MediaError) -> any DecoderBackend)?
    ) {
        self.software = software
        self.hardware = hardware
    }

    /// libavcodec, in software or through its VA-API and CUDA (NVDEC) hwaccels.
    package static let builtIn = DecoderFactory(
        software: { description, threads throws(MediaError) in
            try LibavcodecDecoder(
                codec: description.codec, record: description.record, threadCount: threads, hardware: nil)
        },
        hardware: { description, device, allowSoftwareFallback throws(MediaError) in
            let opened: HardwareDevice
            switch device {
            case .vaapi(let path): opened = try HardwareDevice.vaapi(path: path, kind: .decoderHardwareDevice)
            case .nvdec(let index): opened = try HardwareDevice.cuda(index: index, kind: .decoderHardwareDevice)
            }
            return try LibavcodecDecoder(
                codec: description.codec, record: description.record, threadCount: 1, hardware: opened,
                allowSoftwareFallback: allowSoftwareFallback)
        })
}

extension LibavcodecDecoder: DecoderBackend {
    package var backendInUse: CodecBackend {
        guard let hardware, softwareFallbackReason == nil else { return .software }
        return hardware.isCUDA ? .nvdec(device: Int(hardware.device) ?? 0) : .vaapi(device: hardware.device)
    }

    package func send(_ data: [UInt8], token: Int64, isKeyframe: Bool) throws(MediaError) -> Bool {
        do {
            return try sendPacket(data, token: token, isKeyframe: isKeyframe) != .tryAgain
        } catch {
            throw error.decoderError
        }
    }

    package func sendEndOfStream() throws(MediaError) {
        do {
            try sendEndOfStreamPacket()
        } catch {
            throw error.decoderError
        }
    }

    package func receive() throws(MediaError) -> (any DecoderPicture)? {
        do {
            let (status, picture) = try receiveFrame()
            return status == .done ? picture : nil
        } catch {
            throw error.decoderError
        }
    }
}

extension LibavFailure {
    /// The failure as a decoder backend reports it: `.invalidData` when
    /// libavcodec blamed the input, `.outOfMemory`, else `.backendFailure`;
    /// the message is ``description`` (the call, libavutil's text and the code).
    var decoderError: MediaError {
        let code: MediaError.Code = isInvalidData ? .invalidData : isOutOfMemory ? .outOfMemory : .backendFailure
        return MediaError(code, description, library: Libav.library, status: Int(self.code))
    }
}

extension DecodedPicture: DecoderPicture {
    package var formatName: String { libavFormat.description }

    package func withPlanes(
        _ body: (_ planes: [(base: UnsafeRawPointer, stride: Int)], _ format: LibavPixelFormat) throws(MediaError)
            -> Void
    ) throws(MediaError) {
        let planes = planePointers.prefix { $0.base != nil }.map {
            (base: UnsafeRawPointer($0.base!), stride: $0.stride)
        }
        try withExtendedLifetime(self) { () throws(MediaError) in
            try body(planes, libavFormat)
        }
    }
}
