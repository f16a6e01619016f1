import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a list of byte ranges to a connected stream socket (TCP) with one
/// `sendmsg` per call, so that bytes in different places — an Annex-B
/// access unit's start codes and parameter sets, then ranges of the
/// encoder's sample buffer (`AnnexBGatherList.withBuffers`) — leave without
/// being copied into one buffer first.
///
/// ```swift
/// var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
/// let list = try writer.gather(sample)
/// try list.withBuffers { buffers in
///     try GatheredWrite.writeAll(buffers, to: descriptor, peer: "127.0.0.1:5000")
/// }
/// ```
///
/// A stream socket may take part of what is offered; both forms continue
/// from the byte where the kernel stopped (`offset`), which may fall inside a
/// range. Sends use `MSG_NOSIGNAL`: a peer that hung up is an error, not a
/// `SIGPIPE`. At most `IOV_MAX` (1024) ranges go in one call; longer lists
/// take several.
package enum GatheredWrite {
    /// The most ranges handed to one `sendmsg` (Linux's `IOV_MAX`).
    static let maximumRanges = 1024

    /// Writes every byte of `buffers`, waiting while the socket is full (a
    /// blocking socket waits in the kernel; a non-blocking one in `poll`).
    ///
    /// - Throws: `MediaError.Code.system` naming `peer` when the connection fails.
    package static func writeAll(
        _ buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>, to descriptor: Int32, peer: String
    ) throws(MediaError) {
        let total = buffers.reduce(0) { $0 + $1.count }
        var offset = 0
        while offset < total {
            let sent = sendOnce(buffers, from: offset, to: descriptor, flags: Int32(MSG_NOSIGNAL))
            if sent >= 0 {
                offset += sent
                continue
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&waiting, 1, -1)
                continue
            }
            throw MediaError(.system, "send to \(peer): \(systemErrorText(code))")
        }
    }

    /// Writes as much of `buffers`, from byte `offset` on, as the socket takes
    /// now without waiting; returns how many bytes went (0 when it is full).
    ///
    /// - Throws: `MediaError.Code.system` naming `peer` when the connection fails.
    package static func writeAvailable(
        _ buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>, from offset: Int = 0, to descriptor: Int32,
        peer: String
    ) throws(MediaError) -> Int {
        let total = buffers.reduce(0) { $0 + $1.count }
        var written = 0
        while offset + written < total {
            let sent = sendOnce(
                buffers, from: offset + written, to: descriptor, flags: Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if sent > 0 {
                written += sent
                continue
            }
            if sent == 0 { break }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { break }
            throw MediaError(.system, "send to \(peer): \(systemErrorText(code))")
        }
        return written
    }

    /// Appends the bytes of `buffers` from byte `offset` on to `queue` (what a
    /// sender keeps for a peer that did not take everything).
    package static func append(
        _ buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>, from offset: Int, to queue: inout [UInt8]
    ) {
        var skip = offset
        for buffer in buffers {
            if skip >= buffer.count {
                skip -= buffer.count
                continue
            }
            queue.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[skip...]))
            skip = 0
        }
    }

    /// One `sendmsg` of the ranges from byte `offset` on (at most
    /// ``maximumRanges`` of them); its return value, with `errno` set on -1.
    private static func sendOnce(
        _ buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>, from offset: Int, to descriptor: Int32,
        flags: Int32
    ) -> Int {
        // The first range with bytes left, and how far into it to start.
        var first = 0
        var skip = offset
        while first < buffers.count && skip >= buffers[first].count {
            skip -= buffers[first].count
            first += 1
        }
        let count = min(buffers.count - first, maximumRanges)
        guard count > 0 else { return 0 }
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { vectors in
            for index in 0..<count {
                let range = buffers[first + index]
                let start = index == 0 ? skip : 0
                vectors[index] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: range.baseAddress.map { $0 + start }),
                    iov_len: range.count - start)
            }
            var message = msghdr()
            message.msg_iov = vectors.baseAddress
            message.msg_iovlen = count
            return sendmsg(descriptor, &message, flags)
        }
    }
}
