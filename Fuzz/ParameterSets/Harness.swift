import FormatConv

/// libFuzzer entry: the bytes are Annex-B NAL units; the first byte picks the
/// codec. Every NAL unit goes to the parameter-set parsers and the store, and
/// a complete store makes a description.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParameterSets(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let codec: CodecType = data[0] & 1 == 0 ? .h264 : .hevc
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var store = ParameterSetStore(codec: codec)
    var nalUnits: [[UInt8]] = []
    for location in AnnexB.nalUnits(in: bytes) {
        let nal = Array(bytes[location.range])
        nalUnits.append(nal)
        switch codec {
        case .h264:
            _ = try? H264SequenceParameterSet(nal: nal)
            _ = try? H264PictureParameterSetIDs(nal: nal)
        case .hevc:
            _ = try? HEVCVideoParameterSet(nal: nal)
            _ = try? HEVCSequenceParameterSet(nal: nal)
            _ = try? HEVCPictureParameterSet(nal: nal)
        }
        _ = try? store.update(nal: nal)
    }
    if store.isComplete { _ = try? store.makeDescription() }
    switch codec {
    case .h264: _ = try? FormatDescription(h264ParameterSets: nalUnits)
    case .hevc: _ = try? FormatDescription(hevcParameterSets: nalUnits)
    }
    return 0
}
