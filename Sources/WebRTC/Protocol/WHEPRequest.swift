/// An HTTP/1.x request with its body, as a WHEP endpoint reads it: the
/// request line, the header fields and a `Content-Length` body of at most
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
    public static let maximumHeadBytes = 8192
    /// The longest body taken, in bytes.
    public static let maximumBodyBytes = 65536

    /// What reading the bytes received so far gave.
    public enum Outcome: Sendable, Hashable {
        case complete(WHEPRequest)
        case incomplete
        /// The status to answer and why.
        case invalid(status: Int, reason: String)
    }

    /// Reads a request from the start of `bytes`.
    public static func parse(_ bytes: [UInt8]) -> Outcome {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        if bytes.count >= 4 {
            for index in 0...(bytes.count - 4) where bytes[index..<(index + 4)].elementsEqual(terminator) {
                headEnd = index
                break
            }
        }
        guard let headEnd else {
            return bytes.count > maximumHeadBytes
                ? .invalid(status: 431, reason: "request head too large") : .incomplete
        }
        guard headEnd <= maximumHeadBytes else { return .invalid(status: 431, reason: "request head too large") }
        let head = String(decoding: bytes[0..<headEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            return .invalid(status: 400, reason: "malformed request line")
        }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), fields.count < 64 else {
                return .invalid(status: 400, reason: "malformed header line")
            }
            fields[line[..<colon].lowercased()] = String(line[line.index(after: colon)...].trimmingSpaces)
        }
        if fields["transfer-encoding"] != nil {
            return .invalid(status: 411, reason: "chunked bodies are not taken; send Content-Length")
        }
        let length = fields["content-length"].map { Int($0) ?? -1 } ?? 0
        guard (0...maximumBodyBytes).contains(length) else {
            return .invalid(status: 413, reason: "Content-Length must lie in 0...\(maximumBodyBytes)")
        }
        let bodyStart = headEnd + 4
        guard bytes.count >= bodyStart + length else { return .incomplete }
        let target = requestLine[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return .complete(
            WHEPRequest(
                method: String(requestLine[0]), path: String(target), fields: fields,
                body: Array(bytes[bodyStart..<(bodyStart + length)])))
    }
}
