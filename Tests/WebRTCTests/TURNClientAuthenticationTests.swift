// The sans-I/O TURN client's long-term credentials: 401 and 438 answered,
// responses verified, a second 401 surfaced; server answers written by hand.
import MediaCore
import Testing

@testable import WebRTC

struct TURNClientAuthenticationTests {
    /// `printf 'u:r:p' | md5sum`.
    static let key = hexBytes("44add22b6f3179b751eafd68ee370f7d")
    static let relayed = UDPAddress(host: [192, 0, 2, 15], port: 50000)

    static func errorResponse(to request: STUNMessage, code: Int, reason: String, nonce: String?) -> [UInt8] {
        var response = STUNMessage(
            method: request.method, messageClass: .errorResponse, transactionID: request.transactionID)
        // ERROR-CODE per RFC 8489 14.8: class in the third byte, number in the fourth.
        response.attributes.append(
            .init(
                type: STUNAttributeType.errorCode,
                value: [0, 0, UInt8(code / 100), UInt8(code % 100)] + Array(reason.utf8)))
        response.attributes.append(.init(type: 0x0014, value: Array("r".utf8)))
        if let nonce { response.attributes.append(.init(type: 0x0015, value: Array(nonce.utf8))) }
        return response.encoded()
    }

    static func allocateSuccess(to request: STUNMessage, key: [UInt8]) -> [UInt8] {
        var response = STUNMessage(
            method: request.method, messageClass: .successResponse, transactionID: request.transactionID)
        response.attributes = [
            .xorAddress(0x0016, relayed, transactionID: request.transactionID),
            .uint32(0x000D, 600),
        ]
        return response.encoded(integrityKey: key)
    }

    static func next(_ client: inout TURNClient) throws -> STUNMessage {
        let outgoing = client.takeOutgoing()
        #expect(outgoing.count == 1)
        return try STUNMessage.parse(outgoing[0])
    }

    @Test func answers401And438ThenAllocates() throws {
        var client = TURNClient(transport: .udp, credentials: .init(username: "u", password: "p"))
        client.allocate(at: 0)
        let first = try Self.next(&client)
        #expect(first.method == 0x003 && first.messageClass == .request)
        #expect(first.attribute(0x0019) == [17, 0, 0, 0])
        #expect(first.integrityOffset == nil && first.username == nil)

        client.receive(Self.errorResponse(to: first, code: 401, reason: "Unauthorized", nonce: "n1"), at: 0.01)
        let second = try Self.next(&client)
        #expect(second.transactionID != first.transactionID)
        #expect(second.username == "u")
        #expect(second.attribute(0x0014) == Array("r".utf8))
        #expect(second.attribute(0x0015) == Array("n1".utf8))
        #expect(second.attribute(0x0019) == [17, 0, 0, 0])
        #expect(second.verifyIntegrity(key: Self.key))

        client.receive(Self.errorResponse(to: second, code: 438, reason: "Stale Nonce", nonce: "n2"), at: 0.02)
        let third = try Self.next(&client)
        #expect(third.attribute(0x0015) == Array("n2".utf8))
        #expect(third.verifyIntegrity(key: Self.key))
        #expect(client.takeEvents().isEmpty)

        // A success that does not verify is ignored; the one that does is taken.
        client.receive(Self.allocateSuccess(to: third, key: Array("wrong key".utf8)), at: 0.03)
        let ignored = client.takeEvents()
        #expect(ignored.count == 1)
        if case .ignored(let reason) = ignored.first { #expect(reason.contains("MESSAGE-INTEGRITY")) }
        client.receive(Self.allocateSuccess(to: third, key: Self.key), at: 0.04)
        #expect(client.takeEvents() == [.allocated(relayed: Self.relayed, mapped: nil, lifetime: 600)])
        #expect(client.relayedAddress == Self.relayed)
        #expect(!client.hasOutstandingRequests)
    }

    @Test func surfacesASecond401() throws {
        var client = TURNClient(transport: .udp, credentials: .init(username: "u", password: "wrong"))
        client.allocate(at: 0)
        let first = try Self.next(&client)
        client.receive(Self.errorResponse(to: first, code: 401, reason: "Unauthorized", nonce: "n1"), at: 0)
        let second = try Self.next(&client)
        client.receive(Self.errorResponse(to: second, code: 401, reason: "Unauthorized", nonce: "n1"), at: 0)
        let events = client.takeEvents()
        #expect(events.count == 1)
        guard case .failed(.allocate, let error) = events.first else {
            Issue.record("no failure: \(events)")
            return
        }
        #expect(error.errorCode == STUNErrorCode(code: 401, reason: "Unauthorized"))
        #expect("\(error)".hasPrefix("TURN Allocate failed: 401 Unauthorized"), "\(error)")
        #expect(client.takeOutgoing().isEmpty && !client.hasOutstandingRequests)
    }

    /// Without a permission nothing is sent; with one a Send indication
    /// carries the peer and the data; with a channel, ChannelData (padded over TCP).
    @Test(arguments: [TURNClient.Transport.udp, .tcp])
    func sendsIndicationsThenChannelData(transport: TURNClient.Transport) throws {
        var client = TURNClient(transport: transport, credentials: .init(username: "u", password: "p"))
        let peer = UDPAddress(host: [192, 0, 2, 20], port: 4000)
        #expect(throws: MediaError.self) { try client.send([1], to: peer) }
        client.allocate(at: 0)
        let first = try Self.next(&client)
        client.receive(Self.errorResponse(to: first, code: 401, reason: "Unauthorized", nonce: "n"), at: 0)
        let authenticated = try Self.next(&client)
        client.receive(Self.allocateSuccess(to: authenticated, key: Self.key), at: 0)
        _ = client.takeEvents()
        #expect(throws: MediaError.self) { try client.send([1], to: peer) }

        client.createPermission(for: peer, at: 0)
        let permission = try Self.next(&client)
        #expect(permission.xorAddress(0x0012) == peer && permission.verifyIntegrity(key: Self.key))
        let granted = STUNMessage(
            method: 0x008, messageClass: .successResponse, transactionID: permission.transactionID)
        client.receive(granted.encoded(integrityKey: Self.key), at: 0)
        #expect(client.takeEvents() == [.permissionCreated(peer)])

        try client.send([1, 2, 3], to: peer)
        let indication = try Self.next(&client)
        #expect(indication.method == 0x006 && indication.messageClass == .indication)
        #expect(indication.xorAddress(0x0012) == peer && indication.attribute(0x0013) == [1, 2, 3])

        let channel = try client.bindChannel(to: peer, at: 0)
        #expect(channel == 0x4000)
        let bind = try Self.next(&client)
        #expect(bind.attribute(0x000C) == [0x40, 0x00, 0, 0])
        let bound = STUNMessage(method: 0x009, messageClass: .successResponse, transactionID: bind.transactionID)
        client.receive(bound.encoded(integrityKey: Self.key), at: 0)
        #expect(client.takeEvents() == [.channelBound(peer, channel: 0x4000)])
        try client.send([1, 2, 3], to: peer)
        #expect(client.takeOutgoing() == [[0x40, 0x00, 0x00, 0x03, 1, 2, 3] + (transport == .tcp ? [0] : [])])
        client.receive([0x40, 0x00, 0x00, 0x02, 7, 8, 0, 0], at: 0)
        client.receive([0x40, 0x01, 0x00, 0x01, 7, 0, 0, 0], at: 0)
        let events = client.takeEvents()
        #expect(events.first == .data(from: peer, [7, 8]))
        #expect(events.count == 2)
    }
}
