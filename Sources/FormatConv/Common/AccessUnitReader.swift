// The Annex-B stream reader that tells the codec from the first bytes.

import MediaCore

/// Annex-B bytes in chunks of any size → access units, through an
/// ``AccessUnitAssembler``.
///
/// When the codec is not known beforehand it is told from the first NAL
/// unit headers (``AnnexB/detectCodec(in:)``) once ``detectionWindow`` bytes
/// have arrived, so that the guess rests on more than one header; bytes
/// wait until then. A stream with no start code in its first
/// ``detectionLimit`` bytes is an error; a shorter one is read as H.264 at
/// its end, which the assembler then reports as dropped NAL units.
public struct AccessUnitReader: Sendable {
    /// How many bytes the codec is told from, when it is not known (256).
    public static let detectionWindow = 256
    /// How many bytes without a start code make the stream an error (1 MiB).
    public static let detectionLimit = 1 << 20

    /// The stream's codec: given, or told from the first bytes; nil until then.
    public private(set) var codec: CodecType?
    private let frameDuration: MediaTime?
    private var assembler: AccessUnitAssembler?
    private var pending: [UInt8] = []

    /// `frameDuration` numbers the access units (the assembler's default
    /// is the stream's VUI timing, else 1/30 s).
    public init(codec: CodecType?, frameDuration: MediaTime? = nil) {
        self.codec = codec
        self.frameDuration = frameDuration
        if let codec { assembler = AccessUnitAssembler(codec: codec, frameDuration: frameDuration) }
    }

    /// The access units (and dropped NAL units) that `bytes` completes.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(MediaError) -> [AssemblerOutput] {
        if assembler != nil { return assembler!.append(bytes) }
        pending += bytes
        if pending.count >= Self.detectionWindow, let detected = AnnexB.detectCodec(in: pending) {
            return start(detected)
        }
        if pending.count > Self.detectionLimit {
            throw .invalidData("no Annex-B start code in the first \(pending.count) bytes")
        }
        return []
    }

    /// Ends the current access unit at the bytes given so far (a boundary
    /// known from outside the stream).
    public mutating func endAccessUnit() -> [AssemblerOutput] {
        assembler?.endAccessUnit() ?? []
    }

    /// Hands out the last access unit at the end of the stream.
    public mutating func finish() -> [AssemblerOutput] {
        var outputs: [AssemblerOutput] = []
        if assembler == nil {
            if pending.isEmpty { return [] }
            outputs = start(AnnexB.detectCodec(in: pending) ?? .h264)
        }
        return outputs + assembler!.finish()
    }

    private mutating func start(_ detected: CodecType) -> [AssemblerOutput] {
        codec = detected
        assembler = AccessUnitAssembler(codec: detected, frameDuration: frameDuration)
        defer { pending = [] }
        return assembler!.append(pending)
    }
}
