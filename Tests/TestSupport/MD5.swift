import MediaCore

/// The MD5 of a picture's packed planes, as hex (what `framemd5` prints).
public func md5Hex(_ buffer: PixelBuffer) -> String {
    MD5.hex(buffer.packedBytes())
}

extension MD5 {
    /// The digest of `message` (the library's RFC 1321 MD5) as 32 lowercase
    /// hexadecimal digits, for comparing decoded pictures with
    /// `ffmpeg -f framemd5`.
    package static func hex(_ message: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(digest(message).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
