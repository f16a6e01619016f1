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
