import MediaCore

/// An HTTP/1.x response as a WHIP client reads it: the status, the header
/// fields and the body, read from all the bytes the endpoint sent before it
/// closed the connection (the client asks for `Connection: close`).
public struct WHIPResponse: Sendable, Hashable {
    /// The status code (201 for an accepted offer).
    public var status: Int
    /// Header fields, names lowercased (`location` names the session).
    public var fields: [String: String]
    /// The body as text (the SDP answer for a 201).
    public var body: String

    /// Reads a response from `bytes`.
    ///
    /// - Throws: `.invalidData` when the head is not complete or the status
    ///   line has no numeric status.
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
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = String(line[line.index(after: colon)...].trimmingSpaces)
        }
        return WHIPResponse(
            status: status, fields: fields, body: String(decoding: bytes[(split + 4)...], as: UTF8.self))
    }
}
