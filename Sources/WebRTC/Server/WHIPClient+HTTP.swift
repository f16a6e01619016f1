import MediaCore
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

// HTTP: the endpoint's URL, one request on a fresh connection, redirects
// (307/308) and the bearer token.

/// An `http://HOST:PORT/PATH` URL as the WHIP client takes it: a numeric
/// IPv4 host or an IPv6 one in brackets (`http://[::1]:8080/whip`), an explicit port.
struct WHIPEndpointURL: Sendable, Hashable, CustomStringConvertible {
    /// The numeric host, without brackets.
    var host: String
    var port: Int
    var path: String

    /// `HOST:PORT`, an IPv6 host in brackets (the `Host` field, the origin).
    var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    /// `http://HOST:PORT`, what the token is bound to (RFC 6454 origin).
    var origin: String { "http://\(authority)" }
    var description: String { origin + path }

    init(parsing url: String) throws(MediaError) {
        guard url.hasPrefix("http://") else {
            throw .invalidArgument(
                url.hasPrefix("https://")
                    ? "WHIP URL \(url): https is not supported (put a TLS reverse proxy in front of the endpoint)"
                    : "WHIP URL \(url): expected http://HOST:PORT/PATH")
        }
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let hostText: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest[..<slash].firstIndex(of: "]"), rest[close...].dropFirst().hasPrefix(":") else {
                throw .invalidArgument("WHIP URL \(url): expected http://[IPV6]:PORT/PATH")
            }
            hostText = rest[rest.index(after: rest.startIndex)..<close]
            portText = rest[rest.index(close, offsetBy: 2)..<slash]
        } else {
            let authority = rest[..<slash].split(separator: ":", omittingEmptySubsequences: false)
            guard authority.count == 2 else { throw .invalidArgument("WHIP URL \(url): expected HOST:PORT") }
            (hostText, portText) = (authority[0], authority[1])
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw .invalidArgument("WHIP URL \(url): expected HOST:PORT")
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        let numeric =
            hostText.contains(":")
            ? inet_pton(AF_INET6, String(hostText), &v6) == 1 : inet_pton(AF_INET, String(hostText), &v4) == 1
        guard numeric else {
            throw .invalidArgument(
                "WHIP host \(hostText): expected a numeric IPv4 address or an IPv6 address in brackets")
        }
        host = String(hostText)
        self.port = port
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
    }

    /// `reference` (a `Location` field) resolved against this URL (RFC 3986
    /// 5.2): an absolute `http://` URL, a network-path (`//HOST:PORT/…`), an
    /// absolute path or a path relative to this one's directory.
    func resolving(_ reference: String) throws(MediaError) -> WHIPEndpointURL {
        if reference.contains("://") { return try WHIPEndpointURL(parsing: reference) }
        if reference.hasPrefix("//") { return try WHIPEndpointURL(parsing: "http:" + reference) }
        guard !reference.isEmpty, !reference.contains(where: { $0 == " " || $0.isNewline }) else {
            throw .invalidData("the endpoint sent a malformed Location: \(reference.prefix(200))")
        }
        var resolved = self
        if reference.hasPrefix("/") {
            resolved.path = reference
        } else {
            let directory = path[...(path.lastIndex(of: "/") ?? path.startIndex)]
            resolved.path = String(directory) + reference
        }
        return resolved
    }
}

