import FormatConv

/// libFuzzer entry: the first byte picks the length sizes, the writer policy
/// and the codec, the rest is a length-prefixed sample.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLengthPrefixedToAnnexB(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let sizes = [1, 2, 3, 4]
    let source = sizes[Int(data[0] & 3)]
    let target = [1, 2, 4, 4][Int(data[0] >> 2 & 3)]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if let converted = try? LengthPrefixed.convert(bytes, from: source, to: target) {
        let original = (try? LengthPrefixed.nalUnits(in: bytes, lengthSize: source == 3 ? 4 : source)) ?? []
        guard let read = try? LengthPrefixed.nalUnits(in: converted, lengthSize: target) else {
            fatalError("converted lengths do not read back")
        }
        if source != 3 && read.map(Array.init) != original.map(Array.init) {
            fatalError("length-size conversion changed the NAL units")
        }
    }
    guard source != 3 else { return 0 }
    let codec: CodecType = data[0] & 0x10 == 0 ? .h264 : .hevc
    let sets: [[UInt8]] =
        codec == .h264
        ? [
            [
                0x67, 0x64, 0x00, 0x0A, 0xAC, 0x72, 0x84, 0x44, 0x26, 0x84, 0x00, 0x00, 0x03, 0x00, 0x04, 0x00,
                0x00, 0x03, 0x00, 0xCA, 0x3C, 0x48, 0x96, 0x11, 0x80,
            ],
            [0x68, 0xE8, 0x43, 0x8F, 0x13, 0x21, 0x30],
        ]
        : [
            [
                0x40, 0x01, 0x0C, 0x01, 0xFF, 0xFF, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00,
                0x00, 0x03, 0x00, 0x1E, 0x95, 0x94, 0x09,
            ],
            [
                0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00,
                0x1E, 0xA0, 0x20, 0x81, 0x05, 0x96, 0x56, 0x54, 0xA4, 0xC2, 0xF0, 0x10, 0x10, 0x00, 0x00, 0x03, 0x00,
                0x10, 0x00, 0x00, 0x03, 0x01, 0xE0, 0x80,
            ],
            [0x44, 0x01, 0xC0, 0x73, 0xC0, 0x89],
        ]
    let description: FormatDescription
    do {
        description =
            codec == .h264
            ? try FormatDescription(h264ParameterSets: sets, nalUnitHeaderLength: source)
            : try FormatDescription(hevcParameterSets: sets, nalUnitHeaderLength: source)
    } catch {
        fatalError("the fixed parameter sets no longer make a description: \(error)")
    }
    let policy: ParameterSetPolicy = [.never, .first, .beforeEveryKeyframe, .beforeEveryKeyframe][Int(data[0] >> 5 & 3)]
    var writer = AnnexBWriter(policy: policy, insertAccessUnitDelimiters: data[0] & 0x80 != 0)
    let sample = CompressedSample(
        data: bytes, formatDescription: description, pts: .zero, dts: .zero, duration: .invalid,
        isKeyframe: data[0] & 0x40 != 0)
    var gatherer = AnnexBWriter(policy: policy, insertAccessUnitDelimiters: data[0] & 0x80 != 0)
    guard let units = try? LengthPrefixed.nalUnits(in: bytes, lengthSize: source, codec: codec) else {
        if (try? writer.write(sample)) != nil { fatalError("the writer accepted a malformed sample") }
        if (try? gatherer.gather(sample)) != nil { fatalError("the gather list accepted a malformed sample") }
        return 0
    }
    guard let stream = try? writer.write(sample) else { fatalError("the writer rejected a well-formed sample") }
    // The gather list holds the same bytes, in at most three ranges for
    // contiguous 4-byte lengths, and never an empty range.
    guard let list = try? gatherer.gather(sample), list.joined() == stream, list.byteCount == stream.count else {
        fatalError("the gather list differs from the writer's output")
    }
    if !list.withBuffers({ $0.count == list.bufferCount && $0.allSatisfy { $0.count > 0 } }) {
        fatalError("the gather list's ranges do not match its count")
    }
    // 4-byte lengths rewritten in place are the writer's output without insertions.
    if source == 4 && units.count > 0 {
        var inPlace = bytes
        if (try? LengthPrefixed.convertToAnnexBInPlace(&inPlace)) != nil {
            var plain = AnnexBWriter(policy: .never)
            guard inPlace == (try? plain.write(sample)) else { fatalError("the in-place rewrite differs") }
        }
    }
    let payload = units.reduce(0) { $0 + $1.count }
    if stream.count < payload + 4 * units.count {
        fatalError("the writer's output is shorter than the sample's NAL units with start codes")
    }
    // NAL units that a conforming encoder could have written (no `00 00 00`,
    // `00 00 01` or `00 00 02` inside, H.264 7.4.1; not ending in 0x00) come
    // back out of the Annex-B stream unchanged and in order.
    guard units.allSatisfy(isConforming) else { return 0 }
    let written = AnnexB.nalUnitLocations(in: stream)
    if !written.allSatisfy({ $0.startCodeLength == 4 }) {
        fatalError("the writer wrote a start code that is not 4 bytes long")
    }
    let scanned = written.map { Array(stream[$0.range]) }
    let own = units.map(Array.init)
    var position = 0
    for nal in scanned where position < own.count && nal == own[position] { position += 1 }
    if position != own.count { fatalError("the writer lost or changed NAL units of the sample") }
    return 0
}

/// Whether `nal` could appear in a conforming stream as far as the byte
/// stream is concerned.
private func isConforming(_ nal: ArraySlice<UInt8>) -> Bool {
    guard nal.last != 0 else { return false }
    var zeros = 0
    for byte in nal {
        if zeros >= 2 && byte <= 2 { return false }
        zeros = byte == 0 ? zeros + 1 : 0
    }
    return true
}
