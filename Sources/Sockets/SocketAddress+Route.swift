import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

// SocketAddress's route lookup: which local address reaches a destination.
extension SocketAddress {
    /// The local address the system sends from to reach this address (a
    /// loopback destination gives loopback): a throwaway UDP socket is
    /// connected here and its name read back; nothing is sent.
    ///
    /// - Throws: `MediaError.Code.system` when no route reaches it.
    public func localAddressReaching() throws(MediaError) -> String {
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw MediaError(.system, "socket: \(systemErrorText(errno))") }
        defer { _ = Glibc.close(fd) }
        guard withSocketAddress({ connect(fd, $0, $1) }) == 0 else {
            throw MediaError(.system, "no route to \(host): \(systemErrorText(errno))")
        }
        return try Self.local(of: fd).host
    }
}
