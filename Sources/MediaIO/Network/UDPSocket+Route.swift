import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

// UDPSocket's route lookup: which local address reaches a destination.
extension UDPSocket.Address {
    /// The local address the system sends from to reach this address (a
    /// loopback destination gives loopback): a throwaway UDP socket is
    /// connected here and its name read back; nothing is sent.
    ///
    /// - Throws: `MediaError.Code.system` when no route reaches it.
    public func localAddressReaching() throws(MediaError) -> String {
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw MediaError(.system, "socket: \(systemErrorText(errno))") }
        defer { _ = Glibc.close(fd) }
        guard withSocketAddress({ connect(fd, $0, $1) }) == 0 else {
            throw MediaError(.system, "no route to \(host): \(systemErrorText(errno))")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0, let local = Self.from(storage) else {
            throw MediaError(.system, "getsockname: \(systemErrorText(errno))")
        }
        return local.host
    }
}
