import FormatConv

/// libFuzzer entry: the bytes are an avcC record (ISO/IEC 14496-15 5.3.3.1).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAVCC(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let description = try? FormatDescription(avcC: bytes) else { return 0 }
    // What was accepted must serialize to a record that is accepted again.
    guard (try? FormatDescription(avcC: description.record)) != nil else {
        fatalError("avcC: the serialized record of an accepted record does not parse")
    }
    _ = try? description.parameterSet(at: description.parameterSetCount)
    return 0
}
