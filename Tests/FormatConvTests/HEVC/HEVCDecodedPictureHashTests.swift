import FormatConv
import MediaCore
import TestSupport
import Testing

/// The decoded picture hash SEI (H.265 D.2.20 / D.3.19): reading it from a
/// sample, and the three methods over sample arrays in the layouts a
/// decoder hands out. The real proof, x265's hashes matching decoded
/// pictures, is in DecodeSessionTests' PictureHashTests.
@Suite struct HEVCDecodedPictureHashTests {
    /// A suffix SEI NAL unit (type 40, TemporalId 0) holding `payload` as a
    /// message of type 132, with emulation prevention applied.
    static func suffixSEI(_ payload: [UInt8], layerId: Int = 0) -> [UInt8] {
        let header = HEVCNALUnitHeader(type: .suffixSEI, layerId: layerId)
        let rbsp: [UInt8] = [132, UInt8(payload.count)] + payload + [0x80]
        return [header.byte0, header.byte1] + RBSP.escape(rbsp)
    }

    static func lengthPrefixed(_ units: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for unit in units {
            for shift in [24, 16, 8, 0] { bytes.append(UInt8(truncatingIfNeeded: unit.count >> shift)) }
            bytes += unit
        }
        return bytes
    }

    static let slice: [UInt8] = [0x02, 0x01, 0xD0, 0x11, 0x22]

    /// MD5 values with zero runs, so that emulation-prevention bytes are
    /// inserted and must be removed.
    @Test func readsMD5FromTheSuffixSEIOfASample() throws {
        let md5s: [[UInt8]] = [
            [0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
            Array(repeating: 0, count: 16),
            (0..<16).map { UInt8(255 - $0) },
        ]
        let sample = Self.lengthPrefixed([Self.slice, Self.suffixSEI([0] + md5s.joined())])
        let hash = try #require(HEVCDecodedPictureHash.find(inSample: sample, lengthSize: 4))
        #expect(hash.method == .md5)
        #expect(hash.components == md5s)
    }

    @Test func readsCRCAndChecksumForOneOrThreeComponents() throws {
        let crc = try #require(HEVCDecodedPictureHash(payload: [1, 0x12, 0x34, 0, 0, 0xAB, 0xCD]))
        #expect(crc.method == .crc && crc.components == [[0x12, 0x34], [0, 0], [0xAB, 0xCD]])
        let mono = try #require(HEVCDecodedPictureHash(payload: [2, 1, 2, 3, 4]))
        #expect(mono.method == .checksum && mono.components == [[1, 2, 3, 4]])
        #expect(HEVCDecodedPictureHash(payload: [3, 1, 2]) == nil)  // reserved hash_type
        #expect(HEVCDecodedPictureHash(payload: [0, 1, 2, 3]) == nil)  // no whole MD5
    }

    /// A prefix SEI, or a suffix SEI of another layer, is not the picture's hash.
    @Test func ignoresPrefixSEIAndOtherLayers() {
        let payload = [UInt8(0)] + Array(repeating: 7, count: 48)
        var prefix = Self.suffixSEI(payload)
        let header = HEVCNALUnitHeader(type: .prefixSEI)
        prefix[0] = header.byte0
        prefix[1] = header.byte1
        let layer1 = Self.suffixSEI(payload, layerId: 1)
        #expect(
            HEVCDecodedPictureHash.find(inSample: Self.lengthPrefixed([prefix, Self.slice, layer1]), lengthSize: 4)
                == nil)
    }

    // MARK: - The methods, against D.3.19 followed literally

    /// D.3.19's pictureData for one component: each sample as one byte, or
    /// two (low byte first) above 8 bits.
    static func pictureData(_ samples: [[Int]], bitDepth: Int) -> [UInt8] {
        samples.flatMap { row in
            row.flatMap { bitDepth > 8 ? [UInt8($0 & 0xFF), UInt8($0 >> 8)] : [UInt8($0)] }
        }
    }

