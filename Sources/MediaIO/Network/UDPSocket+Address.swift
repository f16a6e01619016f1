import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

// Addresses: a host resolved to its numeric form, and an address to and from the
// `sockaddr` the system calls take.
extension UDPSocket {
    /// A numeric IPv4 or IPv6 address and a port.
    public struct Address: Sendable, Hashable, CustomStringConvertible {
        /// The address in numeric form (`127.0.0.1`, `::1`).
        public var host: String
        /// The UDP port number.
        public var port: UInt16

        /// Resolves `host` (a numeric IPv4 or IPv6 address, or a name such as
        /// `localhost`) to its first address.
        ///
        /// - Parameters:
        ///   - host: the address or name.
        ///   - port: the UDP port.
        /// - Throws: `MediaError.Code.invalidArgument` when it does not resolve.
        public init(host: String, port: UInt16) throws(MediaError) {
            self.host = try Self.resolve(host, port: port)
            self.port = port
        }

        init(numericHost: String, port: UInt16) {
            self.host = numericHost
            self.port = port
        }

        /// `127.0.0.1:5004`, `[::1]:5004`.
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

        var isIPv6: Bool { host.contains(":") }

        static func resolve(_ host: String, port: UInt16) throws(MediaError) -> String {
            try withResolvedAddresses(
                host: host, port: Int(port), socketType: Int32(SOCK_DGRAM.rawValue), failure: .invalidArgument
            ) { first throws(MediaError) in
                var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                let named = getnameinfo(
                    first.pointee.ai_addr, first.pointee.ai_addrlen, &name, socklen_t(name.count), nil, 0,
                    NI_NUMERICHOST)
                guard named == 0 else {
                    throw MediaError(
                        .invalidArgument, "cannot resolve \(host): \(String(cString: gai_strerror(named)))")
                }
                return cText(name)
            }
        }

        /// Calls `body` with this address as a `sockaddr`.
        func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
            if isIPv6 {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = port.bigEndian
                _ = inet_pton(AF_INET6, host, &address.sin6_addr)
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            _ = inet_pton(AF_INET, host, &address.sin_addr)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }

        /// The address stored in `storage` (IPv4 or IPv6), or nil for another family.
        static func from(_ storage: sockaddr_storage) -> Address? {
            var storage = storage
            return withUnsafePointer(to: &storage) { pointer -> Address? in
                var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
                switch Int32(pointer.pointee.ss_family) {
                case AF_INET:
                    return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 -> Address? in
                        var raw = v4.pointee.sin_addr
                        guard inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil else { return nil }
                        return Address(numericHost: cText(text), port: UInt16(bigEndian: v4.pointee.sin_port))
                    }
                case AF_INET6:
                    return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 -> Address? in
                        var raw = v6.pointee.sin6_addr
                        guard inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil else { return nil }
                        return Address(numericHost: cText(text), port: UInt16(bigEndian: v6.pointee.sin6_port))
                    }
                default:
                    return nil
                }
            }
        }
    }
}

/// The text of a NUL-terminated C character buffer.
private func cText(_ characters: [CChar]) -> String {
    String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
