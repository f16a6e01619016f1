import Foundation

/// The first box of type `type` in an ISO BMFF file's bytes, found by a flat
/// search for its four-character code preceded by a plausible 32-bit size
/// (ISO/IEC 14496-12 4.2), at any nesting depth: the offset of its payload
/// and the payload.
public func isoBoxPayload(_ type: String, in bytes: [UInt8]) -> (offset: Int, payload: [UInt8])? {
    let tag = Array(type.utf8)
    guard tag.count == 4 else { return nil }
    var index = 4
    while index + 4 <= bytes.count {
        if bytes[index..<(index + 4)].elementsEqual(tag) {
            let size = bytes[(index - 4)..<index].reduce(0) { $0 << 8 | Int($1) }
            if size >= 8 && index - 4 + size <= bytes.count {
                return (index + 4, Array(bytes[(index + 4)..<(index - 4 + size)]))
            }
        }
        index += 1
    }
    return nil
}

/// The payload of the first box of type `type` in the file at `path`
/// (``isoBoxPayload(_:in:)``).
public func isoBoxPayload(_ type: String, inFile path: String) throws -> [UInt8]? {
    isoBoxPayload(type, in: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))?.payload
}

/// `bytes` (an MP4 whose `moov` follows its `mdat`, so no chunk offset
/// moves) with `boxes` appended to the first sample entry of type
/// `entry` (moov/trak/mdia/minf/stbl/stsd/entry); every box on that
/// path grows by their size. Nil when the path is not found.
public func isoAppendingToSampleEntry(_ entry: String, _ boxes: [UInt8], in bytes: [UInt8]) -> [UInt8]? {
    func size(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
    func type(_ offset: Int) -> String { String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self) }
    var grown: [Int] = []
    var start = 0
    var end = bytes.count
    var sawMediaData = false
    for name in ["moov", "trak", "mdia", "minf", "stbl", "stsd", entry] {
        var offset = start
        while offset + 8 <= end, type(offset) != name {
            if type(offset) == "mdat" { sawMediaData = true }
            guard size(offset) >= 8 else { return nil }
            offset += size(offset)
        }
        guard offset + 8 <= end else { return nil }
        if name == "moov" && !sawMediaData { return nil }
        grown.append(offset)
        // stsd: version, flags and entry_count precede the entries.
        start = offset + (name == "stsd" ? 16 : 8)
        end = offset + size(offset)
    }
    var result = bytes
    result.insert(contentsOf: boxes, at: end)
    for offset in grown {
        let newSize = size(offset) + boxes.count
        for index in 0..<4 { result[offset + index] = UInt8(truncatingIfNeeded: newSize >> (24 - 8 * index)) }
    }
    return result
}

/// `mdcv` and `clli` boxes (ISO/IEC 23001-8 order: G, B, R and white point
/// chromaticities in 0.00002, max and min luminance in 0.0001 cd/m²; then
/// MaxCLL, MaxFALL) for a DCI-P3 D65 display of 4000 / 0.005 cd/m² with
/// MaxCLL 1000 and MaxFALL 400.
public let isoP3HDR10Boxes: [UInt8] = {
    func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) } + Array(type.utf8) + payload
    }
    func u16(_ values: [Int]) -> [UInt8] { values.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }
    return box("mdcv", u16([13250, 34500, 7500, 3000, 34000, 16000, 15635, 16450]) + u16([610, 23040, 0, 50]))
        + box("clli", u16([1000, 400]))
}()