extension WHIPClient {
    /// Whether `token` is a bearer token as RFC 6750 2.1 spells one
    /// (`b64token`: letters, digits, `-._~+/`, then `=` padding).
    public static func isValidBearerToken(_ token: String) -> Bool {
        let body = token.utf8.prefix { $0 != UInt8(ascii: "=") }
        guard !body.isEmpty, token.utf8.dropFirst(body.count).allSatisfy({ $0 == UInt8(ascii: "=") }) else {
            return false
        }
        return body.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default: "-._~+/".utf8.contains(byte)
            }
        }
    }

    /// `request` at `url`, following 307 and 308 (same method and body) up
    /// to ``maximumRedirects`` times; the token goes only to the origin it
    /// was given for. Returns the final response and the URL that gave it.
    func request(
        method: String, url: WHIPEndpointURL, body: String? = nil, contentType: String = "application/sdp",
        fields: [String] = []
    ) throws(MediaError) -> (
        response: WHIPResponse, url: WHIPEndpointURL
    ) {
        var current = url
        var hops = 0
        while true {
            let token = current.origin == endpoint.origin ? bearerToken : nil
            let response = try exchange(
                method: method, url: current, body: body, token: token, contentType: contentType, fields: fields)
            guard response.status == 307 || response.status == 308 else { return (response, current) }
            guard hops < maximumRedirects else {
                throw MediaError(
                    .unavailable, "the WHIP endpoint redirected \(method) more than \(maximumRedirects) times")
            }
            guard let location = response.fields["location"] else {
                throw MediaError(.invalidData, "the WHIP endpoint answered \(response.status) without a Location")
            }
            current = try current.resolving(location)
            hops += 1
        }
    }

    /// One HTTP/1.1 request on a fresh connection, and the whole response.
    func exchange(
        method: String, url: WHIPEndpointURL, body: String?, token: String?, contentType: String = "application/sdp",
        fields: [String] = [], timeoutSeconds: Int = 10
    ) throws(MediaError) -> WHIPResponse {
        let connection: TCPConnection
        do {
            connection = try TCPConnection.connect(host: url.host, port: url.port, timeout: .seconds(timeoutSeconds))
        } catch {
            throw MediaError(error.code == .timedOut ? .timedOut : .connectionFailed, "WHIP endpoint \(error.message)")
        }
        let fd = connection.descriptor
        defer { connection.close() }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head = "\(method) \(url.path) HTTP/1.1\r\nHost: \(url.authority)\r\nConnection: close\r\n"
        // The token is checked at construction (RFC 6750 syntax: no CR, LF
        // or space), so it cannot end the field; it is never logged.
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        let payload = Array((body ?? "").utf8)
        if body != nil { head += "Content-Type: \(contentType)\r\n" }
        for field in fields { head += field + "\r\n" }
        head += "Content-Length: \(payload.count)\r\n\r\n"
        let bytes = Array(head.utf8) + payload
        var written = 0
        while written < bytes.count {
            guard case .transferred(let sent) = sendAvailable(bytes[written...], on: fd) else {
                throw MediaError(.system, "WHIP request: \(String(cString: strerror(errno)))")
            }
            written += sent
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count: Int
            switch receiveAvailable(on: fd, into: &buffer) {
            case .transferred(let read): count = read
            case .closed: count = 0
            case .wouldBlock, .failed:
                let reason =
                    errno == EAGAIN || errno == EWOULDBLOCK
                    ? "no complete response within \(timeoutSeconds) s"
                    : String(cString: strerror(errno))
                throw MediaError(.timedOut, "WHIP endpoint \(url.authority) (\(method)): \(reason)")
            }
            if count == 0 { break }
            response += buffer[0..<count]
            guard response.count <= WHIPResponse.maximumBytes else {
                throw MediaError(
                    .invalidData, "the WHIP endpoint's response is over \(WHIPResponse.maximumBytes) bytes")
            }
        }
        return try WHIPResponse.parse(response)
    }

    /// The error for a 401 from `url`: the token was refused, or one is
    /// needed (none given, or `url` is of another origin than the token's).
    func unauthorized(_ method: String, at url: WHIPEndpointURL) -> MediaError {
        let message =
            if bearerToken == nil {
                "the endpoint requires a token (401) for \(method)"
            } else if url.origin == endpoint.origin {
                "the endpoint refused the token (401) for \(method)"
            } else {
                "\(url.origin) requires a token (401) for \(method); the token is sent only to \(endpoint.origin)"
            }
        return MediaError(.unavailable, message, status: 401)
    }
}
