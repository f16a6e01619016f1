import FormatConv

/// libFuzzer entry: the bytes are an hvcC record (ISO/IEC 14496-15 8.3.3.1).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHVCC(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let description = try? FormatDescription(hvcC: bytes) else { return 0 }
    guard (try? FormatDescription(hvcC: description.record)) != nil else {
        fatalError("hvcC: the serialized record of an accepted record does not parse")
    }
    return 0
}
