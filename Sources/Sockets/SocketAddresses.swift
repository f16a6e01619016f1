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
/// resolves to is tried in turn until one connects. The connection is
/// waited for in slices of 50 ms: `stopRequested` saying true ends the wait
/// (`.cancelled`), and so does `timeout` without an answer (`.timedOut`;
/// nil waits as long as the system does, about two minutes). The descriptor
/// returned is blocking and owned by the caller.
///
/// - Throws: `MediaError` with `code` and "cannot resolve HOST: …" or
///   "cannot connect to HOST:PORT: …" (the last address's error);
///   `.cancelled` or `.timedOut` as above.
package func connectTCP(
    host: String, port: Int, failure code: MediaError.Code, timeout: Duration? = nil,
    stopRequested: (() -> Bool)? = nil
) throws(MediaError) -> Int32 {
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
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            var status = Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 ? 0 : errno
            if status == EINPROGRESS || status == EINTR {
                status = try waitForConnection(
                    fd, timeout: timeout, stopRequested: stopRequested, naming: "\(host):\(port)")
            }
            if status == 0 {
                _ = fcntl(fd, F_SETFL, flags)
                return fd
            }
            lastError = status
            _ = Glibc.close(fd)
        }
        throw MediaError(code, "cannot connect to \(host):\(port): \(systemErrorText(lastError))")
    }
}

/// Waits for the non-blocking connection on `fd` to complete; its error (0:
/// connected). Closes `fd` and throws when a stop or the timeout ends the wait.
private func waitForConnection(
    _ fd: Int32, timeout: Duration?, stopRequested: (() -> Bool)?, naming peer: String
) throws(MediaError) -> Int32 {
    var waited = Duration.zero
    while true {
        if stopRequested?() == true {
            _ = Glibc.close(fd)
            throw MediaError(.cancelled, "connecting to \(peer): stopped on request")
        }
        if let timeout, waited >= timeout {
            _ = Glibc.close(fd)
            throw MediaError(.timedOut, "cannot connect to \(peer): no answer in \(secondsText(timeout)) s")
        }
        var waiting = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&waiting, 1, 50)
        if ready < 0 && errno != EINTR { return errno }
        if ready <= 0 {
            waited += .milliseconds(50)
            continue
        }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return errno }
        return error
    }
}

/// `10` or `0.5`: a duration in seconds, for messages.
func secondsText(_ duration: Duration) -> String {
    let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}

/// `duration` in whole milliseconds for `poll(2)`, rounded up (a wait of
/// less than a millisecond rounded down to 0 would return at once, and a
/// caller waiting for a deadline would spin); nil gives -1 (for ever).
func pollMilliseconds(_ duration: Duration?) -> Int32 {
    guard let duration else { return -1 }
    let (seconds, attoseconds) = duration.components
    let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
    return Int32(
        clamping: max(0, seconds * 1000 + (attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond))
}
