import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0,
/// the one the system chose read back, the socket closed).
///
/// - Throws: ``ProcessError`` when no port could be bound.
public func freeTCPPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw ProcessError("no free TCP port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether a socket listens on TCP 127.0.0.1:`port` (`/proc/net/tcp`,
/// state 0A), looked up every 20 ms for up to `seconds`. Binding the port
/// to find out cannot tell a listener from the connection a listener
/// accepted, and connecting would be a client.
public func tcpPortListens(_ port: Int, within seconds: Double) -> Bool {
    let wanted = String(format: "0100007F:%04X", port)
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            if fields.count > 3, fields[1] == wanted, fields[3] == "0A" { return true }
        }
        usleep(20_000)
    }
    return false
}
