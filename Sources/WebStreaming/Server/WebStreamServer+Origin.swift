#if canImport(Glibc)
    import Glibc
#endif

// Origin and Host: which `Host` a request may name (against DNS rebinding) and
// which web pages may open the stream (the `Origin` of a WebSocket upgrade).
extension WebStreamServer {
    /// `text` as an origin the server compares: `http://` or `https://`, a
    /// host (a name, an IPv4 address or an IPv6 address in brackets) and an
    /// optional port, lowercased, without a trailing `/`; nil for anything
    /// else (a path, a query, user information, another scheme, `null`).
    public static func normalizedOrigin(_ text: String) -> String? {
        var origin = text.lowercased()
        if origin.hasSuffix("/") { origin.removeLast() }
        guard let parts = originParts(origin), !parts.host.isEmpty else { return nil }
        return origin
    }

    /// Why a request's `Host` is not served, or nil when it is: an IP
    /// address, `localhost`, or the host of an allowed origin. A request
    /// without `Host` (HTTP/1.0) is served. A web page whose name was made to
    /// point at this server (DNS rebinding) names its own host and is refused.
    func hostRefusal(_ request: HTTPRequest) -> String? {
        guard let value = request.field("host") else { return nil }
        guard let host = hostPart(value.lowercased()) else { return "Host '\(value)' is not HOST[:PORT]" }
        if isAddressLiteral(host) || host == "localhost" { return nil }
        let allowedHosts = configuration.allowedOrigins.compactMap { Self.normalizedOrigin($0) }
            .compactMap { Self.originParts($0)?.host }
        if allowedHosts.contains(host) { return nil }
        return "Host '\(value)' is not served here (an IP address, localhost or the host of an --allow-origin)"
    }

    /// Why a WebSocket upgrade's `Origin` may not open the stream, or nil
    /// when it may: no `Origin` (not a web page), the page's own origin
    /// (`http://` or `https://` and the request's `Host`), a loopback origin
    /// (`127.0.0.0/8`, `[::1]`, `localhost`, any port) or one of
    /// ``Configuration/allowedOrigins``.
    func originRefusal(_ request: HTTPRequest) -> String? {
        guard let value = request.field("origin") else { return nil }
        let refusal = "Origin '\(value)' may not open the stream (allow it with --allow-origin)"
        guard let origin = Self.normalizedOrigin(value), let parts = Self.originParts(origin) else { return refusal }
        if let host = request.field("host")?.lowercased(), parts.authority == host { return nil }
        if isLoopback(parts.host) { return nil }
        if configuration.allowedOrigins.compactMap({ Self.normalizedOrigin($0) }).contains(origin) { return nil }
        return refusal
    }

    /// The authority (`host[:port]`) and host of a lowercased origin without a trailing `/`.
    private static func originParts(_ origin: String) -> (authority: String, host: String)? {
        let authority: Substring
        if origin.hasPrefix("http://") {
            authority = origin.dropFirst(7)
        } else if origin.hasPrefix("https://") {
            authority = origin.dropFirst(8)
        } else {
            return nil
        }
        guard !authority.contains(where: { "/?#@ \t\\".contains($0) }), let host = hostPart(String(authority))
        else { return nil }
        return (String(authority), host)
    }
}

/// The host of `host[:port]` or `[v6]:port` (brackets kept off); nil when
/// the port is not digits or the brackets do not close.
private func hostPart(_ authority: String) -> String? {
    if authority.hasPrefix("[") {
        guard let close = authority.firstIndex(of: "]") else { return nil }
        let rest = authority[authority.index(after: close)...]
        guard rest.isEmpty || (rest.first == ":" && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else { return nil }
        return String(authority[authority.index(after: authority.startIndex)..<close])
    }
    let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 2, !parts[0].isEmpty else { return nil }
    if parts.count == 2 { guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCIIDigit) else { return nil } }
    return String(parts[0])
}

/// Whether `host` is an IPv4 address or an IPv6 address (without brackets).
private func isAddressLiteral(_ host: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
}

/// Whether `host` is `localhost`, an address in 127.0.0.0/8 or `::1`.
private func isLoopback(_ host: String) -> Bool {
    if host == "localhost" { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
    var v6 = in6_addr()
    var loopback = in6_addr()
    _ = inet_pton(AF_INET6, "::1", &loopback)
    guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
    return withUnsafeBytes(of: &v6) { a in withUnsafeBytes(of: &loopback) { b in a.elementsEqual(b) } }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
