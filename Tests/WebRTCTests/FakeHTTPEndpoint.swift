import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A scripted HTTP endpoint on 127.0.0.1 for the WHIP client's tests: on its
/// own thread it reads each connection's request (the head, then the body
/// its Content-Length gives), records it, writes the bytes `respond`
/// returns for it and closes the connection. It stops in ``close()`` or
/// `deinit`.
final class FakeHTTPEndpoint: @unchecked Sendable {
    struct Request: Sendable {
        var method: String
        var target: String
        var head: String
        var body: String
        /// The value of the `Authorization` field, if any.
        var authorization: String? {
            head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("authorization:") }
                .map { String($0.dropFirst("authorization:".count)).trimmingCharacters(in: .whitespaces) }
        }
    }

    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var recorded: [Request] = []
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    /// Listens on an ephemeral port; `respond` gets the request's index
    /// (from 0) and the request, and returns the raw response.
    init(respond: @escaping @Sendable (Int, Request) -> String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound, listen(fd, 16) == 0 else {
            Glibc.close(fd)
            throw ProcessError("fake endpoint: cannot listen")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in
            serve(respond)
            finished.signal()
        }
        thread.start()
    }

    deinit { close() }

    /// The requests so far, in order.
    var requests: [Request] { lock.withLock { recorded } }

    /// Stops serving and closes the listening socket; safe to call twice.
    func close() {
        let wasStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        finished.wait()
        Glibc.close(listener)
    }

    private func serve(_ respond: @Sendable (Int, Request) -> String) {
        while !lock.withLock({ stopped }) {
            var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            guard Glibc.poll(&descriptors, 1, 20) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if let request = read(connection) {
                let index = lock.withLock {
                    recorded.append(request)
                    return recorded.count - 1
                }
                let bytes = Array(respond(index, request).utf8)
                _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            Glibc.close(connection)
        }
    }

    private func read(_ connection: Int32) -> Request? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        var headEnd: Int?
        var bodyLength = 0
        while headEnd.map({ bytes.count < $0 + bodyLength }) ?? true {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            bytes += buffer[0..<count]
            if headEnd == nil, let range = Data(bytes).range(of: Data("\r\n\r\n".utf8)) {
                headEnd = range.upperBound
                let head = String(decoding: bytes[0..<range.lowerBound], as: UTF8.self)
                bodyLength =
                    head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            }
        }
        let head = String(decoding: bytes[0..<(headEnd! - 4)], as: UTF8.self)
        let parts = head.split(separator: " ", maxSplits: 2)
        guard parts.count == 3 else { return nil }
        return Request(
            method: String(parts[0]), target: String(parts[1]), head: head,
            body: String(decoding: bytes[headEnd!...], as: UTF8.self))
    }
}