    /// D.3.19's CRC, bit by bit.
    static func literalCRC(_ data: [UInt8]) -> [UInt8] {
        var crc = 0xFFFF
        let bits = data.flatMap { byte in (0..<8).map { Int(byte >> (7 - $0)) & 1 } } + Array(repeating: 0, count: 16)
        for bit in bits {
            let msb = (crc >> 15) & 1
            crc = (((crc << 1) + bit) & 0xFFFF) ^ (msb * 0x1021)
        }
        return [UInt8(crc >> 8), UInt8(crc & 0xFF)]
    }

    /// D.3.19's checksum.
    static func literalChecksum(_ samples: [[Int]], bitDepth: Int) -> [UInt8] {
        var sum: UInt32 = 0
        for (y, row) in samples.enumerated() {
            for (x, sample) in row.enumerated() {
                let mask = UInt32((x & 0xFF) ^ (y & 0xFF) ^ (x >> 8) ^ (y >> 8))
                sum &+= UInt32(sample & 0xFF) ^ mask
                if bitDepth > 8 { sum &+= UInt32(sample >> 8) ^ mask }
            }
        }
        return [UInt8(sum >> 24), UInt8(sum >> 16 & 0xFF), UInt8(sum >> 8 & 0xFF), UInt8(sum & 0xFF)]
    }

    /// A 300 × 3 component (x above 255 exercises the checksum's mask).
    static func samples(bitDepth: Int) -> [[Int]] {
        (0..<3).map { y in (0..<300).map { x in (x * 7 + y * 131 + x * x) % (1 << bitDepth) } }
    }

    /// The samples stored as a decoder might: planar (1 or 2 bytes, padded
    /// rows), or interleaved with another component and shifted left (P010's chroma).
    static func stored(_ samples: [[Int]], storageBytes: Int, step: Int, shift: Int) -> (bytes: [UInt8], stride: Int) {
        let stride = samples[0].count * step + 13
        var bytes = [UInt8](repeating: 0xEE, count: stride * samples.count)
        for (y, row) in samples.enumerated() {
            for (x, sample) in row.enumerated() {
                let value = sample << shift
                bytes[y * stride + x * step] = UInt8(value & 0xFF)
                if storageBytes == 2 { bytes[y * stride + x * step + 1] = UInt8(value >> 8) }
            }
        }
        return (bytes, stride)
    }

    struct Layout: Sendable, CustomStringConvertible {
        var bitDepth: Int
        var storageBytes: Int
        var step: Int
        var shift: Int
        var description: String { "\(bitDepth)-bit, \(storageBytes) byte(s) per sample, step \(step), shift \(shift)" }
    }

    static let layouts = [
        Layout(bitDepth: 8, storageBytes: 1, step: 1, shift: 0),  // I420
        Layout(bitDepth: 8, storageBytes: 1, step: 2, shift: 0),  // NV12 chroma
        Layout(bitDepth: 10, storageBytes: 2, step: 2, shift: 0),  // I010
        Layout(bitDepth: 10, storageBytes: 2, step: 4, shift: 6),  // P010 chroma
        Layout(bitDepth: 12, storageBytes: 2, step: 2, shift: 0),  // I012
    ]

    @Test(arguments: layouts)
    func eachMethodFollowsTheSpecification(_ layout: Layout) {
        let samples = Self.samples(bitDepth: layout.bitDepth)
        let (bytes, stride) = Self.stored(
            samples, storageBytes: layout.storageBytes, step: layout.step, shift: layout.shift)
        let data = Self.pictureData(samples, bitDepth: layout.bitDepth)
        bytes.withUnsafeBytes { raw in
            let array = PictureSampleArray(
                base: raw.baseAddress!, stride: stride, width: 300, height: 3, bitDepth: layout.bitDepth,
                step: layout.step, storageBytes: layout.storageBytes, shift: layout.shift)
            let md5 = HEVCDecodedPictureHash.compute(.md5, over: [array])
            #expect(md5.components == [MD5.digest(data)])
            let crc = HEVCDecodedPictureHash.compute(.crc, over: [array])
            #expect(crc.components == [Self.literalCRC(data)])
            let checksum = HEVCDecodedPictureHash.compute(.checksum, over: [array])
            #expect(checksum.components == [Self.literalChecksum(samples, bitDepth: layout.bitDepth)])
        }
    }
}
