import Foundation
import TestSupport

@testable import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

// A test client of WHEPServer's HTTP port from a chosen loopback source
// address (127.0.0.x), so that per-address bounds can be tried from one host.
enum LoopbackHTTPClient {
    struct Response {
        var status: Int
        var head: String
        var body: String
        /// The value of header field `name` (case-insensitive), if present.
        func field(_ name: String) -> String? {
            for line in head.components(separatedBy: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2 && parts[0].lowercased() == name.lowercased() {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    /// A blocking TCP socket bound to `source` (port 0) and connected to
    /// 127.0.0.1:`port`.
    static func connect(to port: Int, from source: String = "127.0.0.1") throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, connected == 0 else {
            close(fd)
            throw ProcessError("connect from \(source) failed: \(String(cString: strerror(errno)))")
        }
        return fd
    }

    static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Whether the server closed `fd` (a read gives end of file or a reset),
    /// after reading whatever it sent.
    static func isClosed(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            guard Glibc.poll(&descriptors, 1, 0) > 0 else { return false }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return true }
        }
    }

    /// Sends `request` from `source` while polling `server`, and reads the
    /// response to its end (the server closes every connection).
    static func exchange(_ server: WHEPServer, _ request: String, from source: String = "127.0.0.1") throws
        -> Response
    {
        let fd = try connect(to: server.httpPort, from: source)
        defer { close(fd) }
        send(fd, request)
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        for _ in 0..<200 {
            try server.poll(timeoutMilliseconds: 10)
            var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            guard Glibc.poll(&descriptors, 1, 0) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        return parse(response)
    }

    /// Sends `request` to a server in another process and reads the response
    /// until the server closes (at most about 5 s).
    static func fetch(port: Int, _ request: String, from source: String = "127.0.0.1") throws -> Response {
        let fd = try connect(to: port, from: source)
        defer { close(fd) }
        send(fd, request)
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        for _ in 0..<100 {
            var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            guard Glibc.poll(&descriptors, 1, 50) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        return parse(response)
    }

    static func parse(_ response: [UInt8]) -> Response {
        let text = String(decoding: response, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let status = Int(parts[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        return Response(status: status, head: parts[0], body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// A request with `fields` (each `Name: value`) and `body`.
    static func request(_ method: String, _ path: String, fields: [String] = [], body: String = "") -> String {
        let length = body.isEmpty ? [] : ["Content-Length: \(body.utf8.count)"]
        return ([method + " " + path + " HTTP/1.1", "Host: 127.0.0.1"] + fields + length).joined(separator: "\r\n")
            + "\r\n\r\n" + body
    }

    /// A POST of `sdp` to `path` with `fields`.
    static func offer(_ path: String = "/whep", _ sdp: String = Offers.browser(), fields: [String] = []) -> String {
        request("POST", path, fields: ["Content-Type: application/sdp"] + fields, body: sdp)
    }
}
