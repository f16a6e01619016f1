import MediaCore
import Sockets
import Testing

/// TCP through Sockets over 127.0.0.1 and ::1 (ephemeral ports): exact bytes
/// both ways, and deadlines that expire with `.timedOut`.
struct TCPLoopbackTests {
    @Test(arguments: ["127.0.0.1", "::1"])
    func bytesGoBothWaysExactly(_ host: String) throws {
        let listener = try TCPListener(host: host, port: 0)
        #expect(listener.port != 0)
        #expect(listener.localAddress.host == host)
        let client = try TCPConnection.connect(host: host, port: listener.port, timeout: .seconds(5))
        let server = try #require(try listener.accept(timeout: .seconds(5)))
        #expect(server.peer.hasPrefix(host.contains(":") ? "[\(host)]:" : "\(host):"))
        client.idleTimeout = .seconds(5)
        server.idleTimeout = .seconds(5)

        let request = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        try client.write(request)
        client.shutdownSending()
        var got: [UInt8] = []
        while true {
            let chunk = try server.read(upTo: 8192)
            if chunk.isEmpty { break }
            got += chunk
        }
        #expect(got == request)

        let reply = Array("reply from \(host)".utf8)
        try server.write(reply)
        server.close()
        var answer: [UInt8] = []
        while true {
            let chunk = try client.read(upTo: 4)
            if chunk.isEmpty { break }
            answer += chunk
        }
        #expect(answer == reply)
    }

    @Test func acceptWithNobodyWaitingGivesNil() throws {
        let listener = try TCPListener(host: "::1", port: 0)
        #expect(try listener.accept(timeout: .zero) == nil)
    }

    /// The listener never accepts; the kernel completes the connection from
    /// its backlog, and nothing is ever sent.
    @Test(arguments: ["127.0.0.1", "::1"])
    func aReadDeadlineThatExpiresIsTimedOut(_ host: String) throws {
        let listener = try TCPListener(host: host, port: 0)
        let client = try TCPConnection.connect(host: host, port: listener.port, timeout: .seconds(5))
        client.idleTimeout = .milliseconds(200)
        let error = #expect(throws: MediaError.self) { try client.read(upTo: 16) }
        #expect(error?.code == .timedOut)
        #expect(error?.message.hasSuffix("sent nothing for 0.2 s; giving up") == true, "\(error?.message ?? "")")
    }

    /// A listener with backlog 0 whose queue is full: a further SYN is not
    /// answered, so the connect waits for its deadline.
    @Test func aConnectDeadlineThatExpiresIsTimedOut() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0, backlog: 0)
        var fillers: [TCPConnection] = []
        defer { fillers.forEach { $0.close() } }
        var timedOut: MediaError?
        // The first connection fills the accept queue; a later one waits.
        for _ in 0..<4 where timedOut == nil {
            do {
                fillers.append(
                    try TCPConnection.connect(host: "127.0.0.1", port: listener.port, timeout: .milliseconds(300)))
            } catch {
                timedOut = error
            }
        }
        let error = try #require(timedOut)
        #expect(error.code == .timedOut)
        #expect(error.message == "cannot connect to 127.0.0.1:\(listener.port): no answer in 0.3 s")
        #expect(!fillers.isEmpty)
    }

    @Test func aStopRequestEndsAWaitingRead() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        let client = try TCPConnection.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        client.idleTimeout = .seconds(60)
        var asked = 0
        client.stopRequested = {
            asked += 1
            return asked > 2
        }
        #expect(try client.read(upTo: 16) == [])
        #expect(asked == 3)
    }

    @Test func badListenAddressesAreInvalidArguments() {
        let host = #expect(throws: MediaError.self) { try TCPListener(host: "localhost", port: 0) }
        #expect(host?.code == .invalidArgument)
        #expect(host?.message == "listen address localhost: expected a numeric IPv4 or IPv6 address")
        let port = #expect(throws: MediaError.self) { try TCPListener(host: "127.0.0.1", port: 70_000) }
        #expect(port?.code == .invalidArgument)
    }

    @Test func aRefusedConnectionIsASystemError() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        let port = listener.port
        listener.close()
        let error = #expect(throws: MediaError.self) {
            try TCPConnection.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        }
        #expect(error?.code == .system)
        #expect(error?.message.hasPrefix("cannot connect to 127.0.0.1:\(port): ") == true)
    }
}
