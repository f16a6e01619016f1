import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// A UDP endpoint over POSIX sockets, for RTP and RTCP.
///
/// ```swift
/// let socket = try UDPSocket(bindingTo: "127.0.0.1")      // port 0: any free one
/// let peer = try UDPSocket.Address(host: "127.0.0.1", port: 5004)
/// try socket.send(packet, to: peer)
/// var buffer = [UInt8](repeating: 0, count: 2048)
/// if let (count, from) = try socket.receive(into: &buffer, timeout: .milliseconds(100)) { … }
/// ```
///
/// The socket owns its descriptor and closes it once, in ``close()`` or
/// `deinit`. Calls block the calling thread (a receive at most for its
/// timeout). One thread may send while another receives (the kernel
/// serializes datagrams); ``close()`` must not race with either, so it is
/// for the owner once the other threads are done with the socket.
public final class UDPSocket: @unchecked Sendable {
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

    private var descriptor: Int32
    /// The address the socket is bound to, with the port the system chose
    /// when it was bound to port 0.
    public let localAddress: Address

    /// Opens a UDP socket bound to `host:port` (`port` 0: any free port,
    /// read back in ``localAddress``). `host` decides the family: `::1`
    /// or `::` for IPv6, anything else resolves as given.
    ///
    /// - Parameters:
    ///   - host: the local address to bind (`127.0.0.1`, `::1`, `0.0.0.0`, `::`).
    ///   - port: the local port; 0 lets the system choose.
    ///   - receiveBufferSize: the kernel's receive buffer in bytes
    ///     (`SO_RCVBUF`); a larger one absorbs bursts such as a keyframe's
    ///     packets. The kernel caps it at `net.core.rmem_max` unless the process
    ///     may use `SO_RCVBUFFORCE` (root).
    /// - Throws: `MediaError.Code.system` when the socket cannot be opened or
    ///   bound (the port is taken, the address is not local).
    public init(bindingTo host: String = "127.0.0.1", port: UInt16 = 0, receiveBufferSize: Int = 4 << 20)
        throws(MediaError)
    {
        let address = try Address(host: host, port: port)
        let fd = socket(address.isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw MediaError(.system, "socket: \(systemErrorText(errno))") }
        var size = Int32(clamping: receiveBufferSize)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        // The kernel caps SO_RCVBUF at net.core.rmem_max (212 992 bytes by
        // default); a privileged process may go past it.
        var granted: Int32 = 0
        var grantedLength = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &grantedLength) == 0, granted / 2 < size {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = address.withSocketAddress { bind(fd, $0, $1) }
        guard bound == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw MediaError(.system, "cannot bind UDP \(address): \(systemErrorText(code))")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0, let local = Address.from(storage) else {
            let code = errno
            _ = Glibc.close(fd)
            throw MediaError(.system, "getsockname: \(systemErrorText(code))")
        }
        descriptor = fd
        localAddress = local
    }

    deinit { close() }

    /// Closes the socket; later calls throw. Safe to call twice.
    public func close() {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
        descriptor = -1
    }

    /// Sends one datagram.
    ///
    /// - Throws: `MediaError.Code.system` naming the destination (for
    ///   example `EMSGSIZE` for a datagram over 65 507 bytes). A datagram the
    ///   network drops later is not an error: UDP does not know.
    public func send(_ datagram: [UInt8], to address: Address) throws(MediaError) {
        try send(datagram[...], to: address)
    }

    /// Sends one datagram that is part of a larger buffer (a packet of an
    /// `RTPPacketBatch`), straight from that buffer: no copy, no allocation.
    public func send(_ datagram: ArraySlice<UInt8>, to address: Address) throws(MediaError) {
        guard descriptor >= 0 else { throw MediaError(.system, "send to \(address): the socket is closed") }
        let sent = datagram.withUnsafeBytes { bytes in
            var vector = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
            return sendMessage(&vector, count: 1, to: address)
        }
        guard sent >= 0 else { throw MediaError(.system, "send to \(address): \(systemErrorText(errno))") }
    }

