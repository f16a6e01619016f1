import FormatConv

/// libFuzzer entry: the first byte picks the codec and the length size, the
/// rest is an Annex-B stream.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAnnexBToLengthPrefixed(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let codec: CodecType = data[0] & 1 == 0 ? .h264 : .hevc
    let lengthSize = [1, 2, 4, 4][Int(data[0] >> 1 & 3)]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let scanned = AnnexB.nalUnits(in: bytes).map { Array(bytes[$0.range]) }
    checkStartCodes(bytes)
    checkInPlace(bytes, scanned: scanned)
    guard let unit = try? AnnexB.lengthPrefixed(from: bytes, codec: codec, lengthSize: lengthSize) else { return 0 }
    guard let read = try? LengthPrefixed.nalUnits(in: unit.data, lengthSize: lengthSize, codec: codec) else {
        fatalError("Annex-B → length-prefixed wrote lengths that do not read back")
    }
    let kept = scanned.filter { nal in
        let type = codec == .h264 ? nal[0] & 0x1F : nal[0] >> 1 & 0x3F
        let layer = codec == .h264 ? 0 : (Int(nal[0] & 1) << 5 | Int(nal[1] >> 3))
        switch codec {
        case .h264: return ![7, 8, 9, 13].contains(type)
        case .hevc: return type != 35 && !((32...34).contains(type) && layer == 0)
        }
    }
    guard read.map(Array.init) == kept, unit.nalUnitCount == kept.count else {
        fatalError("Annex-B → length-prefixed lost or changed NAL units")
    }
    guard let back = try? AnnexBWriter.annexB(fromLengthPrefixed: unit.data, lengthSize: lengthSize) else {
        fatalError("length-prefixed → Annex-B rejected its own input")
    }
    // NAL units ending in 0x00 cannot be carried by Annex-B (H.264 7.4.1);
    // all others come back unchanged.
    if kept.allSatisfy({ $0.last != 0 }) {
        guard AnnexB.nalUnits(in: back).map({ Array(back[$0.range]) }) == kept else {
            fatalError("Annex-B → length-prefixed → Annex-B is not the identity")
        }
    }
    return 0
}

/// The vector start-code search against a byte-by-byte one: every start code,
/// found one after the other, and the search from a spread of offsets.
func checkStartCodes(_ bytes: [UInt8]) {
    var expected: [Int] = []
    var index = 0
    while index + 3 <= bytes.count {
        if bytes[index] == 0 && bytes[index + 1] == 0 && bytes[index + 2] == 1 { expected.append(index) }
        index += 1
    }
    bytes.withUnsafeBytes { buffer in
        var found: [Int] = []
        var next = AnnexB.findStartCode(in: buffer, from: 0)
        while next < buffer.count {
            found.append(next)
            next = AnnexB.findStartCode(in: buffer, from: next + 1)
        }
        guard found == expected else { fatalError("start codes \(found) where a byte-by-byte search finds \(expected)") }
        for start in stride(from: 0, to: buffer.count, by: 61) {
            let first = expected.first { $0 >= start } ?? buffer.count
            guard AnnexB.findStartCode(in: buffer, from: start) == first else {
                fatalError("search from \(start) missed the start code at \(first)")
            }
        }
    }
}

/// Annex-B → length-prefixed in place either refuses (bytes unchanged) or
/// gives the scanned NAL units behind 4-byte lengths, and the reverse in-place
/// rewrite gives the input back.
func checkInPlace(_ bytes: [UInt8], scanned: [[UInt8]]) {
    var rewritten = bytes
    guard let count = AnnexB.convertToLengthPrefixedInPlace(&rewritten) else {
        guard rewritten == bytes else { fatalError("a refused in-place rewrite changed the bytes") }
        return
    }
    guard count == scanned.count,
        let units = try? LengthPrefixed.nalUnits(in: rewritten, lengthSize: 4), units.map(Array.init) == scanned
    else {
        fatalError("Annex-B → length-prefixed in place lost or changed NAL units")
    }
    guard (try? LengthPrefixed.convertToAnnexBInPlace(&rewritten)) == count, rewritten == bytes else {
        fatalError("the in-place rewrites are not each other's inverse")
    }
}
