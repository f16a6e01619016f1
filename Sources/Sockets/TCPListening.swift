import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP socket listening on `host` (a numeric IPv4 or IPv6
/// address: `127.0.0.1` or `::1` for loopback only, `0.0.0.0` or `::` for
/// every interface) and `port` (0: any free one) with `SO_REUSEADDR`, and the
/// port it is bound to. The caller owns the descriptor.
///
/// - Throws: `.invalidArgument` for a port outside 0...65535 or a host that is
///   not a numeric IPv4 or IPv6 address; `.system` when the socket cannot be
///   made, bound or listened on.
package func listenTCP(host: String, port: Int, backlog: Int32) throws(MediaError) -> (descriptor: Int32, port: Int) {
    guard (0...65535).contains(port) else {
        throw .invalidArgument("port \(port): expected 0 to 65535")
    }
    let numeric = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    let address: SocketAddress
    do {
        address = try SocketAddress(parsing: numeric)
    } catch {
        throw .invalidArgument("listen address \(host): expected a numeric IPv4 or IPv6 address")
    }
    let fd = socket(address.family, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw MediaError(.system, "socket: \(systemErrorText(errno))") }
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    if address.isIPv6 {
        // Dual stack: `::` takes IPv4 clients too (as ::ffff:a.b.c.d), whatever net.ipv6.bindv6only says.
        var zero: Int32 = 0
        _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
    }
    let bound = address.withSocketAddress { bind(fd, $0, $1) }
    guard bound == 0, listen(fd, backlog) == 0 else {
        let text = systemErrorText(errno)
        _ = Glibc.close(fd)
        throw MediaError(.system, "cannot listen on \(address): \(text)")
    }
    do {
        return (fd, Int(try SocketAddress.local(of: fd).port))
    } catch {
        _ = Glibc.close(fd)
        throw error
    }
}
