import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

// Many datagrams per system call: `sendmmsg` to many destinations, UDP
// segmentation offload (`UDP_SEGMENT`), and the one-`sendmsg`-each fallback.
extension UDPSocket {
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
    package static let solUDP: Int32 = 17
    package static let udpSegment: Int32 = 103
    /// The kernel's limit on segments per message (`UDP_MAX_SEGMENTS`, 64
    /// before Linux 6.9).
    package static let maximumSegments = 64

    /// `payload` as messages of whole segments that fit one UDP datagram each.
    package static func segmentRuns(_ payload: UnsafeRawBufferPointer, segmentSize: Int) -> [(
        UnsafeRawBufferPointer, Int
    )] {
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
    package struct SocketName {
        var storage = sockaddr_storage()
        var length: socklen_t = 0
        package init(_ address: Address) {
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
    package func sendMessages(_ payloads: [(UnsafeRawBufferPointer, Int)], to names: [SocketName]) throws(MediaError)
        -> Int
    {
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
