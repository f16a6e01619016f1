#if canImport(Glibc)
    import Glibc
#endif

/// Whether libavformat's TCP listener (RTSP `rtsp_flags=listen`, RTMP
/// `listen=1`) has accepted a client: libavformat binds, accepts one
/// connection and closes the listening socket, all inside one blocking call
/// that reports nothing in between. Its accepted socket is one of this
/// process's descriptors: a connected stream socket (not listening) whose
/// local port is the listener's. Looked up in `/proc/self/fd` at most every
/// 50 ms (the interrupt callback that asks runs far more often).
///
/// Unchecked `Sendable`: ``NetworkDeadline`` uses it under its lock only.
package final class AcceptedSocketProbe: @unchecked Sendable {
    /// The listener's TCP port.
    package let port: Int
    private var lastLook = 0.0

    package init(port: Int) {
        self.port = port
    }

    /// Whether a connection accepted on ``port`` is open now; nil when it
    /// is too soon to look again.
    package func look(now: Double) -> Bool? {
        guard now - lastLook >= 0.05 else { return nil }
        lastLook = now
        guard let directory = opendir("/proc/self/fd") else { return false }
        defer { closedir(directory) }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard let descriptor = Int32(name), descriptor != own else { continue }
            if isAcceptedStreamSocket(descriptor) { return true }
        }
        return false
    }

    private func isAcceptedStreamSocket(_ descriptor: Int32) -> Bool {
        var type: Int32 = 0
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0,
            type == Int32(SOCK_STREAM.rawValue)
        else { return false }
        length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening == 0 else {
            return false
        }
        var address = sockaddr_storage()
        var addressLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &addressLength) }
        }
        guard named == 0 else { return false }
        let localPort: UInt16
        switch Int32(address.ss_family) {
        case AF_INET:
            localPort = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        case AF_INET6:
            localPort = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
        default: return false
        }
        guard Int(localPort) == port else { return false }
        // Connected (a peer name), not merely bound.
        var peer = sockaddr_storage()
        var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &peerLength) }
        } == 0
    }
}
