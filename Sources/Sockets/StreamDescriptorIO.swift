// One receive and one send on a connected stream socket's descriptor, for
// the servers that poll their connections themselves (the page server, the
// WHEP/WHIP endpoints, the WHIP client's HTTP exchange, MediaIO's TCP reader).
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// What one `recv(2)` or `send(2)` on a connected socket did.
package enum StreamIOResult: Equatable {
    /// So many bytes were read or sent (more than 0).
    case transferred(Int)
    /// Nothing now: the socket is non-blocking and has nothing to read or
    /// no room to send (`EAGAIN`), or a signal interrupted the call.
    case wouldBlock
    /// The peer closed its sending direction (a read of 0 bytes).
    case closed
    /// The call failed with this `errno` value.
    case failed(Int32)

    /// The words for a failure's `errno` value.
    package static func text(_ code: Int32) -> String { systemErrorText(code) }
}

/// Reads what `descriptor` has into the start of `buffer` with one `recv(2)`.
package func receiveAvailable(on descriptor: Int32, into buffer: inout [UInt8]) -> StreamIOResult {
    let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
    return streamIOResult(count, emptyMeansClosed: true)
}

/// Sends as much of `bytes` as `descriptor` takes with one `send(2)`,
/// without `SIGPIPE` on a closed connection.
package func sendAvailable(_ bytes: ArraySlice<UInt8>, on descriptor: Int32) -> StreamIOResult {
    let count = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    return streamIOResult(count, emptyMeansClosed: false)
}

private func streamIOResult(_ count: Int, emptyMeansClosed: Bool) -> StreamIOResult {
    if count > 0 { return .transferred(count) }
    if count == 0 { return emptyMeansClosed ? .closed : .wouldBlock }
    let code = errno
    if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return .wouldBlock }
    return .failed(code)
}

/// Takes the next connection waiting on the listening socket `listener`
/// (IPv4 or IPv6), non-blocking, or nil when none waits: its descriptor,
/// made non-blocking, and the peer's address.
package func acceptWaitingConnection(on listener: Int32) -> (descriptor: Int32, peer: SocketAddress)? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let descriptor = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
    }
    guard descriptor >= 0 else { return nil }
    guard let peer = SocketAddress.from(storage) else {
        _ = close(descriptor)
        return nil
    }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    return (descriptor, peer)
}
