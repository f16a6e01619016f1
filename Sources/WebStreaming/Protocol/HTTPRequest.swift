/// An HTTP/1.x request head (RFC 9112 3 and 5): the request line and the
/// header fields. Bodies are not read: the server answers GET and HEAD only.
///
/// ```swift
/// switch HTTPRequest.parse(bytes[...]) {
/// case .complete(let request, let consumed): print(request.path, consumed)   // consumed: bytes of the head
/// case .incomplete: break                                                    // read more
/// case .invalid(let status, let reason): print(status, reason)               // answer `status`, close
/// }
/// ```
///
/// The parser takes bytes and nothing else; it never reads past
/// ``maximumHeadBytes`` and never keeps more than ``maximumFields`` fields.
public struct HTTPRequest: Sendable, Hashable {
    /// The method token as sent ("GET").
    public var method: String
    /// The request target in origin form ("/stats?x=1").
    public var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// The header fields in order, names lowercased, values without the
    /// surrounding whitespace.
    public var fields: [(name: String, value: String)]

    /// The most bytes a request head may take, the blank line included.
    public static let maximumHeadBytes = 8192
    /// The most header fields a request may carry.
    public static let maximumFields = 64

    /// The target's path: the part before '?'.
    public var path: Substring { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] }

    /// The query's `name=value` pairs, not percent-decoded.
    public var query: [(name: Substring, value: Substring)] {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return [] }
        return parts[1].split(separator: "&").map { pair in
            let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (nameValue[0], nameValue.count == 2 ? nameValue[1] : "")
        }
    }

    /// The value of the first field called `name` (case-insensitive).
    public func field(_ name: String) -> String? {
        let lowered = name.lowercased()
        return fields.first { $0.name == lowered }?.value
    }

    /// Whether the comma-separated field `name` lists `token` (case-insensitive),
    /// as `Connection: keep-alive, Upgrade` lists "upgrade".
    public func field(_ name: String, contains token: String) -> Bool {
        let wanted = token.lowercased()
        return fields.contains { field in
            field.name == name.lowercased()
                && field.value.split(separator: ",").contains { trimmed($0[...]).lowercased() == wanted }
        }
    }

    /// What ``parse(_:)`` found.
    public enum Outcome: Sendable, Hashable {
        /// A whole head: the request and how many bytes it took.
        case complete(HTTPRequest, consumed: Int)
        /// No blank line yet, and fewer than ``maximumHeadBytes`` bytes.
        case incomplete
        /// Not a request this server takes: the status to answer (400, 431,
        /// 501, 505) and why.
        case invalid(status: Int, reason: String)
    }

    /// Reads a request head from the start of `bytes`. A head announcing a
    /// body is refused with 400, as `parseHead(_:)` refuses a doubtful
    /// `Content-Length`.
    public static func parse(_ bytes: ArraySlice<UInt8>) -> Outcome {
        let outcome = parseHead(bytes)
        guard case .complete(let request, _) = outcome else { return outcome }
        if request.field("transfer-encoding") != nil || (request.field("content-length").map { $0 != "0" } ?? false) {
            return .invalid(status: 400, reason: "requests with a body are not served")
        }
        return outcome
    }

    /// Reads a request head from the start of `bytes` as ``parse(_:)`` does,
    /// but leaves a body announced by `Content-Length` or
    /// `Transfer-Encoding` to the caller: the body, if any, starts
    /// `consumed` bytes in. WebRTC's WHEP and WHIP endpoint reads its
    /// requests' heads with it. A head with more than one `Content-Length`
    /// field, or one that is not a run of digits, is refused with 400 (RFC
    /// 9112 6.3: the message's length is then in doubt).
    package static func parseHead(_ bytes: ArraySlice<UInt8>) -> Outcome {
        // The head ends at the first CRLF CRLF.
        var end: Int?
        var index = bytes.startIndex
        let limit = min(bytes.endIndex, bytes.startIndex + maximumHeadBytes)
        while index + 3 < limit {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                end = index
                break
            }
            index += 1
        }
        guard let end else {
            return bytes.count >= maximumHeadBytes
                ? .invalid(status: 431, reason: "the request head is longer than \(maximumHeadBytes) bytes")
                : .incomplete
        }
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = bytes.startIndex
        var i = bytes.startIndex
        while i < end {
            if bytes[i] == 13 {
                guard bytes[i + 1] == 10 else { return .invalid(status: 400, reason: "a bare CR in the head") }
                lines.append(bytes[lineStart..<i])
                i += 2
                lineStart = i
            } else if bytes[i] == 10 {
                return .invalid(status: 400, reason: "a bare LF in the head")
            } else {
                i += 1
            }
        }
        lines.append(bytes[lineStart..<end])

        // request-line = method SP request-target SP HTTP-version
        let parts = lines[0].split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return .invalid(status: 400, reason: "the request line is not 'METHOD TARGET VERSION'")
        }
        guard !parts[0].isEmpty, parts[0].allSatisfy(isTokenCharacter) else {
            return .invalid(status: 400, reason: "the method is not a token")
        }
        guard parts[1].first == UInt8(ascii: "/"), parts[1].allSatisfy({ $0 > 32 && $0 < 127 }) else {
            return .invalid(status: 400, reason: "the target is not a path starting with '/'")
        }
        let version = Array(parts[2])
        guard version.count == 8, version[0..<7] == Array("HTTP/1.".utf8)[...] else {
            return .invalid(status: 505, reason: "only HTTP/1.0 and HTTP/1.1 are served")
        }
        guard version[7] == UInt8(ascii: "0") || version[7] == UInt8(ascii: "1") else {
            return .invalid(status: 505, reason: "only HTTP/1.0 and HTTP/1.1 are served")
        }
        var fields: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let first = line.first, first != 32, first != 9 else {
                return .invalid(status: 400, reason: "folded or empty header line")
            }
            guard fields.count < maximumFields else {
                return .invalid(status: 431, reason: "more than \(maximumFields) header fields")
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                return .invalid(status: 400, reason: "a header line without ':'")
            }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else {
                return .invalid(status: 400, reason: "a header name is not a token")
            }
            let value = trimmed(line[(colon + 1)...])
            guard value.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
                return .invalid(status: 400, reason: "a control character in a header value")
            }
            fields.append((String(decoding: name, as: UTF8.self).lowercased(), String(decoding: value, as: UTF8.self)))
        }
        let lengths = fields.filter { $0.name == "content-length" }.map(\.value)
        if lengths.count > 1 { return .invalid(status: 400, reason: "more than one Content-Length field") }
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        if let length = lengths.first, length.isEmpty || !length.utf8.allSatisfy({ digits.contains($0) }) {
            return .invalid(status: 400, reason: "Content-Length \(length.debugDescription) is not a number")
        }
        let request = HTTPRequest(
            method: String(decoding: parts[0], as: UTF8.self), target: String(decoding: parts[1], as: UTF8.self),
            minorVersion: Int(version[7] - UInt8(ascii: "0")), fields: fields)
        return .complete(request, consumed: end + 4 - bytes.startIndex)
    }

    /// Whether both have the same method, target, version and header fields in the same order.
    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.minorVersion == rhs.minorVersion
            && lhs.fields.map(\.name) == rhs.fields.map(\.name) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }

    /// Hashes the same parts that equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(target)
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}

/// tchar (RFC 9110 5.6.2).
private func isTokenCharacter(_ c: UInt8) -> Bool {
    switch c {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        true
    default: Array("!#$%&'*+-.^_`|~".utf8).contains(c)
    }
}

/// Without leading and trailing spaces and tabs.
private func trimmed<C: BidirectionalCollection>(_ bytes: C) -> C.SubSequence where C.Element == UInt8 {
    var slice = bytes[...]
    while let first = slice.first, first == 32 || first == 9 { slice = slice.dropFirst() }
    while let last = slice.last, last == 32 || last == 9 { slice = slice.dropLast() }
    return slice
}

private func trimmed(_ text: Substring) -> Substring {
    var slice = text
    while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
    while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
    return slice
}