    /// Sends one datagram gathered from several buffers (`sendmsg`), so a
    /// header and a payload in different places leave without being copied
    /// together first.
    package func send(_ parts: [UnsafeRawBufferPointer], to address: Address) throws(MediaError) {
        guard descriptor >= 0 else { throw MediaError(.system, "send to \(address): the socket is closed") }
        var vectors = parts.map {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count)
        }
        let sent = vectors.withUnsafeMutableBufferPointer { iov in
            sendMessage(iov.baseAddress!, count: iov.count, to: address)
        }
        guard sent >= 0 else { throw MediaError(.system, "send to \(address): \(systemErrorText(errno))") }
    }

    /// One `sendmsg` of `count` vectors to `address` (retried on `EINTR`); its
    /// result, with `errno` set when it is negative.
    private func sendMessage(_ vectors: UnsafeMutablePointer<iovec>, count: Int, to address: Address) -> Int {
        address.withSocketAddress { name, length in
            var message = msghdr()
            message.msg_name = UnsafeMutableRawPointer(mutating: name)
            message.msg_namelen = length
            message.msg_iov = vectors
            message.msg_iovlen = count
            while true {
                let result = sendmsg(descriptor, &message, Int32(MSG_NOSIGNAL))
                if result < 0 && errno == EINTR { continue }
                return result
            }
        }
    }

    /// Waits up to `timeout` (for ever when nil) for one datagram and copies
    /// it into `buffer`. A datagram longer than `buffer` is cut to its size
    /// (the returned count says how much was kept).
    ///
    /// - Returns: the byte count and the sender, or nil when the timeout
    ///   passed with nothing received.
    public func receive(into buffer: inout [UInt8], timeout: Duration?) throws(MediaError) -> (
        count: Int, from: Address
    )? {
        guard descriptor >= 0 else { throw MediaError(.system, "receive on \(localAddress): the socket is closed") }
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds: Int32
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            // Rounded up: a wait of less than a millisecond rounded down to 0
            // returns at once, and a caller waiting for a deadline spins.
            let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
            milliseconds = Int32(
                clamping: max(
                    0, seconds * 1000 + (attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond))
        } else {
            milliseconds = -1
        }
        while true {
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw MediaError(.system, "poll on \(localAddress): \(systemErrorText(errno))") }
            if ready == 0 { return nil }
            break
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(descriptor, bytes.baseAddress, bytes.count, 0, $0, &length)
                }
            }
        }
        guard count >= 0 else { throw MediaError(.system, "receive on \(localAddress): \(systemErrorText(errno))") }
        guard let from = Address.from(storage) else {
            throw MediaError(.system, "receive on \(localAddress): a datagram from an unknown address family")
        }
        return (count, from)
    }

    // MARK: Many datagrams per system call

    /// Sends every datagram of `datagrams` to every address of
    /// `destinations` with `sendmmsg` (up to 1024 messages a call): all
    /// destinations get the first datagram before any gets the second. The
    /// buffers are read in place, not copied.
    ///
    /// - Returns: the system calls it took.
    /// - Throws: `MediaError.Code.system` naming the destination the kernel
    ///   refused; the messages before it have gone.
    public func send(_ datagrams: [UnsafeRawBufferPointer], toEach destinations: [Address]) throws(MediaError) -> Int {
        try sendMessages(datagrams.map { ($0, 0) }, to: destinations.map(SocketName.init))
    }

    /// Sends `payload` to every address of `destinations` as datagrams of
    /// `segmentSize` bytes (the last may be shorter), cut by the kernel (UDP
    /// generic segmentation offload, `UDP_SEGMENT`, Linux 4.18 and later): one
    /// message per destination, all of them in `sendmmsg` calls. At most 64
    /// segments and 65 000 bytes go in one message; longer payloads take
    /// several.
    ///
    /// - Returns: the system calls it took.
    /// - Throws: `MediaError.Code.invalidArgument` for a segment size outside
    ///   1 … 65 000; `MediaError.Code.system`, for example `EIO` or `EINVAL`
    ///   where the kernel or the route cannot segment
    ///   (``supportsSegmentation`` tells beforehand whether the socket
    ///   option exists).
    public func sendSegmented(_ payload: UnsafeRawBufferPointer, segmentSize: Int, toEach destinations: [Address])
        throws(MediaError) -> Int
    {
        guard (1...65_000).contains(segmentSize) else {
            throw MediaError(.invalidArgument, "UDP segment size \(segmentSize): must be 1 … 65 000")
        }
        return try sendMessages(
            Self.segmentRuns(payload, segmentSize: segmentSize), to: destinations.map(SocketName.init))
    }

    /// Whether the kernel knows UDP segmentation offload on this socket (it
    /// answers `getsockopt(SOL_UDP, UDP_SEGMENT)`).
    public var supportsSegmentation: Bool {
        guard descriptor >= 0 else { return false }
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(descriptor, Self.solUDP, Self.udpSegment, &value, &length) == 0
    }

    /// `SOL_UDP` and `UDP_SEGMENT` (`<netinet/udp.h>`, not in Swift's Glibc module).
    static let solUDP: Int32 = 17
    static let udpSegment: Int32 = 103
    /// The kernel's limit on segments per message (`UDP_MAX_SEGMENTS`, 64
    /// before Linux 6.9).
    static let maximumSegments = 64

    /// `payload` as messages of whole segments that fit one UDP datagram each.
    static func segmentRuns(_ payload: UnsafeRawBufferPointer, segmentSize: Int) -> [(UnsafeRawBufferPointer, Int)] {
        precondition(segmentSize > 0, "segment size \(segmentSize)")
        let perMessage = max(1, min(maximumSegments, 65_000 / segmentSize)) * segmentSize
        var runs: [(UnsafeRawBufferPointer, Int)] = []
        var offset = 0
        while offset < payload.count {
            let end = min(payload.count, offset + perMessage)
            let piece = UnsafeRawBufferPointer(rebasing: payload[offset..<end])
            runs.append((piece, piece.count > segmentSize ? segmentSize : 0))
            offset = end
        }
        return runs
    }

    /// A destination as the `sockaddr` bytes a message header points at.
    struct SocketName {
        var storage = sockaddr_storage()
        var length: socklen_t = 0
        init(_ address: Address) {
            address.withSocketAddress { name, length in
                withUnsafeMutableBytes(of: &storage) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(start: name, count: Int(length)))
                }
                self.length = length
            }
        }
    }

    /// The C type of `sendmmsg`.
    private typealias SendMultiple = @convention(c) (Int32, UnsafeMutableRawPointer?, UInt32, Int32) -> Int32
    /// Where glibc's `sendmmsg` is (Swift's Glibc module does not declare
    /// it), looked up once; 0 where the C library lacks it.
    private static let sendMultipleAddress = Int(bitPattern: dlsym(nil, "sendmmsg"))

    /// Sends message (payload k, name n) for every k and n, payload-major,
    /// in `sendmmsg` calls of up to 1024 messages; a payload with a segment
    /// size carries it as a `UDP_SEGMENT` control message. Returns the calls.
    func sendMessages(_ payloads: [(UnsafeRawBufferPointer, Int)], to names: [SocketName]) throws(MediaError) -> Int {
        guard descriptor >= 0 else { throw MediaError(.system, "send: the socket is closed") }
        let total = payloads.count * names.count
        guard total > 0 else { return 0 }
        // struct mmsghdr { struct msghdr msg_hdr; unsigned int msg_len; }, laid out by hand.
        let headerSize = MemoryLayout<msghdr>.size
        let stride = (headerSize + MemoryLayout<UInt32>.size + 7) & ~7
        // One control message each: a cmsghdr (16 bytes) and the 2-byte size, padded to 24.
        let controlSize = 24
        let perCall = min(total, 1024)
        let headers = UnsafeMutableRawPointer.allocate(byteCount: stride * perCall, alignment: 8)
        defer { headers.deallocate() }
        let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: payloads.count)
        defer { vectors.deallocate() }
        let controls = UnsafeMutableRawPointer.allocate(byteCount: controlSize * payloads.count, alignment: 8)
        defer { controls.deallocate() }
        controls.initializeMemory(as: UInt8.self, repeating: 0, count: controlSize * payloads.count)
        for (index, (payload, segment)) in payloads.enumerated() {
            vectors[index] = iovec(
                iov_base: UnsafeMutableRawPointer(mutating: payload.baseAddress), iov_len: payload.count)
            guard segment > 0 else { continue }
            let control = controls + index * controlSize
            control.storeBytes(of: 18, as: Int.self)  // CMSG_LEN(2)
            control.storeBytes(of: Self.solUDP, toByteOffset: 8, as: Int32.self)
            control.storeBytes(of: Self.udpSegment, toByteOffset: 12, as: Int32.self)
            control.storeBytes(of: UInt16(segment), toByteOffset: 16, as: UInt16.self)
        }
        let storages = UnsafeMutablePointer<sockaddr_storage>.allocate(capacity: names.count)
        defer { storages.deallocate() }
        for (index, name) in names.enumerated() { (storages + index).initialize(to: name.storage) }
        let sendMultiple = UnsafeRawPointer(bitPattern: Self.sendMultipleAddress).map {
            unsafeBitCast($0, to: SendMultiple.self)
        }
        do {
            var calls = 0
            var next = 0
            while next < total {
                let count = min(perCall, total - next)
                for slot in 0..<count {
                    let message = next + slot
                    let payload = message / names.count
                    let name = message % names.count
                    var header = msghdr()
                    header.msg_name = UnsafeMutableRawPointer(storages + name)
                    header.msg_namelen = names[name].length
                    header.msg_iov = vectors + payload
                    header.msg_iovlen = 1
                    if payloads[payload].1 > 0 {
                        header.msg_control = controls + payload * controlSize
                        header.msg_controllen = 24
                    }
                    (headers + slot * stride).storeBytes(of: header, as: msghdr.self)
                    (headers + slot * stride + headerSize).storeBytes(of: 0, as: UInt32.self)
                }
                var sent: Int
                if let sendMultiple {
                    calls += 1
                    let result = sendMultiple(descriptor, headers, UInt32(count), Int32(MSG_NOSIGNAL))
                    if result < 0 && errno == EINTR { continue }
                    sent = Int(result)
                } else {
                    // No sendmmsg in this C library: one sendmsg per message.
                    sent = 0
                    while sent < count {
                        calls += 1
                        let result = sendmsg(
                            descriptor, (headers + sent * stride).assumingMemoryBound(to: msghdr.self),
                            Int32(MSG_NOSIGNAL))
                        if result < 0 && errno == EINTR { continue }
                        if result < 0 { break }
                        sent += 1
                    }
                    if sent == 0 { sent = -1 }
                }
                guard sent > 0 else {
                    let code = errno
                    let destination = Address.from(names[next % names.count].storage).map { "\($0)" } ?? "?"
                    throw MediaError(.system, "send to \(destination): \(systemErrorText(code))")
                }
                next += sent
            }
            return calls
        }
    }
}

/// The text of a NUL-terminated C character buffer.
private func cText(_ characters: [CChar]) -> String {
    String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
