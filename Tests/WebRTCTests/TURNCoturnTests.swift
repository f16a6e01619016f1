// The TURN client against coturn's turnserver on loopback: allocations over UDP
// and TCP, data both ways through the relay, permissions, a wrong password,
// a stale nonce, release, and the server-reflexive address over IPv4 and IPv6.
import Foundation
import MediaCore
import Sockets
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct TURNCoturnTests {
    static let credentials = TURNClient.Credentials(username: "u", password: "p")

    /// A datagram the peer socket gets within 2 s, and its source.
    static func peerReceive(_ socket: UDPSocket) throws -> ([UInt8], UDPAddress)? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        guard let (count, from) = try socket.receive(into: &buffer, timeout: .seconds(2)) else { return nil }
        return (Array(buffer[0..<count]), UDPAddress(host: from.addressBytes, port: from.port))
    }

    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) &+ seed }
    }

    /// Allocate, then datagrams both ways through the relay: Send/Data
    /// indications after CreatePermission, ChannelData after ChannelBind;
    /// odd sizes so that TCP's ChannelData padding is exercised.
    @Test(arguments: [TURNClient.Transport.udp, .tcp])
    func relaysBothWays(transport: TURNClient.Transport) throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let allocation = try TURNAllocation(server: server.address, transport: transport, credentials: Self.credentials)
        #expect(allocation.relayedAddress.host == [127, 0, 0, 1])
        #expect(allocation.relayedAddress.port != 0 && allocation.relayedAddress.port != server.port)
        #expect(allocation.lifetime > 0)
        if transport == .udp, let local = allocation.connection.localAddress {
            #expect(allocation.mappedAddress == UDPAddress(host: local.addressBytes, port: local.port))
        }
        let peerSocket = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        defer { peerSocket.close() }
        let peer = UDPAddress(host: peerSocket.localAddress.addressBytes, port: peerSocket.localAddress.port)
        let relayed = SocketAddress(numericHost: "127.0.0.1", port: allocation.relayedAddress.port)

        try allocation.createPermission(for: peer)
        for (index, size) in [1, 5, 999].enumerated() {
            let outbound = Self.bytes(size, seed: UInt8(index))
            try allocation.send(outbound, to: peer)
            let got = try Self.peerReceive(peerSocket)
            #expect(got?.0 == outbound, "Send indication, \(size) bytes")
            #expect(got?.1 == allocation.relayedAddress)
            let inbound = Self.bytes(size + 2, seed: UInt8(100 + index))
            try peerSocket.send(inbound, to: relayed)
            let back = try allocation.receive(timeout: .seconds(2))
            #expect(back?.peer == peer)
            #expect(back?.data == inbound, "Data indication, \(size + 2) bytes")
        }

        let channel = try allocation.bindChannel(to: peer)
        #expect(channel == 0x4000)
        for (index, size) in [3, 6, 1201].enumerated() {
            let outbound = Self.bytes(size, seed: UInt8(50 + index))
            try allocation.send(outbound, to: peer)
            #expect(try Self.peerReceive(peerSocket)?.0 == outbound, "ChannelData, \(size) bytes")
            let inbound = Self.bytes(size + 1, seed: UInt8(150 + index))
            try peerSocket.send(inbound, to: relayed)
            let back = try allocation.receive(timeout: .seconds(2))
            #expect(back?.peer == peer)
            #expect(back?.data == inbound, "ChannelData back, \(size + 1) bytes")
        }
        #expect(allocation.ignored.isEmpty, "\(allocation.ignored)")
        try allocation.release()
    }

    /// A peer without a permission is not relayed; after CreatePermission it is.
    @Test func dropsAPeerWithoutPermission() throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let allocation = try TURNAllocation(server: server.address, transport: .udp, credentials: Self.credentials)
        let peerSocket = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        defer { peerSocket.close() }
        let peer = UDPAddress(host: peerSocket.localAddress.addressBytes, port: peerSocket.localAddress.port)
        let relayed = SocketAddress(numericHost: "127.0.0.1", port: allocation.relayedAddress.port)

        try peerSocket.send(Array("before".utf8), to: relayed)
        #expect(try allocation.receive(timeout: .milliseconds(500)) == nil)
        #expect(throws: MediaError.self) { try allocation.send(Array("x".utf8), to: peer) }

        try allocation.createPermission(for: peer)
        try peerSocket.send(Array("after".utf8), to: relayed)
        let got = try allocation.receive(timeout: .seconds(2))
        #expect(got?.data == Array("after".utf8))
        #expect(try allocation.receive(timeout: .milliseconds(200)) == nil)
        try allocation.release()
    }

    /// A wrong password: the server's 401 Unauthorized is the error, over UDP and TCP.
    @Test(arguments: [TURNClient.Transport.udp, .tcp])
    func surfacesAWrongPassword(transport: TURNClient.Transport) throws {
        let server = try CoturnServer()
        defer { server.stop() }
        do {
            _ = try TURNAllocation(
                server: server.address, transport: transport, credentials: .init(username: "u", password: "wrong"))
            Issue.record("allocated with a wrong password")
        } catch {
            #expect(error.code == .connectionFailed)
            #expect(error.message.contains("TURN Allocate failed: 401 Unauthorized"), "\(error.message)")
        }
    }

    /// Refresh with lifetime 0 deletes the allocation: sends are refused
    /// here, and the server refuses CreatePermission once it has dropped it
    /// (RFC 8656 says 437 Allocation Mismatch; coturn 4.6.1 answers 400 Bad
    /// Request, within its 1-second tick; a Refresh before that would revive
    /// the allocation, CreatePermission does not).
    @Test func releaseDeletesTheAllocation() throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let allocation = try TURNAllocation(server: server.address, transport: .udp, credentials: Self.credentials)
        let peer = UDPAddress(host: [127, 0, 0, 1], port: 9)
        try allocation.createPermission(for: peer)
        // RFC 8656 7.2: the server takes the lifetime asked for, up to its maximum (3600 s here).
        #expect(try allocation.refresh(lifetime: 1800) == 1800)
        try allocation.release()
        #expect(allocation.lifetime == 0)
        #expect(throws: MediaError.self) { try allocation.send([1], to: peer) }
        var refusal: MediaError?
        for _ in 0..<20 where refusal == nil {
            usleep(500_000)
            do { try allocation.createPermission(for: peer) } catch { refusal = error }
        }
        let message = refusal?.message ?? "no refusal"
        #expect(
            message.contains("TURN CreatePermission for 127.0.0.1:9 failed: 437 ")
                || message.contains("TURN CreatePermission for 127.0.0.1:9 failed: 400 "), "\(message)")
        print("CreatePermission after release: \(message)")
    }

    /// With a nonce that lives 1 s (coturn counts whole seconds), a request
    /// 2.5 s later gets 438 Stale Nonce and goes again with the new nonce.
    @Test func renewsAStaleNonce() throws {
        let server = try CoturnServer(extraArguments: ["--stale-nonce=1"])
        defer { server.stop() }
        let allocation = try TURNAllocation(server: server.address, transport: .udp, credentials: Self.credentials)
        let before = allocation.connection.client.nonce
        usleep(2_500_000)
        try allocation.createPermission(for: UDPAddress(host: [127, 0, 0, 1], port: 9))
        #expect(allocation.connection.client.nonce != before)
        #expect(allocation.ignored.isEmpty)
        try allocation.release()
    }

    /// The server gone: over TCP the closed connection is the error, over
    /// UDP a server that never answers is a timeout, each naming the server.
    @Test func surfacesAServerThatIsGone() throws {
        let server = try CoturnServer()
        let allocation = try TURNAllocation(server: server.address, transport: .tcp, credentials: Self.credentials)
        server.stop()
        do {
            try allocation.createPermission(for: UDPAddress(host: [127, 0, 0, 1], port: 9))
            Issue.record("a request answered by a stopped server")
        } catch {
            #expect(error.code == .connectionFailed)
            // Either the send is reset or the read sees the end of the stream.
            #expect(error.message.hasPrefix("TURN server \(server.address) "), "\(error.message)")
            print("TCP server gone: \(error.message)")
        }

        let silent = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        defer { silent.close() }
        do {
            _ = try TURNAllocation(
                server: silent.localAddress, transport: .udp, credentials: Self.credentials,
                timeout: .milliseconds(800))
            Issue.record("allocated on a socket that never answers")
        } catch {
            #expect(error.code == .timedOut)
            #expect(error.message.hasPrefix("TURN Allocate to \(silent.localAddress): no answer"), "\(error.message)")
        }
    }

    /// STUN Binding to coturn: the server-reflexive address is the socket's
    /// own address on loopback, IPv4 and IPv6.
    @Test(arguments: ["127.0.0.1", "::1"])
    func findsTheServerReflexiveAddress(host: String) throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let target = host == "::1" ? server.ipv6Address : server.address
        let connection = try TURNConnection(
            server: target, transport: .udp, credentials: nil, localHost: host, timeout: .seconds(5))
        defer { connection.close() }
        connection.client.bind(at: connection.now)
        let mapped = try connection.wait(for: .binding, timeout: .seconds(5)) {
            if case .mapped(let address) = $0 { return address }
            return nil
        }
        let local = try #require(connection.localAddress)
        #expect(mapped == UDPAddress(host: local.addressBytes, port: local.port))
        #expect(mapped.host.count == (host == "::1" ? 16 : 4))
        let reflexive = try TURNAllocation.serverReflexiveAddress(server: target)
        #expect(reflexive.host == local.addressBytes)
    }

    /// The time from Allocate to the relayed address on loopback (the 401
    /// round trip included), p50 of 20; printed, not asserted.
    @Test func measuresAllocateTime() throws {
        let server = try CoturnServer()
        defer { server.stop() }
        var times: [Double] = []
        for _ in 0..<20 {
            let start = ContinuousClock.now
            let allocation = try TURNAllocation(server: server.address, transport: .udp, credentials: Self.credentials)
            times.append((ContinuousClock.now - start).turnSeconds * 1000)
            try allocation.release()
        }
        times.sort()
        #expect(times.count == 20)
        print(
            String(
                format: "TURN Allocate to relayed address on loopback (UDP): p50 %.2f ms, max %.2f ms over 20",
                times[9], times[19]))
    }
}
