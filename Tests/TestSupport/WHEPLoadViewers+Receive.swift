// Batched reception for the light WHEP viewers: up to 64 datagrams per recvmmsg call (looked up with dlsym; one
// recvfrom per call where the C library lacks it), each with its source address.
import Foundation
import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

/// Buffers for one batch of datagrams read from a non-blocking UDP socket (IPv4 sources).
final class DatagramBatch {
    /// Datagrams per call.
    static let capacity = 64
    /// Bytes per datagram buffer (longer datagrams are cut).
    static let size = 2048
    private typealias ReceiveMultiple =
        @convention(c) (Int32, UnsafeMutableRawPointer?, UInt32, Int32, UnsafeMutableRawPointer?) -> Int32
    /// `recvmmsg` from the C library, looked up once; 0 where it lacks it.
    private static let receiveMultipleAddress = Int(bitPattern: dlsym(nil, "recvmmsg"))
    private let storage = UnsafeMutableRawPointer.allocate(byteCount: capacity * size, alignment: 16)
    private let names = UnsafeMutablePointer<sockaddr_in>.allocate(capacity: capacity)
    private let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: capacity)
    // struct mmsghdr { struct msghdr msg_hdr; unsigned int msg_len; }, laid out by hand.
    private let headerSize = MemoryLayout<msghdr>.size
    private let stride = (MemoryLayout<msghdr>.size + MemoryLayout<UInt32>.size + 7) & ~7
    private let headers: UnsafeMutableRawPointer

    init() {
        headers = UnsafeMutableRawPointer.allocate(byteCount: stride * Self.capacity, alignment: 8)
        headers.initializeMemory(as: UInt8.self, repeating: 0, count: stride * Self.capacity)
        names.initialize(repeating: sockaddr_in(), count: Self.capacity)
        for index in 0..<Self.capacity {
            vectors[index] = iovec(iov_base: storage + index * Self.size, iov_len: Self.size)
        }
    }

    deinit {
        storage.deallocate()
        names.deallocate()
        vectors.deallocate()
        headers.deallocate()
    }

    /// Reads the datagrams waiting on `descriptor` without blocking, up to ``capacity``; how many it read.
    func receive(on descriptor: Int32) -> Int {
        for index in 0..<Self.capacity {
            let header = msghdr(
                msg_name: UnsafeMutableRawPointer(names + index),
                msg_namelen: socklen_t(MemoryLayout<sockaddr_in>.size), msg_iov: vectors + index, msg_iovlen: 1,
                msg_control: nil, msg_controllen: 0, msg_flags: 0)
            headers.storeBytes(of: header, toByteOffset: index * stride, as: msghdr.self)
            headers.storeBytes(of: UInt32(0), toByteOffset: index * stride + headerSize, as: UInt32.self)
        }
        if let function = UnsafeRawPointer(bitPattern: Self.receiveMultipleAddress).map({
            unsafeBitCast($0, to: ReceiveMultiple.self)
        }) {
            return max(Int(function(descriptor, headers, UInt32(Self.capacity), Int32(MSG_DONTWAIT), nil)), 0)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = names.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            recvfrom(descriptor, storage, Self.size, Int32(MSG_DONTWAIT), $0, &length)
        }
        guard count > 0 else { return 0 }
        headers.storeBytes(of: UInt32(count), toByteOffset: headerSize, as: UInt32.self)
        return 1
    }

    /// The bytes of datagram `index` of the last ``receive(on:)``.
    func datagram(_ index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(
            start: storage + index * Self.size,
            count: Int(headers.load(fromByteOffset: index * stride + headerSize, as: UInt32.self)))
    }

    /// The source of datagram `index` of the last ``receive(on:)``.
    func source(_ index: Int) -> UDPAddress {
        UDPAddress(
            host: withUnsafeBytes(of: names[index].sin_addr) { Array($0) },
            port: UInt16(bigEndian: names[index].sin_port))
    }
}
