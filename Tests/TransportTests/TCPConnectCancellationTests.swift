import Foundation
import MediaCore
import MediaIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `tcp://` receiver whose connection cannot complete (the server's
/// accept queue is full, so its SYN goes unanswered) ends with nil, no
/// error, once `cancel()` is called from another thread: the connection
/// is made by the first `next()`, not by the initializer.
struct TCPConnectCancellationTests {
    /// A loopback TCP listener with an accept queue of one, filled by a
    /// connection that is never accepted; its port and both sockets.
    static func fullListener() throws -> (port: Int, sockets: [Int32]) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 0) == 0
                    && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else { throw MediaError(.system, "cannot listen on 127.0.0.1") }
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) == 0 }
        }
        guard connected else { throw MediaError(.system, "cannot fill the accept queue") }
        return (Int(UInt16(bigEndian: address.sin_port)), [listener, filler])
    }

    @Test func aHangingConnectionEndsOnCancel() throws {
        let (port, sockets) = try Self.fullListener()
        defer { for fd in sockets { close(fd) } }
        let receiver = try MediaStreamReceiver(url: "tcp://127.0.0.1:\(port)")
        let cancellation = receiver.cancellation
        let reading = Reading(receiver)
        Thread { reading.run() }.start()
        #expect(reading.began.wait(timeout: .now() + 10) == .success)
        Thread.sleep(forTimeInterval: 0.5)
        let cancelledAt = ContinuousClock.now
        cancellation.cancel()
        #expect(reading.ended.wait(timeout: .now() + 15) == .success)
        let (outcome, endedAt) = try #require(reading.outcome.withLock { $0 })
        #expect(outcome == "nil")
        #expect(cancelledAt.duration(to: endedAt) < .seconds(5))
        print("tcp:// connection waiting, cancel(): cancel to end \(cancelledAt.duration(to: endedAt))")
    }
}
