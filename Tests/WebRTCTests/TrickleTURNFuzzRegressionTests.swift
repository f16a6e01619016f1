// The TrickleFragment and TURN fuzz targets' seeds and inputs replayed, and what the seeds from RFC 9725 and
// coturn 4.6.1 (captured on loopback) must give.
import Foundation
import MediaCore
import TestSupport
import Testing
import WebRTC

struct TrickleTURNFuzzRegressionTests {
    /// The body of a trickle input: a `PATCH` request's body, else the input.
    static func body(_ bytes: [UInt8]) throws -> [UInt8] {
        guard bytes.starts(with: Array("PATCH ".utf8)) else { return bytes }
        guard case .complete(let request) = WHEPRequest.parse(bytes) else { throw MediaError(.invalidData, "no PATCH") }
        return request.body
    }

    /// The server's messages in a TURN input (Fuzz/TURN/Harness.swift): after the flags byte, records of an
    /// operation byte, a 16-bit length and the bytes.
    static func messages(_ bytes: [UInt8]) -> [(operation: UInt8, bytes: [UInt8])] {
        var records: [(UInt8, [UInt8])] = []
        var index = 1
        while index + 3 <= bytes.count {
            let length = Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            records.append((bytes[index], Array(bytes[(index + 3)..<min(bytes.count, index + 3 + length)])))
            index += 3 + length
        }
        return records
    }

    /// Every trickle input that parses writes a fragment that reads back the same.
    @Test func replaysTheTrickleFragmentInputs() throws {
        let inputs = WebRTCFuzzRegressionTests.files("TrickleFragment")
        #expect(inputs.count >= 4)
        for url in inputs {
            let text = String(decoding: try Self.body(Array(try Data(contentsOf: url))), as: UTF8.self)
            guard var fragment = try? TrickleFragment(parsing: text) else { continue }
            fragment.candidatesLeftOut = 0
            #expect(try TrickleFragment(parsing: fragment.text) == fragment, "\(url.lastPathComponent)")
        }
    }

