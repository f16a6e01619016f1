// The local addresses an endpoint offers as host candidates: the address it
// was given, or for a wildcard (0.0.0.0, ::) those of every interface that is
// up (getifaddrs).
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// The numeric addresses behind a listen address.
enum HostAddresses {
    /// Whether `host` (numeric) is a wildcard: `0.0.0.0` or `::`.
    static func isWildcard(_ host: String) -> Bool {
        guard let bytes = bytes(of: host) else { return false }
        return bytes.allSatisfy { $0 == 0 }
    }

    /// The 4 or 16 address bytes of the numeric `host`, or nil when it is not one.
    static func bytes(of host: String) -> [UInt8]? {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return withUnsafeBytes(of: v4) { Array($0) } }
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        return nil
    }

    /// The addresses a socket bound to `host` takes datagrams on: `host`
    /// itself, or for `0.0.0.0` every IPv4 address of the interfaces that
    /// are up, for `::` every IPv6 address and then every IPv4 one. IPv6
    /// link-local addresses (fe80::/10) are left out: a candidate line has
    /// no zone to say which link. Loopback addresses come last.
    static func addresses(for host: String) -> [String] {
        guard isWildcard(host) else { return [host] }
        let ipv6 = host.contains(":")
        return interfaceAddresses(ipv4: true, ipv6: ipv6)
    }

    /// The addresses of the interfaces that are up (IPv6 first when both are
    /// asked for, loopback last, no IPv6 link-local), each once.
    static func interfaceAddresses(ipv4: Bool, ipv6: Bool) -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var found: [(text: String, bytes: [UInt8], loopback: Bool)] = []
        var next = list
        while let entry = next?.pointee {
            next = entry.ifa_next
            guard entry.ifa_flags & UInt32(IFF_UP) != 0, let address = entry.ifa_addr else { continue }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let bytes: [UInt8]
            switch Int32(address.pointee.sa_family) {
            case AF_INET where ipv4:
                var raw = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in.self).pointee.sin_addr
                guard inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil else { continue }
                bytes = withUnsafeBytes(of: raw) { Array($0) }
            case AF_INET6 where ipv6:
                var raw = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in6.self).pointee.sin6_addr
                guard inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil else { continue }
                bytes = withUnsafeBytes(of: raw) { Array($0) }
                if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { continue }
            default: continue
            }
            let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard !found.contains(where: { $0.bytes == bytes }) else { continue }
            found.append((name, bytes, entry.ifa_flags & UInt32(IFF_LOOPBACK) != 0))
        }
        let ordered = found.enumerated().sorted { a, b in
            let rank = { (entry: (text: String, bytes: [UInt8], loopback: Bool)) in
                (entry.loopback ? 2 : 0) + (entry.bytes.count == 16 ? 0 : 1)
            }
            return rank(a.element) != rank(b.element) ? rank(a.element) < rank(b.element) : a.offset < b.offset
        }
        return ordered.map(\.element.text)
    }
}
