import FormatConv

// Builders for small, hand-made bitstreams used across the FormatConv tests.

/// The SPS and PPS of the avcC seed example (CONFORMANCE.md 18): High
/// profile, level 1.0, no VUI timing.
let seedSPS: [UInt8] = [
    0x67, 0x64, 0x00, 0x0A, 0xAC, 0x72, 0x84, 0x44, 0x26, 0x84, 0x00, 0x00, 0x03, 0x00, 0x04, 0x00, 0x00,
    0x03, 0x00, 0xCA, 0x3C, 0x48, 0x96, 0x11, 0x80,
]
let seedPPS: [UInt8] = [0x68, 0xE8, 0x43, 0x8F, 0x13, 0x21, 0x30]

/// VPS, SPS and PPS written by x265 3.5 for a 64x64 Main-profile clip.
let x265VPS: [UInt8] = bytes("40010c01ffff01600000030090000003000003001e959409")
let x265SPS: [UInt8] = bytes("42010101600000030090000003000003001ea0208105965654a4c2f01010000003001000000301e080")
let x265PPS: [UInt8] = bytes("4401c073c089")

/// Bytes from a hex string.
func bytes(_ hex: String) -> [UInt8] {
    var output: [UInt8] = []
    var high: UInt8?
    for character in hex where character.isHexDigit {
        let value = UInt8(character.hexDigitValue!)
        if let h = high {
            output.append(h << 4 | value)
            high = nil
        } else {
            high = value
        }
    }
    return output
}

/// Hex text of `bytes`, for messages.
func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// Writes bits MSB first; `rbsp()` adds the stop bit and alignment.
struct StreamBitWriter {
    var bits: [Bool] = []
    mutating func u(_ value: Int, _ count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
    }
    mutating func ue(_ value: Int) {
        let code = value + 1
        let length = Int.bitWidth - code.leadingZeroBitCount
        u(0, length - 1)
        u(code, length)
    }
    /// The bits with `rbsp_trailing_bits` (a 1, then zeros to a byte boundary).
    func rbsp() -> [UInt8] {
        var all = bits + [true]
        while all.count % 8 != 0 { all.append(false) }
        return stride(from: 0, to: all.count, by: 8).map { start in
            all[start..<(start + 8)].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
    }
}

/// Reads bits of an RBSP for rewriting parameter sets.
private func bitArray(_ rbsp: [UInt8]) -> [Bool] {
    rbsp.flatMap { byte in (0..<8).map { byte >> (7 - $0) & 1 == 1 } }
}

/// Drops the stop bit and the alignment zeros at the end.
private func withoutTrailingBits(_ bits: [Bool]) -> [Bool] {
    var bits = bits
    while bits.last == false { bits.removeLast() }
    bits.removeLast()
    return bits
}

/// The length in bits of the exp-Golomb code starting at `position`.
private func ueLength(_ bits: [Bool], at position: Int) -> Int {
    var zeros = 0
    while !bits[position + zeros] { zeros += 1 }
    return 2 * zeros + 1
}

/// The seed SPS with `seq_parameter_set_id` = `id` and `level_idc` = `level`
/// (H.264 7.3.2.1.1: the id follows profile_idc, the constraint flags and level_idc).
func seedSPS(id: Int, level: UInt8 = 0x0A) -> [UInt8] {
    let bits = withoutTrailingBits(bitArray(RBSP.unescape(seedSPS.dropFirst())))
    var writer = StreamBitWriter()
    writer.bits = Array(bits[0..<24])
    writer.bits[16..<24] = ArraySlice(bitArray([level]))
    writer.ue(id)
    writer.bits += bits[(24 + ueLength(bits, at: 24))...]
    return [0x67] + RBSP.escape(writer.rbsp())
}

/// The seed PPS with `pic_parameter_set_id` = `id` naming SPS `spsId` (H.264 7.3.2.2).
func seedPPS(id: Int, spsId: Int) -> [UInt8] {
    let bits = withoutTrailingBits(bitArray(RBSP.unescape(seedPPS.dropFirst())))
    let skipped = ueLength(bits, at: 0) + ueLength(bits, at: ueLength(bits, at: 0))
    var writer = StreamBitWriter()
    writer.ue(id)
    writer.ue(spsId)
    writer.bits += bits[skipped...]
    return [0x68] + RBSP.escape(writer.rbsp())
}

/// An H.264 slice NAL unit: header, `first_mb_in_slice`, `slice_type`,
/// `pic_parameter_set_id`, then `payload` filler bytes without zeros.
func h264Slice(
    idr: Bool = false, refIdc: UInt8 = 2, firstMb: Int = 0, sliceType: Int = 7, ppsId: Int = 0, payload: Int = 6,
    seed: UInt8 = 1
) -> [UInt8] {
    var writer = StreamBitWriter()
    writer.ue(firstMb)
    writer.ue(sliceType)
    writer.ue(ppsId)
    for index in 0..<payload { writer.u(Int(seed &+ UInt8(truncatingIfNeeded: index * 37)) | 0x11, 8) }
    return [H264NALUnitHeader(nalRefIdc: idr ? 3 : refIdc, type: idr ? .idr : .slice).byte] + writer.rbsp()
}

/// An HEVC slice segment NAL unit: 2-byte header, `first_slice_segment_in_pic_flag`,
/// `no_output_of_prior_pics_flag` for IRAP types, `slice_pic_parameter_set_id`, filler.
func hevcSlice(
    type: HEVCNALUnitType, first: Bool = true, ppsId: Int = 0, layerId: Int = 0, temporalIdPlus1: Int = 1,
    payload: Int = 6
) -> [UInt8] {
    var writer = StreamBitWriter()
    writer.u(first ? 1 : 0, 1)
    if type.isIRAP { writer.u(0, 1) }
    writer.ue(ppsId)
    for index in 0..<payload { writer.u((index * 41) & 0xFF | 0x21, 8) }
    let header = HEVCNALUnitHeader(type: type, layerId: layerId, temporalIdPlus1: temporalIdPlus1)
    return [header.byte0, header.byte1] + writer.rbsp()
}

/// An HEVC non-VCL NAL unit of `type` with a short payload.
func hevcNAL(_ type: HEVCNALUnitType, payload: [UInt8] = [0x05, 0x80]) -> [UInt8] {
    let header = HEVCNALUnitHeader(type: type)
    return [header.byte0, header.byte1] + payload
}

/// NAL units joined into Annex-B with start codes of `startCodeLength` bytes.
func annexB(_ nalUnits: [[UInt8]], startCodeLength: Int = 4) -> [UInt8] {
    let code: [UInt8] = startCodeLength == 4 ? [0, 0, 0, 1] : [0, 0, 1]
    return nalUnits.flatMap { code + $0 }
}

/// NAL units joined with big-endian lengths of `lengthSize` bytes.
func lengthPrefixed(_ nalUnits: [[UInt8]], lengthSize: Int = 4) -> [UInt8] {
    nalUnits.flatMap { unit in
        (0..<lengthSize).map { UInt8(truncatingIfNeeded: unit.count >> (8 * (lengthSize - 1 - $0))) } + unit
    }
}

/// The NAL units of an Annex-B buffer, copied.
func scanned(_ stream: [UInt8]) -> [[UInt8]] {
    AnnexB.nalUnits(in: stream).map { Array(stream[$0.range]) }
}
