import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP socket listening on `host` (a numeric IPv4 address:
/// `127.0.0.1` for loopback only, `0.0.0.0` for every interface) and `port`
/// (0: any free one) with `SO_REUSEADDR`, and the port it is bound to.
///
/// - Throws: `.invalidArgument` for a port outside 0...65535 or a host that is
///   not a numeric IPv4 address; `.system` when the socket cannot be made,
///   bound or listened on.
package func listenTCP(host: String, port: Int, backlog: Int32) throws(MediaError) -> (descriptor: Int32, port: Int) {
    guard (0...65535).contains(port) else {
        throw .invalidArgument("port \(port): expected 0 to 65535")
    }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw MediaError(.system, "socket: \(String(cString: strerror(errno)))") }
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
        _ = Glibc.close(fd)
        throw .invalidArgument("listen address \(host): expected a numeric IPv4 address")
    }
    let bound = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0, listen(fd, backlog) == 0 else {
        let text = String(cString: strerror(errno))
        _ = Glibc.close(fd)
        throw MediaError(.system, "cannot listen on \(host):\(port): \(text)")
    }
    var actual = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &actual) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: actual.sin_port)))
}
