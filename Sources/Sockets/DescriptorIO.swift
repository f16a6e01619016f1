// Reading and writing a descriptor with EINTR retried: the one loop behind
// TCPConnection's reads and writes and MediaIO's file streams.
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// At most `maximumCount` bytes from `call` (`read(2)`, `recv(2)`: given
/// a buffer and its size, it returns the byte count or -1), again while it
/// fails with `EINTR`; any other failure throws an error that starts with
/// `failure`.
package func readChunk(
    upTo maximumCount: Int, failure: @autoclosure () -> String, _ call: (UnsafeMutableRawPointer, Int) -> Int
) throws(MediaError) -> [UInt8] {
    precondition(maximumCount > 0, "a read needs a positive byte count")
    var code: Int32 = 0
    let bytes = [UInt8](unsafeUninitializedCapacity: maximumCount) { buffer, count in
        count = 0
        while true {
            let received = call(buffer.baseAddress!, maximumCount)
            if received >= 0 {
                count = received
            } else if errno == EINTR {
                continue
            } else {
                code = errno
            }
            return
        }
    }
    if code != 0 { throw MediaError(.system, "\(failure()): \(systemErrorText(code))") }
    return bytes
}

/// Writes all of `bytes` with `call` (`write(2)`, `send(2)`: given bytes
/// and their count, it returns how many it took or -1), looping over partial
/// writes and `EINTR`; any other failure throws an error that starts with
/// `failure`.
package func writeAll(
    _ bytes: [UInt8], failure: @autoclosure () -> String, _ call: (UnsafeRawPointer, Int) -> Int
) throws(MediaError) {
    var code: Int32 = 0
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = call(buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                code = errno
                return
            }
            offset += written
        }
    }
    if code != 0 { throw MediaError(.system, "\(failure()): \(systemErrorText(code))") }
}
