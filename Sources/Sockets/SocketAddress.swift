import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// A numeric IPv4 or IPv6 address and a port: where a UDP datagram goes or
/// comes from, where a TCP socket listens or connects.
///
/// ```swift
/// let peer = try SocketAddress(host: "127.0.0.1", port: 5004)
/// let parsed = try SocketAddress(parsing: "[::1]:5004")   // parsed.host == "::1"
/// print(peer)                                             // 127.0.0.1:5004
/// ```
///
/// `UDPSocket.Address` is the same type.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in numeric form (`127.0.0.1`, `::1`).
    public var host: String
    /// The port number.
    public var port: UInt16

    /// Resolves `host` (a numeric IPv4 or IPv6 address, or a name such as
    /// `localhost`) to its first address.
    ///
    /// - Parameters:
    ///   - host: the address or name.
    ///   - port: the port.
    /// - Throws: `MediaError.Code.invalidArgument` when it does not resolve.
    public init(host: String, port: UInt16) throws(MediaError) {
        self.host = try Self.resolve(host, port: port)
        self.port = port
    }

    /// Parses `HOST:PORT` with a numeric host: `127.0.0.1:5004` or, for IPv6,
    /// `[::1]:5004` (the brackets are required). Nothing is resolved.
    ///
    /// - Throws: `MediaError.Code.invalidArgument` saying what is wrong: no
    ///   port, a port that is not a number in 0 … 65535, a host that is not a
    ///   numeric IPv4 or IPv6 address, an IPv6 host without brackets.
    public init(parsing text: String) throws(MediaError) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw .invalidArgument("address \(text): an IPv6 host opened with [ needs a closing ]")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else {
                throw .invalidArgument("address \(text): expected :PORT after [HOST]")
            }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw .invalidArgument("address \(text): expected HOST:PORT, such as 127.0.0.1:5004 or [::1]:5004")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                throw .invalidArgument("address \(text): write an IPv6 host in brackets, such as [::1]:5004")
            }
        }
        guard !portText.isEmpty, portText.allSatisfy({ ("0"..."9").contains($0) }), let port = UInt16(portText) else {
            throw .invalidArgument("address \(text): port \(portText): expected a number from 0 to 65535")
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        let family = host.contains(":") ? AF_INET6 : AF_INET
        let valid =
            family == AF_INET6
            ? inet_pton(AF_INET6, String(host), &v6) == 1 : inet_pton(AF_INET, String(host), &v4) == 1
        guard valid else {
            throw .invalidArgument("address \(text): host \(host): expected a numeric IPv4 or IPv6 address")
        }
        // The canonical form (`::1` for `0:0::1`), as received addresses print.
        self.init(numericHost: String(host), port: port)
        if let canonical = Self.canonical(host: String(host)) { self.host = canonical }
    }

    package init(numericHost: String, port: UInt16) {
        self.host = numericHost
        self.port = port
    }

    /// `127.0.0.1:5004`, `[::1]:5004`.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether this is an IPv6 address.
    public var isIPv6: Bool { host.contains(":") }

    /// The address bytes in network order: 4 for IPv4, 16 for IPv6.
    public var addressBytes: [UInt8] {
        if isIPv6 {
            var raw = in6_addr()
            _ = inet_pton(AF_INET6, host, &raw)
            return withUnsafeBytes(of: raw) { Array($0) }
        }
        var raw = in_addr()
        _ = inet_pton(AF_INET, host, &raw)
        return withUnsafeBytes(of: raw) { Array($0) }
    }

    /// The address family for `socket(2)`.
    var family: Int32 { isIPv6 ? AF_INET6 : AF_INET }

    static func resolve(_ host: String, port: UInt16) throws(MediaError) -> String {
        try withResolvedAddresses(
            host: host, port: Int(port), socketType: Int32(SOCK_DGRAM.rawValue), failure: .invalidArgument
        ) { first throws(MediaError) in
            var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let named = getnameinfo(
                first.pointee.ai_addr, first.pointee.ai_addrlen, &name, socklen_t(name.count), nil, 0,
                NI_NUMERICHOST)
            guard named == 0 else {
                throw MediaError(.invalidArgument, "cannot resolve \(host): \(String(cString: gai_strerror(named)))")
            }
            return cText(name)
        }
    }

    /// `host` (numeric) as `inet_ntop` prints it.
    private static func canonical(host: String) -> String? {
        var storage = sockaddr_storage()
        let address = SocketAddress(numericHost: host, port: 0)
        address.withSocketAddress { name, length in
            withUnsafeMutableBytes(of: &storage) {
                $0.copyMemory(from: UnsafeRawBufferPointer(start: name, count: Int(length)))
            }
        }
        return from(storage)?.host
    }

    /// Calls `body` with this address as a `sockaddr`.
    package func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            _ = inet_pton(AF_INET6, host, &address.sin6_addr)
            return Self.pass(address, to: body)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        _ = inet_pton(AF_INET, host, &address.sin_addr)
        return Self.pass(address, to: body)
    }

    /// Calls `body` with `address` (a `sockaddr_in` or `sockaddr_in6`) seen as a `sockaddr`, and its size.
    private static func pass<Address, R>(
        _ address: Address, to body: (UnsafePointer<sockaddr>, socklen_t) -> R
    ) -> R {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    /// The address stored in `storage` (IPv4 or IPv6), or nil for another family.
    package static func from(_ storage: sockaddr_storage) -> SocketAddress? {
        var storage = storage
        return withUnsafePointer(to: &storage) { pointer -> SocketAddress? in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            switch Int32(pointer.pointee.ss_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 -> SocketAddress? in
                    var raw = v4.pointee.sin_addr
                    guard inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil else { return nil }
                    return SocketAddress(numericHost: cText(text), port: UInt16(bigEndian: v4.pointee.sin_port))
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 -> SocketAddress? in
                    var raw = v6.pointee.sin6_addr
                    guard inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil else { return nil }
                    return SocketAddress(numericHost: cText(text), port: UInt16(bigEndian: v6.pointee.sin6_port))
                }
            default:
                return nil
            }
        }
    }

    /// The local address descriptor `fd` is bound to (`getsockname`).
    package static func local(of fd: Int32) throws(MediaError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0, let local = from(storage) else {
            throw MediaError(.system, "getsockname: \(systemErrorText(errno))")
        }
        return local
    }
}

/// The text of a NUL-terminated C character buffer.
private func cText(_ characters: [CChar]) -> String {
    String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
