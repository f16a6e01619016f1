import FormatConv
import MediaCore
import NativeCodecs

// Checking decoded pictures against HEVC's decoded picture hash SEI
// (``DecompressionSession/verifiesPictureHashes``).
extension DecompressionSession {
    /// The decoded picture hash in `sample` when pictures are verified and
    /// the stream is HEVC; nil otherwise.
    func expectedPictureHash(in sample: CompressedSample) -> HEVCDecodedPictureHash? {
        guard verifiesPictureHashes, sample.formatDescription.codec == .hevc else { return nil }
        return HEVCDecodedPictureHash.find(
            inSample: sample.data, lengthSize: sample.formatDescription.nalUnitHeaderLength)
    }

    /// Compares `picture` (the whole decoded picture, before its crop) with
    /// `expected` and counts the result; nil when pictures are not verified
    /// or there is nothing to compare with. Call it before the picture's
    /// pixels are adopted or converted.
    func checkPictureHash(of picture: any DecoderPicture, against expected: HEVCDecodedPictureHash?, pts: MediaTime)
        -> PictureHashCheck?
    {
        guard verifiesPictureHashes else { return nil }
        guard let expected, let computed = picture.pictureHash(expected.method),
            computed.components.count == expected.components.count
        else {
            pictureHashStatistics.unchecked += 1
            return nil
        }
        let mismatched = expected.components.indices.filter { expected.components[$0] != computed.components[$0] }
        let check = PictureHashCheck(
            method: PictureHashCheck.Method(expected.method), mismatchedComponents: mismatched,
            expected: expected.components.map(Self.hex), computed: computed.components.map(Self.hex))
        if check.matches {
            pictureHashStatistics.matched += 1
        } else {
            pictureHashStatistics.mismatched += 1
            pictureHashMismatches.append(pts)
        }
        return check
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}

extension PictureHashCheck.Method {
    init(_ method: HEVCDecodedPictureHash.Method) {
        switch method {
        case .md5: self = .md5
        case .crc: self = .crc
        case .checksum: self = .checksum
        }
    }
}