    /// A CR inside a line (RFC 8866 9 allows none in a value) is refused: read as part of the value, it could not
    /// be written back (the mid "0\r" came back as "0").
    @Test(arguments: ["a=mid:0\r\r\r\n", "a=ice-ufrag:ab\rc\r\na=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1\r\n"])
    func refusesACRInsideALine(text: String) throws {
        #expect(throws: MediaError.self) { try TrickleFragment(parsing: text) }
        let fixture = TestPaths.fixtures.appendingPathComponent("fuzz/TrickleFragment/cr-inside-a-value")
        let error = #expect(throws: MediaError.self) {
            try TrickleFragment(parsing: String(decoding: try Data(contentsOf: fixture), as: UTF8.self))
        }
        #expect(error?.code == .invalidData)
        #expect(error?.message.contains("CR inside a line") == true)
        // A CR LF line end, and a CR before it, stay accepted.
        #expect(try TrickleFragment(parsing: "a=mid:0\r\r\na=mid:1\r\n").mids == ["0", "1"])
    }

    /// A PATCH laid out as RFC 9725 4.3's trickle example (two media sections, UDP and TCP host candidates on
    /// documentation addresses, one IPv6): If-Match "xyzzy", the three UDP candidates of component 1 read, the two
    /// TCP ones left out, both mids, the credentials and a=end-of-candidates.
    @Test func readsTheRFC9725Patch() throws {
        let bytes = Array(try WebRTCFuzzRegressionTests.seed("TrickleFragment", "rfc9725-patch.http"))
        guard case .complete(let request) = WHEPRequest.parse(bytes) else { throw MediaError(.invalidData, "") }
        #expect(request.fields["if-match"] == "\"xyzzy\"")
        #expect(request.fields["content-type"] == TrickleFragment.mediaType)
        let fragment = try TrickleFragment(parsing: String(decoding: request.body, as: UTF8.self))
        #expect(
            fragment.candidates == [
                UDPAddress(host: [192, 0, 2, 1], port: 61764), UDPAddress(host: [198, 51, 100, 2], port: 61765),
                UDPAddress(host: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1], port: 61764),
            ])
        #expect(fragment.candidatesLeftOut == 2)
        #expect(fragment.mids == ["0", "1"])
        #expect(fragment.usernameFragment == "EsAw" && fragment.password == "P2uYro0UCOQ4zxjKXaWCBui1")
        #expect(fragment.endOfCandidates && !fragment.iceLite)
    }

    /// Every TURN input's messages, each as the answer to a client's Allocate (its transaction ID put in):
    /// nothing traps, what the client sends parses, and an allocation event comes with the allocation.
    @Test func replaysTheTURNInputs() throws {
        let inputs = WebRTCFuzzRegressionTests.files("TURN")
        #expect(inputs.count >= 6)
        for url in inputs {
            for (_, message) in Self.messages(Array(try Data(contentsOf: url))) where !message.isEmpty {
                var client = TURNClient(transport: .udp, credentials: .init(username: "u", password: "p"))
                client.allocate(at: 0)
                let request = try STUNMessage.parse(client.takeOutgoing()[0])
                var answer = message
                if answer.count >= 20 { answer.replaceSubrange(8..<20, with: request.transactionID) }
                client.receive(answer, at: 0.1)
                for event in client.takeEvents() {
                    if case .allocated(let relayed, _, _) = event { #expect(client.relayedAddress == relayed) }
                }
                for sent in client.takeOutgoing() { #expect((try? STUNMessage.parse(sent)) != nil) }
                var framer = TURNStreamFramer()
                framer.append(message)
                while (try? framer.next()) != nil {}
            }
        }
    }

    /// coturn 4.6.1's answers to an Allocate (turnserver -n --user=u:p --realm=r --lt-cred-mech on 127.0.0.1):
    /// its 401 gives the realm and nonce, and the client's second Allocate carries them and a MESSAGE-INTEGRITY
    /// that verifies with MD5("u:r:p") = 44add22b… (Python's hashlib); its 438 gives a new nonce, sent with the
    /// third. coturn's success response verifies with that key and holds XOR-RELAYED-ADDRESS 127.0.0.1:53923,
    /// XOR-MAPPED-ADDRESS 127.0.0.1:34233 and LIFETIME 600 (the bytes XORed with the magic cookie by hand).
    @Test func followsCoturnsAnswers() throws {
        let records = Self.messages(Array(try WebRTCFuzzRegressionTests.seed("TURN", "udp-coturn-stale-nonce")))
        #expect(records.count == 3)
        let (unauthorized, stale, success) = (records[0].bytes, records[1].bytes, records[2].bytes)
        let key: [UInt8] = [
            0x44, 0xad, 0xd2, 0x2b, 0x6f, 0x31, 0x79, 0xb7, 0x51, 0xea, 0xfd, 0x68, 0xee, 0x37, 0x0f, 0x7d,
        ]
        #expect(stunLongTermKey(username: "u", realm: "r", password: "p") == key)
        var client = TURNClient(transport: .udp, credentials: .init(username: "u", password: "p"))
        client.allocate(at: 0)
        func answer(_ bytes: [UInt8]) throws {
            var answer = bytes
            answer.replaceSubrange(8..<20, with: try STUNMessage.parse(client.takeOutgoing().last!).transactionID)
            client.receive(answer, at: 0.1)
        }
        try answer(unauthorized)
        #expect(client.realm == "r" && client.nonce == Array("70a823117b18e7f4".utf8))
        let second = try STUNMessage.parse(client.takeOutgoing()[0])
        #expect(second.verifyIntegrity(key: key))
        #expect(second.username == "u" && second.attribute(0x0015) == Array("70a823117b18e7f4".utf8))
        client.allocate(at: 0.2)  // a fresh transaction for the 438, from coturn on another 5-tuple
        try answer(stale)
        let third = try STUNMessage.parse(client.takeOutgoing()[0])
        #expect(third.attribute(0x0015) == Array("8bb7dffdee306aee".utf8) && third.verifyIntegrity(key: key))
        let allocated = try STUNMessage.parse(success)
        #expect(allocated.verifyIntegrity(key: key))
        #expect(
            allocated.xorAddress(TURNAttributeType.xorRelayedAddress) == UDPAddress(host: [127, 0, 0, 1], port: 53923))
        #expect(allocated.xorMappedAddress == UDPAddress(host: [127, 0, 0, 1], port: 34233))
        #expect(allocated.uint32(TURNAttributeType.lifetime) == 600)
        #expect(try STUNMessage.parse(unauthorized).errorCode()?.code == 401)
        #expect(try STUNMessage.parse(stale).errorCode() == STUNErrorCode(code: 438, reason: "Wrong nonce"))
    }
}
