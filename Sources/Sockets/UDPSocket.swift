import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

// UDPSocket's descriptor and lifetime, one datagram sent and one received. The
// rest of the type: SocketAddress (numeric addresses and their sockaddr forms),
// +Batches (many datagrams per system call, segmentation offload).

/// A UDP endpoint over POSIX sockets, for RTP and RTCP.
///
/// ```swift
/// let socket = try UDPSocket(bindingTo: "127.0.0.1")      // port 0: any free one
/// let peer = try UDPSocket.Address(host: "127.0.0.1", port: 5004)
/// try socket.send(packet, to: peer)
/// var buffer = [UInt8](repeating: 0, count: 2048)
/// if let (count, from) = try socket.receive(into: &buffer, timeout: .milliseconds(100)) { print(count, from) }
/// ```
///
/// The socket owns its descriptor and closes it once, in ``close()`` or
/// `deinit`. Calls block the calling thread (a receive at most for its
/// timeout). One thread may send while another receives (the kernel
/// serializes datagrams); ``close()`` must not race with either, so it is
/// for the owner once the other threads are done with the socket.
public final class UDPSocket: @unchecked Sendable {
    /// A numeric IPv4 or IPv6 address and a port (the package's one address type).
    public typealias Address = SocketAddress

    /// The socket's descriptor (-1 once closed), for `poll` and socket options.
    public private(set) var descriptor: Int32
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
        (descriptor, localAddress) = try Self.openDescriptor(
            bindingTo: address, receiveBufferSize: receiveBufferSize, sendBufferSize: nil, nonBlocking: false)
    }

    /// A UDP socket bound to `address` (port 0: any free one), with
    /// `SO_RCVBUF` and `SO_SNDBUF` set when given, non-blocking when
    /// asked: its descriptor, which the caller owns, and the address it is
    /// bound to.
    ///
    /// - Throws: `MediaError.Code.system` when the socket cannot be opened or bound.
    package static func openDescriptor(
        bindingTo address: Address, receiveBufferSize: Int?, sendBufferSize: Int?, nonBlocking: Bool
    ) throws(MediaError) -> (descriptor: Int32, address: Address) {
        let fd = socket(address.family, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw MediaError(.system, "socket: \(systemErrorText(errno))") }
        if let receiveBufferSize {
            var size = Int32(clamping: receiveBufferSize)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            // The kernel caps SO_RCVBUF at net.core.rmem_max (212 992 bytes by
            // default); a privileged process may go past it.
            var granted: Int32 = 0
            var grantedLength = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &grantedLength) == 0, granted / 2 < size {
                _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size))
            }
        }
        if let sendBufferSize {
            var size = Int32(clamping: sendBufferSize)
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = address.withSocketAddress { bind(fd, $0, $1) }
        guard bound == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw MediaError(.system, "cannot bind UDP \(address): \(systemErrorText(code))")
        }
        if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        do {
            return (fd, try Address.local(of: fd))
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
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
        let milliseconds = pollMilliseconds(timeout)
        var count: Int
        var storage: sockaddr_storage
        if milliseconds == 0 {
            // No wait: one non-blocking recvfrom instead of a poll and a
            // recvfrom (a receiver draining a burst makes this call per datagram).
            repeat {
                (count, storage) = Self.receiveFrom(descriptor, into: &buffer, flags: Int32(MSG_DONTWAIT))
            } while count < 0 && errno == EINTR
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return nil }
        } else {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            while true {
                let ready = poll(&poller, 1, milliseconds)
                if ready < 0 && errno == EINTR { continue }
                guard ready >= 0 else {
                    throw MediaError(.system, "poll on \(localAddress): \(systemErrorText(errno))")
                }
                if ready == 0 { return nil }
                break
            }
            (count, storage) = Self.receiveFrom(descriptor, into: &buffer)
        }
        guard count >= 0 else { throw MediaError(.system, "receive on \(localAddress): \(systemErrorText(errno))") }
        guard let from = Address.from(storage) else {
            throw MediaError(.system, "receive on \(localAddress): a datagram from an unknown address family")
        }
        return (count, from)
    }

}
