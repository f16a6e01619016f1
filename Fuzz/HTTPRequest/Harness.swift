import WebStreaming

/// libFuzzer entry: the input as the bytes a client sent before its request
/// head ended. A complete head takes no more bytes than given and at most
/// `maximumHeadBytes`, parses the same from exactly the bytes it took, keeps
/// at most `maximumFields` fields; an incomplete one is shorter than the
/// limit; the WebSocket handshake either answers 101 with a 28-character
/// accept key or refuses with a 4xx status.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch HTTPRequest.parse(bytes[...]) {
    case .incomplete:
        guard bytes.count < HTTPRequest.maximumHeadBytes else { fatalError("incomplete past the head limit") }
    case .invalid(let status, _):
        guard [400, 431, 505].contains(status) else { fatalError("unexpected status \(status)") }
    case .complete(let request, let consumed):
        guard consumed <= bytes.count, consumed <= HTTPRequest.maximumHeadBytes else { fatalError("took too much") }
        guard request.fields.count <= HTTPRequest.maximumFields else { fatalError("too many fields") }
        guard case .complete(let again, consumed) = HTTPRequest.parse(bytes[0..<consumed]), again == request else {
            fatalError("the head alone does not parse the same")
        }
        _ = request.path
        _ = request.query
        switch WebSocket.handshakeResponse(for: request) {
        case .success(let response):
            let text = String(decoding: response, as: UTF8.self)
            guard text.hasPrefix("HTTP/1.1 101 "), text.hasSuffix("\r\n\r\n") else { fatalError("bad 101") }
        case .failure(let refusal):
            guard (400..<500).contains(refusal.status) else { fatalError("refusal status \(refusal.status)") }
        }
    }
    return 0
}
