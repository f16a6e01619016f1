import MediaCore
import Testing

@testable import WebRTC

struct ICELiteAgentTests {
    static let peer = UDPAddress(host: [127, 0, 0, 1], port: 50000)
    static let password = "0123456789abcdefghijklmn"

    static func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }

    static func request(
        username: String = "lite:full", key: String = password, controlling: Bool = true, nominate: Bool = false,
        fingerprint: Bool = true
    ) -> [UInt8] {
        var message = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .request,
            transactionID: (0..<12).map { _ in UInt8.random(in: 0...255) })
        message.attributes = [.username(username), .uint32(STUNAttributeType.priority, 0x6E00_01FF)]
        if controlling { message.attributes.append(.uint64(STUNAttributeType.iceControlling, 42)) }
        if nominate { message.attributes.append(.init(type: STUNAttributeType.useCandidate, value: [])) }
        return message.encoded(integrityKey: Array(key.utf8), fingerprint: fingerprint)
    }

    static func agent() -> ICELiteAgent {
        var agent = ICELiteAgent(localUsernameFragment: "lite", localPassword: password)
        agent.remoteUsernameFragment = "full"
        return agent
    }

    @Test func answersAValidCheckWithTheMappedAddress() throws {
        var agent = Self.agent()
        let request = Self.request()
        guard case .respond(let bytes) = agent.receive(request, from: Self.peer, at: .zero) else {
            Issue.record("a valid check was not answered")
            return
        }
        let response = try STUNMessage.parse(bytes)
        #expect(response.messageClass == .successResponse)
        #expect(response.transactionID == Array(request[8..<20]))
        #expect(response.xorMappedAddress == Self.peer)
        #expect(response.verifyIntegrity(key: Array(Self.password.utf8)))
        #expect(response.verifyFingerprint())
        #expect(agent.isValidated(Self.peer))
        #expect(agent.selectedAddress == nil)
    }

    @Test(arguments: [
        (request(key: "a wrong password of 24ch"), "MESSAGE-INTEGRITY"),
        (request(username: "other:full"), "another username fragment"),
        (request(username: "lite:someone"), "another peer"),
        (request(controlling: false), "ICE-CONTROLLING"),
        (request(fingerprint: false), "FINGERPRINT"),
        (RFC5769.request, "username fragment"),
        ([0, 1, 0, 4, 0x21, 0x12, 0xA4, 0x42] + [UInt8](repeating: 0, count: 12), "malformed"),
    ])
    func ignoresChecksWithoutValidCredentials(datagram: [UInt8], reason: String) {
        var agent = Self.agent()
        let outcome = agent.receive(datagram, from: Self.peer, at: .zero)
        guard case .ignored(let text) = outcome else {
            Issue.record("answered a check that should be ignored")
            return
        }
        #expect(text.contains(reason), "\(text)")
        #expect(!agent.isValidated(Self.peer))
        #expect(agent.requestsIgnored == 1)
    }

    /// A Binding indication (type 0x0011, RFC 8489 5; the keepalive of RFC 8445 11, as libnice sends it) is
    /// neither answered nor counted as an ignored request.
    @Test func aBindingIndicationIsAKeepaliveNotARefusal() {
        var agent = Self.agent()
        let indication: [UInt8] = [0x00, 0x11, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42] + (1...12).map { UInt8($0) }
        #expect(agent.receive(indication, from: Self.peer, at: .zero) == .keepalive)
        #expect(agent.requestsIgnored == 0)
        #expect(agent.requestsAnswered == 0)
    }

    @Test func useCandidateNominatesTheSource() {
        var agent = Self.agent()
        let other = UDPAddress(host: [127, 0, 0, 1], port: 50002)
        _ = agent.receive(Self.request(), from: other, at: .zero)
        #expect(agent.destination == other)
        _ = agent.receive(Self.request(nominate: true), from: Self.peer, at: Self.seconds(1))
        #expect(agent.selectedAddress == Self.peer)
        _ = agent.receive(Self.request(), from: other, at: Self.seconds(2))
        #expect(agent.destination == Self.peer)
    }

    /// RFC 7675 on a fake clock: consent lasts 30 s from the last valid check
    /// on the selected pair; checks on other addresses do not refresh it.
    @Test func consentRunsOutThirtySecondsAfterTheLastCheck() {
        var agent = Self.agent()
        #expect(!agent.consentExpired(at: Self.seconds(1000)))
        _ = agent.receive(Self.request(nominate: true), from: Self.peer, at: Self.seconds(10))
        #expect(!agent.consentExpired(at: Self.seconds(40)))
        #expect(agent.consentExpired(at: MediaTime(value: 40_001, timescale: 1000)))
        _ = agent.receive(Self.request(), from: Self.peer, at: Self.seconds(35))
        #expect(!agent.consentExpired(at: Self.seconds(65)))
        _ = agent.receive(Self.request(), from: UDPAddress(host: [127, 0, 0, 1], port: 9), at: Self.seconds(60))
        #expect(agent.consentExpired(at: MediaTime(value: 65_001, timescale: 1000)))
        // A check with a wrong password does not refresh consent either.
        _ = agent.receive(Self.request(key: "a wrong password of 24ch"), from: Self.peer, at: Self.seconds(64))
        #expect(agent.consentExpired(at: Self.seconds(66)))
    }
}

struct PacketDemultiplexerTests {
    /// RFC 7983's ranges, every first byte.
    @Test func classifiesEveryFirstByte() {
        for first in 0...255 {
            let kind = WebRTCPacketKind(classifying: [UInt8(first), 96, 0, 0])
            let expected: WebRTCPacketKind
            switch first {
            case 0...3: expected = .stun
            case 20...63: expected = .dtls
            case 128...191: expected = .rtp
            default: expected = .unknown
            }
            #expect(kind == expected, "first byte \(first)")
        }
        for packetType in 192...223 { #expect(WebRTCPacketKind(classifying: [0x80, UInt8(packetType)]) == .rtcp) }
        #expect(WebRTCPacketKind(classifying: [0x80, 224]) == .rtp)
        #expect(WebRTCPacketKind(classifying: []) == .unknown)
        #expect(WebRTCPacketKind(classifying: [0x80]) == .unknown)
    }

    /// The one-byte extension block, read back by RTPPayload's header parser.
    @Test func addsOneByteHeaderExtensions() throws {
        let packet: [UInt8] = [0x80, 0xE0, 0x12, 0x34, 0, 0, 0x10, 0, 0xCA, 0xFE, 0xBA, 0xBE, 0x65, 1, 2, 3]
        let capture = RTPHeaderExtensionWriter.absoluteCaptureTime(ntpSeconds: 3_913_056_000.5)
        #expect(capture == [0xE9, 0x3C, 0x7F, 0x00, 0x80, 0, 0, 0])
        let extended = RTPHeaderExtensionWriter.adding([(6, [0, 0, 0]), (3, capture)], to: packet)
        #expect(extended[0] == 0x90)
        #expect(Array(extended[12..<16]) == [0xBE, 0xDE, 0, 4])
        #expect(Array(extended[16..<20]) == [0x62, 0, 0, 0])
        #expect(extended[20] == 0x37)
        #expect(Array(extended[21..<29]) == capture)
        #expect(Array(extended[29..<32]) == [0, 0, 0])
        #expect(Array(extended[32...]) == [0x65, 1, 2, 3])
        #expect(RTPHeaderExtensionWriter.adding([(6, [0, 0, 0])], to: extended) == extended)
    }
}
