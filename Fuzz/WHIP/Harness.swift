import MediaCore
import WebRTC

/// libFuzzer entry: the input as the bytes a WHIP endpoint sends back to
/// our client. The response is read, and a body is read as the answer the
/// client takes its ICE credentials, fingerprint, DTLS role and candidates
/// from; whatever it holds, nothing traps, and a status read is a
/// three-digit number.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWHIP(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let response = try? WHIPResponse.parse(Array(UnsafeBufferPointer(start: data, count: size))) else {
        return 0
    }
    guard (100...999).contains(response.status) else { fatalError("status \(response.status)") }
    guard let answer = try? SessionOffer(parsing: response.body) else { return 0 }
    for section in answer.sections {
        _ = answer.usernameFragment(section)
        _ = answer.password(section)
        _ = answer.fingerprint(section)
        _ = answer.setup(section)
        _ = section.candidates.map { ($0.host, $0.port) }
    }
    return 0
}
