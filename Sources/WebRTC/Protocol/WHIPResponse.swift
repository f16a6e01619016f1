import MediaCore

/// An HTTP/1.x response as a WHIP client reads it: the status, the header
/// fields and the body, read from all the bytes the endpoint sent before it
/// closed the connection (the client asks for `Connection: close`). With a
/// `Content-Length` the body is exactly that many bytes: fewer (the
/// connection closed early) is refused, bytes past it are not read.
public struct WHIPResponse: Sendable, Hashable {
    /// The most bytes of a response the client reads (1 MiB).
    public static let maximumBytes = 1 << 20
    /// The status code (201 for an accepted offer).
    public var status: Int
    /// Header fields, names lowercased (`location` names the session).
    public var fields: [String: String]
    /// The body as text (the SDP answer for a 201).
    public var body: String
    /// The values of every `Link` field, in order (``fields`` keeps only the last of a name).
    public var linkFields: [String] = []

    /// Reads a response from `bytes`.
    ///
    /// - Throws: `.invalidData` when the head is not complete, the status
    ///   line has no numeric status, `Content-Length` is malformed or given
    ///   twice with different values, or the body is shorter than it says.
    public static func parse(_ bytes: [UInt8]) throws(MediaError) -> WHIPResponse {
        let terminator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4,
            let split = (0...(bytes.count - 4)).first(where: { bytes[$0..<($0 + 4)].elementsEqual(terminator) })
        else { throw MediaError(.invalidData, "WHIP endpoint sent no complete HTTP response") }
        let head = String(decoding: bytes[0..<split], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]),
            (100...999).contains(status)
        else { throw MediaError(.invalidData, "WHIP endpoint sent a malformed status line") }
        var fields: [String: String] = [:]
        var contentLengths: Set<String> = []
        var links: [String] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...].trimmingSpaces)
            if name == "content-length" { contentLengths.insert(value) }
            if name == "link" { links.append(value) }
            fields[name] = value
        }
        var body = bytes[(split + 4)...]
        if let text = contentLengths.first {
            guard contentLengths.count == 1, !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }),
                let length = Int(text)
            else {
                throw MediaError(
                    .invalidData, "the WHIP endpoint sent a malformed or conflicting Content-Length")
            }
            guard body.count >= length else {
                throw MediaError(
                    .invalidData,
                    "the WHIP endpoint closed the connection after \(body.count) of the \(length) body bytes "
                        + "it announced (a truncated response)")
            }
            body = body.prefix(length)
        }
        return WHIPResponse(
            status: status, fields: fields, body: String(decoding: body, as: UTF8.self), linkFields: links)
    }
}
