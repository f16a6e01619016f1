import MediaCore

/// HEVC's decoded picture hash SEI message (payload type 132; syntax
/// H.265 D.2.20, semantics D.3.19): an MD5, CRC or checksum of each colour
/// component of a decoded picture, which encoders such as x265 (`--hash 1|2|3`)
/// and the reference encoder put in a suffix SEI NAL unit of the picture's
/// access unit, so that a decoder can prove it reconstructed the picture the
/// encoder did.
///
/// The hash covers the whole decoded sample arrays, `pic_width_in_luma_samples`
/// × `pic_height_in_luma_samples` (and the chroma arrays of that picture):
/// the conformance window does not apply. Samples of a component whose bit
/// depth is 8 are one byte each; deeper ones two bytes, low byte first
/// (D.3.19's `pictureData`).
package struct HEVCDecodedPictureHash: Sendable, Hashable, CustomStringConvertible {
    /// `hash_type`.
    package enum Method: UInt8, Sendable, Hashable, CaseIterable {
        /// 16 bytes per component (RFC 1321 over `pictureData`).
        case md5 = 0
        /// `picture_crc`, 16 bits: CRC-16 with the polynomial 0x1021 over
        /// `pictureData`, the register starting at 0xFFFF, followed by 16 zero bits.
        case crc = 1
        /// `picture_checksum`, 32 bits: the sum of each byte of `pictureData`
        /// exclusive-or'd with a mask made from the sample's x and y.
        case checksum = 2

        /// Bytes per component in the message.
        var size: Int { [16, 2, 4][Int(rawValue)] }

        package var name: String { ["MD5", "CRC", "checksum"][Int(rawValue)] }
    }

    /// The SEI `payloadType` of the message.
    package static let payloadType = 132

    package var method: Method
    /// Each component's value (Y, Cb, Cr; one for monochrome), as its bytes
    /// appear in the message (CRC and checksum big-endian).
    package var components: [[UInt8]]

    package init(method: Method, components: [[UInt8]]) {
        self.method = method
        self.components = components
    }

    /// Reads the message's payload (emulation prevention removed): `hash_type`
    /// then one value per component. Nil when the hash type is reserved or
    /// the payload holds neither one nor three values.
    package init?(payload: some Collection<UInt8>) {
        let bytes = Array(payload)
        guard let first = bytes.first, let method = Method(rawValue: first) else { return nil }
        let count = (bytes.count - 1) / method.size
        // The payload may carry reserved bytes after the values; 3 values
        // when there is room for them, otherwise one (chroma_format_idc 0).
        let components = count >= 3 ? 3 : count == 1 ? 1 : 0
        guard components > 0 else { return nil }
        self.method = method
        self.components = (0..<components).map { index in
            Array(bytes[1 + index * method.size..<1 + (index + 1) * method.size])
        }
    }

    /// The decoded picture hash in a length-prefixed HEVC sample: the first
    /// one in a suffix SEI NAL unit (type 40) of the base layer, where
    /// H.265 D.3.19 puts it. Nil when there is none or the sample does not parse.
    package static func find(inSample data: [UInt8], lengthSize: Int) -> HEVCDecodedPictureHash? {
        guard let units = try? LengthPrefixed.nalUnits(in: data, lengthSize: lengthSize, codec: .hevc) else {
            return nil
        }
        for unit in units where unit.count > 2 {
            let header = HEVCNALUnitHeader(unit[unit.startIndex], unit[unit.startIndex + 1])
            guard header.type == .suffixSEI, header.layerId == 0 else { continue }
            var found: HEVCDecodedPictureHash?
            // visitMessages drops one header byte; the HEVC header has two.
            H264SEI.visitMessages(in: unit.dropFirst()) { type, payload in
                guard type == payloadType else { return true }
                found = HEVCDecodedPictureHash(payload: payload)
                return false
            }
            if let found { return found }
        }
        return nil
    }

    /// The hash of a decoded picture, by `method`, over `arrays` (one per
    /// component, in the message's order).
    package static func compute(_ method: Method, over arrays: [PictureSampleArray]) -> HEVCDecodedPictureHash {
        HEVCDecodedPictureHash(method: method, components: arrays.map { $0.hash(method) })
    }

    package var description: String {
        "\(method.name) " + components.map { $0.map { hexDigits($0) }.joined() }.joined(separator: " ")
    }

    private func hexDigits(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}

/// One colour component of a decoded picture in memory, as the picture hash
/// reads it: `height` rows of `width` samples, rows `stride` bytes apart,
/// samples `step` bytes apart within a row (the size of a sample in a planar
/// layout; twice that for the chroma of NV12 and P010, whose Cb and Cr
/// alternate), each stored in `storageBytes` bytes (1, or 2 little-endian)
/// with its value shifted left by `shift` bits (6 in P010).
///
/// Ownership: the memory belongs to the caller and must stay valid while
/// the value is used.
package struct PictureSampleArray {
    package var base: UnsafeRawPointer
    package var stride: Int
    package var width: Int
    package var height: Int
    /// The component's bit depth (BitDepthY or BitDepthC).
    package var bitDepth: Int
    package var step: Int
    package var storageBytes: Int
    package var shift: Int

    package init(
        base: UnsafeRawPointer, stride: Int, width: Int, height: Int, bitDepth: Int, step: Int, storageBytes: Int,
        shift: Int
    ) {
        self.base = base
        self.stride = stride
        self.width = width
        self.height = height
        self.bitDepth = bitDepth
        self.step = step
        self.storageBytes = storageBytes
        self.shift = shift
    }

    /// Bytes of `pictureData` per sample (D.3.19).
    private var hashBytes: Int { bitDepth > 8 ? 2 : 1 }

    /// Calls `body` with each row's `pictureData` bytes (D.3.19): the
    /// memory itself when it is laid out that way, otherwise a copy of the
    /// row made of the samples' values.
    private func visitRows(_ body: (_ y: Int, _ bytes: UnsafeRawBufferPointer) -> Void) {
        let direct = step == storageBytes && storageBytes == hashBytes && shift == 0
        var row = [UInt8](repeating: 0, count: direct ? 0 : width * hashBytes)
        for y in 0..<height {
            let source = base + y * stride
            if direct {
                body(y, UnsafeRawBufferPointer(start: source, count: width * hashBytes))
                continue
            }
            row.withUnsafeMutableBytes { output in
                for x in 0..<width {
                    let stored =
                        storageBytes == 2
                        ? Int(UInt16(littleEndian: source.loadUnaligned(fromByteOffset: x * step, as: UInt16.self)))
                        : Int(source.load(fromByteOffset: x * step, as: UInt8.self))
                    let value = stored >> shift
                    output[x * hashBytes] = UInt8(truncatingIfNeeded: value)
                    if hashBytes == 2 { output[x * 2 + 1] = UInt8(truncatingIfNeeded: value >> 8) }
                }
                body(y, UnsafeRawBufferPointer(output))
            }
        }
    }

    func hash(_ method: HEVCDecodedPictureHash.Method) -> [UInt8] {
        switch method {
        case .md5:
            var md5 = MD5()
            visitRows { _, bytes in md5.update(bytes) }
            return md5.finalize()
        case .crc:
            var crc: UInt16 = 0xFFFF
            let table = crc16Table
            func feed(_ byte: UInt8) { crc = (crc << 8 | UInt16(byte)) ^ table[Int(crc >> 8)] }
            visitRows { _, bytes in for byte in bytes { feed(byte) } }
            feed(0)
            feed(0)
            return [UInt8(crc >> 8), UInt8(crc & 0xFF)]
        case .checksum:
            var sum: UInt32 = 0
            let perSample = hashBytes
            visitRows { y, bytes in
                for x in 0..<width {
                    let mask = UInt8(truncatingIfNeeded: (x & 0xFF) ^ (y & 0xFF) ^ (x >> 8) ^ (y >> 8))
                    for byte in 0..<perSample { sum &+= UInt32(bytes[x * perSample + byte] ^ mask) }
                }
            }
            return [UInt8(sum >> 24), UInt8((sum >> 16) & 0xFF), UInt8((sum >> 8) & 0xFF), UInt8(sum & 0xFF)]
        }
    }
}

/// The register change for each value of its top byte shifted out: CRC-16
/// with the polynomial x¹⁶ + x¹² + x⁵ + 1 (0x1021), most significant bit
/// first. D.3.19 feeds the message bit by bit into a register that starts at
/// 0xFFFF and then 16 zero bits; a byte at a time, the register becomes
/// `(register << 8 | byte) ^ table[register >> 8]`.
private let crc16Table: [UInt16] = (0..<256).map { top in
    var value = UInt16(top) << 8
    for _ in 0..<8 { value = value & 0x8000 != 0 ? value << 1 ^ 0x1021 : value << 1 }
    return value
}
