import WebStreaming

/// An HTTP/1.x request with its body, as a WHEP endpoint reads it: the
/// request line and the header fields (read by WebStreaming's
/// `HTTPRequest`) and a `Content-Length` body of at most
/// ``maximumBodyBytes`` (no chunked bodies).
public struct WHEPRequest: Sendable, Hashable {
    /// The request method (`GET`, `POST`, `DELETE` …).
    public var method: String
    /// The request target's path.
    public var path: String
    /// Header fields, names lowercased.
    public var fields: [String: String]
    /// The body, `Content-Length` bytes long; empty when there is none.
    public var body: [UInt8]

    /// The most bytes of request line and header fields read before the request is refused.
    public static let maximumHeadBytes = HTTPRequest.maximumHeadBytes
    /// The longest body taken, in bytes.
    public static let maximumBodyBytes = 65536

    /// What reading the bytes received so far gave.
    public enum Outcome: Sendable, Hashable {
        case complete(WHEPRequest)
        case incomplete
        /// The status to answer and why.
        case invalid(status: Int, reason: String)
    }

    /// Reads a request from the start of `bytes`: the head as WebStreaming's
    /// `HTTPRequest` reads it (the same limits and checks), then the body.
    public static func parse(_ bytes: [UInt8]) -> Outcome {
        let head: HTTPRequest
        let bodyStart: Int
        switch HTTPRequest.parseHead(bytes[...]) {
        case .incomplete: return .incomplete
        case .invalid(let status, let reason): return .invalid(status: status, reason: reason)
        case .complete(let request, let consumed): (head, bodyStart) = (request, consumed)
        }
        var fields: [String: String] = [:]
        for field in head.fields { fields[field.name] = field.value }
        if fields["transfer-encoding"] != nil {
            return .invalid(status: 411, reason: "chunked bodies are not taken; send Content-Length")
        }
        let length = fields["content-length"].map { Int($0) ?? -1 } ?? 0
        guard (0...maximumBodyBytes).contains(length) else {
            return .invalid(status: 413, reason: "Content-Length must lie in 0...\(maximumBodyBytes)")
        }
        guard bytes.count >= bodyStart + length else { return .incomplete }
        return .complete(
            WHEPRequest(
                method: head.method, path: String(head.path), fields: fields,
                body: Array(bytes[bodyStart..<(bodyStart + length)])))
    }
}
