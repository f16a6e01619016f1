import FormatConv
import MediaCore
import RTPPayload

/// libFuzzer entry: the input as SDP text. Whatever parses must write text
/// that parses again to a description that writes the same text (writing
/// is a fixpoint after one round), and base64 must round-trip the raw
/// input bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSDP(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard (try? Base64.decode(Base64.encode(bytes))) == bytes else { fatalError("base64 did not round-trip") }
    let text = String(decoding: bytes, as: UTF8.self)
    _ = try? Base64.decode(text)
    guard let parsed = try? RTPSessionDescription(parsing: text) else { return 0 }
    let written = parsed.text
    guard let again = try? RTPSessionDescription(parsing: written) else {
        fatalError("our own SDP does not parse:\n\(written)")
    }
    guard again.text == written || (try? RTPSessionDescription(parsing: again.text))?.text == again.text else {
        fatalError("writing SDP is not a fixpoint:\n\(written)\n---\n\(again.text)")
    }
    if parsed.codec != again.codec || parsed.port != again.port || parsed.payloadType != again.payloadType {
        fatalError("the SDP round trip changed the codec, port or payload type")
    }
    return 0
}
