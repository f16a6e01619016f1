import WebRTC

/// libFuzzer entry: the input as the value of an `Authorization` field that
/// a WHEP or WHIP endpoint reads. A token it takes is a token68 that reads
/// the same from `Bearer TOKEN`, authorises a request carrying the input,
/// and matches itself and nothing one byte longer or shorter; and the
/// constant-time compare of the input's two halves agrees with `==`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAuthorization(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let value = String(decoding: bytes, as: UTF8.self)
    if let token = BearerToken.parse(authorization: value) {
        guard BearerToken.isValid(token) else { fatalError("took \(token), which is not a token68") }
        guard value.utf8.count >= token.count + 7 else { fatalError("a token longer than the field allows") }
        let canonical = "Bearer " + String(decoding: token, as: UTF8.self)
        guard BearerToken.parse(authorization: canonical) == token else { fatalError("\(canonical) reads otherwise") }
        guard BearerToken.authorizes(["authorization": value], token) else { fatalError("its own field refused") }
        guard BearerToken.matches(token, token), !BearerToken.matches(token + [0x41], token),
            !BearerToken.matches(Array(token.dropLast()), token)
        else { fatalError("the compare is wrong for \(token)") }
    } else if BearerToken.authorizes(["authorization": value], Array("x".utf8)) {
        fatalError("a field with no bearer token authorised a request")
    }
    let half = bytes.count / 2
    let (first, second) = (Array(bytes[..<half]), Array(bytes[half...]))
    guard BearerToken.matches(first, second) == (first == second) else { fatalError("matches disagrees with ==") }
    return 0
}
