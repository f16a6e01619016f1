// Many datagrams, each to its own destination, from one non-blocking socket in few system calls (`sendmmsg`).
#if canImport(Glibc)
    import Glibc
#endif

extension UDPSocket.SocketName {
    /// The socket address of `addressBytes` (4 bytes: IPv4, 16: IPv6) and `port`, without text.
    package init(addressBytes: [UInt8], port: UInt16) {
        precondition(addressBytes.count == 4 || addressBytes.count == 16, "an IP address has 4 or 16 bytes")
        withUnsafeMutableBytes(of: &storage) { raw in
            if addressBytes.count == 4 {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: addressBytes) }
                raw.storeBytes(of: address, as: sockaddr_in.self)
            } else {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = port.bigEndian
                withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: addressBytes) }
                raw.storeBytes(of: address, as: sockaddr_in6.self)
            }
        }
        length = socklen_t(addressBytes.count == 4 ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
    }
}

extension UDPSocket {
    /// Sends each datagram to its own destination from the non-blocking socket `descriptor`, in `sendmmsg` calls
    /// of up to 256 messages (one `sendto` each where the C library has no `sendmmsg`). A datagram the kernel
    /// refuses (a full send buffer, an unreachable address) is skipped and counted. Returns (datagrams sent,
    /// system calls).
    @discardableResult
    package static func sendEach(_ messages: [(datagram: [UInt8], name: SocketName)], on descriptor: Int32) -> (
        sent: Int, calls: Int
    ) {
        guard !messages.isEmpty else { return (0, 0) }
        guard
            let sendMultiple = UnsafeRawPointer(bitPattern: pairSendMultipleAddress).map({
                unsafeBitCast($0, to: PairSendMultiple.self)
            })
        else {
            var sent = 0
            for message in messages {
                let result = message.datagram.withUnsafeBytes { bytes in
                    withUnsafeBytes(of: message.name.storage) { name in
                        sendto(
                            descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL),
                            name.baseAddress!.assumingMemoryBound(to: sockaddr.self), message.name.length)
                    }
                }
                if result >= 0 { sent += 1 }
            }
            return (sent, messages.count)
        }
        let headerSize = MemoryLayout<msghdr>.size
        let stride = (headerSize + MemoryLayout<UInt32>.size + 7) & ~7
        let perCall = min(messages.count, 256)
        let headers = UnsafeMutableRawPointer.allocate(byteCount: stride * perCall, alignment: 8)
        defer { headers.deallocate() }
        let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: perCall)
        defer { vectors.deallocate() }
        let names = UnsafeMutablePointer<sockaddr_storage>.allocate(capacity: perCall)
        defer { names.deallocate() }
        var sent = 0
        var calls = 0
        var next = 0
        // The datagrams stay alive (and their storage fixed) for the whole call: `messages` holds them.
        while next < messages.count {
            let count = min(perCall, messages.count - next)
            for slot in 0..<count {
                let message = messages[next + slot]
                (names + slot).initialize(to: message.name.storage)
                vectors[slot] = message.datagram.withUnsafeBytes {
                    iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count)
                }
                var header = msghdr()
                header.msg_name = UnsafeMutableRawPointer(names + slot)
                header.msg_namelen = message.name.length
                header.msg_iov = vectors + slot
                header.msg_iovlen = 1
                (headers + slot * stride).storeBytes(of: header, as: msghdr.self)
                (headers + slot * stride + headerSize).storeBytes(of: 0, as: UInt32.self)
            }
            var done = 0
            while done < count {
                calls += 1
                let result = sendMultiple(
                    descriptor, headers + done * stride, UInt32(count - done), Int32(MSG_NOSIGNAL))
                if result < 0 && errno == EINTR { continue }
                if result <= 0 {
                    // This message is refused: skip it, send the rest.
                    done += 1
                    continue
                }
                done += Int(result)
                sent += Int(result)
            }
            next += count
        }
        return (sent, calls)
    }

    /// The C type of `sendmmsg`.
    private typealias PairSendMultiple = @convention(c) (Int32, UnsafeMutableRawPointer?, UInt32, Int32) -> Int32
    /// Where glibc's `sendmmsg` is, looked up once; 0 where the C library lacks it.
    private static let pairSendMultipleAddress = Int(bitPattern: dlsym(nil, "sendmmsg"))
}
