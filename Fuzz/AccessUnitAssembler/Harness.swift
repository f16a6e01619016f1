import FormatConv

/// An assembler output in comparable form.
private enum Output: Equatable {
    case sample(data: [UInt8], pts: MediaTime, dts: MediaTime, flags: [Bool], record: [UInt8])
    case dropped(reason: String, count: Int)
}

private func summary(_ outputs: [AssemblerOutput]) -> [Output] {
    outputs.map { output in
        switch output {
        case .sample(let s):
            .sample(
                data: s.data, pts: s.pts, dts: s.dts, flags: [s.isKeyframe, s.dependsOnOthers],
                record: s.formatDescription.record)
        case .dropped(let reason, let count): .dropped(reason: reason, count: count)
        }
    }
}

/// libFuzzer entry: the first byte picks the codec and the chunk size, the
/// rest is an Annex-B stream. Chunked input must give the same outputs as a
/// single append.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAccessUnitAssembler(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let codec: CodecType = data[0] & 1 == 0 ? .h264 : .hevc
    let chunk = Int(data[0] >> 1) * 3 + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var whole = AccessUnitAssembler(codec: codec)
    let expected = summary(whole.append(bytes) + whole.finish())
    var chunked = AccessUnitAssembler(codec: codec, nalUnitHeaderLength: 4)
    var outputs: [AssemblerOutput] = []
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + chunk)
        outputs += chunked.append(bytes[offset..<end])
        offset = end
    }
    outputs += chunked.finish()
    if summary(outputs) != expected { fatalError("chunk size \(chunk) changed the assembler's output") }
    for case .sample(let sample) in outputs {
        guard (try? LengthPrefixed.nalUnitRanges(in: sample.data, lengthSize: 4, codec: codec)) != nil else {
            fatalError("the assembler wrote a malformed sample")
        }
    }
    return 0
}
