import FormatConv
import MediaCore
import NativeCodecs
import PixelTransfer

/// A failed decoder call, as the session's recovery logic sees it.
package struct DecoderFailure: Error, CustomStringConvertible, Sendable {
    /// What failed, with the library's own words.
    package var description: String
    /// Whether the decoder blamed the input (bad data: drop to the next
    /// keyframe) rather than itself (a malfunction: rebuild and replay).
    package var isInvalidData: Bool

    package init(_ description: String, isInvalidData: Bool) {
        self.description = description
        self.isInvalidData = isInvalidData
    }
}

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
    /// Converts the picture into `destination`.
    func convert(into destination: PixelBuffer, using transfer: PixelTransferSession) throws(MediaError)
    /// The HEVC decoded picture hash (H.265 D.3.19) of the whole decoded
    /// picture, before its crop, by `method`; nil when the backend cannot
    /// compute it (the pixels were taken already, or a layout it cannot read).
    func pictureHash(_ method: HEVCDecodedPictureHash.Method) -> HEVCDecodedPictureHash?
}

extension DecoderPicture {
    /// No hash: for pictures that do not hold decoded samples (test fakes).
    package func pictureHash(_ method: HEVCDecodedPictureHash.Method) -> HEVCDecodedPictureHash? { nil }
}

/// The decoder behind a ``DecompressionSession`` — the mirror of the encode
/// side's `EncoderBackend`, so that the session's recovery logic (drop to the
/// next keyframe, rebuild and replay, hardware fallback) can be driven by a
/// fake decoder in tests.
///
/// Contract: ``send(_:token:isKeyframe:)`` takes one length-prefixed sample
/// and returns false when the decoder is full (the session then takes
/// pictures with ``receive()`` and sends the same sample again);
/// ``receive()`` returns the next picture or nil when none is ready;
/// ``sendEndOfStream()`` makes every held picture come out;
/// ``flush()`` discards everything in flight. A backend that runs on a device
/// says so in ``isOnHardware``; ``softwareFallbackReason`` is set when it went
/// on in software by itself, ``hardwareRefused`` when it refused the stream
/// and software was not allowed.
package protocol DecoderBackend: AnyObject {
    /// "software", "vaapi", "cuda".
    var name: String { get }
    /// Where it decodes now.
    var backendInUse: CodecBackend { get }
    var softwareFallbackReason: String? { get }
    var hardwareRefused: String? { get }
    /// `text` followed by what the hardware reported in the latest call.
    func withHardwareErrors(_ text: String) -> String
    func send(_ data: [UInt8], token: Int64, isKeyframe: Bool) throws(DecoderFailure) -> Bool
    func sendEndOfStream() throws(DecoderFailure)
    func receive() throws(DecoderFailure) -> (any DecoderPicture)?
    func flush()
    /// Whether pictures that are not intra coded are skipped (no picture
    /// comes out of their samples).
    func setSkipsNonIntraPictures(_ skips: Bool)
}

extension DecoderBackend {
    /// Whether the backend decodes on a device right now.
    var isOnHardware: Bool { backendInUse.isHardware }
}

/// A hardware device a decoder can be opened on.
package enum DecoderDevice: Sendable, Hashable {
    case vaapi(path: String?)
    case cuda(index: String?)
}

/// How a session makes its decoders; tests pass fakes.
package struct DecoderFactory: Sendable {
    /// A software decoder for `description` with `threads` frame threads.
    package var software:
        @Sendable (_ description: FormatDescription, _ threads: Int) throws(MediaError) -> any DecoderBackend
    /// A decoder on `device`; `allowSoftwareFallback` lets the library go on in
    /// software when it cannot set the device up for the stream.
    package var hardware:
        @Sendable (_ description: FormatDescription, _ device: DecoderDevice, _ allowSoftwareFallback: Bool)
            throws(MediaError) -> any DecoderBackend

    package init(
        software: @escaping @Sendable (FormatDescription, Int) throws(MediaError) -> any DecoderBackend,
        hardware: @escaping @Sendable (FormatDescription, DecoderDevice, Bool) throws(MediaError) -> any DecoderBackend
    ) {
        self.software = software
        self.hardware = hardware
    }

    /// libavcodec, in software or through its VA-API and CUDA hwaccels.
    package static let libavcodec = DecoderFactory(
        software: { description, threads throws(MediaError) in
            try LibavcodecDecoder(
                codec: description.codec, record: description.record, threadCount: threads, hardware: nil)
        },
        hardware: { description, device, allowSoftwareFallback throws(MediaError) in
            let opened: HardwareDevice
            switch device {
            case .vaapi(let path): opened = try HardwareDevice.vaapi(path: path, kind: .decoderHardwareDevice)
            case .cuda(let index): opened = try HardwareDevice.cuda(index: index, kind: .decoderHardwareDevice)
            }
            return try LibavcodecDecoder(
                codec: description.codec, record: description.record, threadCount: 1, hardware: opened,
                allowSoftwareFallback: allowSoftwareFallback)
        })
}

extension LibavcodecDecoder: DecoderBackend {
    package var backendInUse: CodecBackend {
        guard let hardware, softwareFallbackReason == nil else { return .software }
        return hardware.name == "cuda" ? .nvdec(device: Int(hardware.device) ?? 0) : .vaapi(device: hardware.device)
    }

    package func send(_ data: [UInt8], token: Int64, isKeyframe: Bool) throws(DecoderFailure) -> Bool {
        do {
            return try sendPacket(data, token: token, isKeyframe: isKeyframe) != .tryAgain
        } catch {
            throw DecoderFailure(error)
        }
    }

    package func sendEndOfStream() throws(DecoderFailure) {
        do {
            try sendEndOfStreamPacket()
        } catch {
            throw DecoderFailure(error)
        }
    }

    package func receive() throws(DecoderFailure) -> (any DecoderPicture)? {
        do {
            let (status, picture) = try receiveFrame()
            return status == .done ? picture : nil
        } catch {
            throw DecoderFailure(error)
        }
    }
}

extension DecoderFailure {
    init(_ failure: LibavFailure) {
        self.init(failure.description, isInvalidData: failure.isInvalidData)
    }
}

extension DecodedPicture: DecoderPicture {
    package var formatName: String { libavFormat.description }

    package func convert(into destination: PixelBuffer, using transfer: PixelTransferSession) throws(MediaError) {
        let planes = planePointers.prefix { $0.base != nil }.map {
            (base: UnsafeRawPointer($0.base!), stride: $0.stride)
        }
        try withExtendedLifetime(self) { () throws(MediaError) in
            try transfer.transfer(
                planes: planes, libavFormat: libavFormat, width: width, height: height, into: destination)
        }
    }
}
