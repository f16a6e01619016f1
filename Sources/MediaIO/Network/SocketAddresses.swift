import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// Resolves `host` (a name or a numeric IPv4/IPv6 address) and `port` for
/// sockets of `socketType` (`SOCK_STREAM`, `SOCK_DGRAM`), any family, and
/// calls `body` with the first entry of the `getaddrinfo` list (its
/// `ai_next` chain holds the rest); the list is freed when `body` returns.
///
/// - Throws: `MediaError` with `code` and "cannot resolve HOST: …" when the
///   name does not resolve; whatever `body` throws.
package func withResolvedAddresses<Result>(
    host: String, port: Int, socketType: Int32, failure code: MediaError.Code,
    _ body: (UnsafeMutablePointer<addrinfo>) throws(MediaError) -> Result
) throws(MediaError) -> Result {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = socketType
    var list: UnsafeMutablePointer<addrinfo>? = nil
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else {
        throw MediaError(code, "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
    }
    defer { freeaddrinfo(list) }
    return try body(first)
}

/// A blocking TCP socket connected to `host:port`: each address `host`
/// resolves to is tried in turn until one connects.
///
/// - Throws: `MediaError` with `code` and "cannot resolve HOST: …" or
///   "cannot connect to HOST:PORT: …" (the last address's error).
package func connectTCP(host: String, port: Int, failure code: MediaError.Code) throws(MediaError) -> Int32 {
    try withResolvedAddresses(host: host, port: port, socketType: Int32(SOCK_STREAM.rawValue), failure: code) {
        first throws(MediaError) in
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if fd < 0 {
                lastError = errno
                continue
            }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            lastError = errno
            _ = Glibc.close(fd)
        }
        throw MediaError(code, "cannot connect to \(host):\(port): \(systemErrorText(lastError))")
    }
}
