import MediaCore
import WebRTC

/// libFuzzer entry: the input as one STUN datagram, parsed and handed to an
/// ICE-lite agent. What parses writes bytes that parse again to the same
/// method, class, transaction ID and attributes; an answered request gets
/// a response that parses, verifies with the agent's password and maps
/// the source address. The same bytes go to a TURN client waiting for its
/// Allocate (as the response to it, its transaction ID put in) and through
/// the TCP framer and the ChannelData parser.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSTUN(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = WebRTCPacketKind(classifying: bytes)
    if let message = try? STUNMessage.parse(bytes) {
        _ = message.verifyFingerprint()
        _ = message.verifyIntegrity(key: Array("fuzz".utf8))
        _ = message.xorMappedAddress
        let written = message.encoded()
        guard let again = try? STUNMessage.parse(written) else { fatalError("our own STUN does not parse") }
        let kept = message.attributes.filter { $0.type != 0x0008 && $0.type != 0x8028 }
        guard again.method == message.method, again.messageClass == message.messageClass,
            again.transactionID == message.transactionID, again.attributes == kept
        else { fatalError("the STUN round trip changed the message") }
    }
    let source = UDPAddress(host: [127, 0, 0, 1], port: 5000)
    var agent = ICELiteAgent(localUsernameFragment: "lite", localPassword: "0123456789abcdefghijklmn")
    if case .respond(let response) = agent.receive(bytes, from: source, at: .zero) {
        guard let parsed = try? STUNMessage.parse(response), parsed.verifyFingerprint(),
            parsed.verifyIntegrity(key: Array("0123456789abcdefghijklmn".utf8)), parsed.xorMappedAddress == source
        else { fatalError("a binding response that does not verify") }
    }
    fuzzTURN(bytes)
    return 0
}

/// A TURN client with an Allocate outstanding reads the input as the
/// server's answer; whatever it makes of it, a second Allocate still goes
/// out. ChannelData that parses writes back to the same bytes.
func fuzzTURN(_ bytes: [UInt8]) {
    var client = TURNClient(transport: .udp, credentials: .init(username: "u", password: "p"))
    client.allocate(at: 0)
    let request = client.takeOutgoing()[0]
    var answer = bytes
    if answer.count >= 20 { answer.replaceSubrange(8..<20, with: request[8..<20]) }
    client.receive(answer, at: 0.1)
    for event in client.takeEvents() {
        if case .allocated(let relayed, _, _) = event, client.relayedAddress != relayed {
            fatalError("an allocation event without the allocation")
        }
    }
    for message in client.takeOutgoing() {
        guard (try? STUNMessage.parse(message)) != nil else { fatalError("a TURN request that does not parse") }
    }
    client.poll(at: 100)
    _ = client.takeEvents()
    _ = client.takeOutgoing()
    client.allocate(at: 100)
    guard client.takeOutgoing().count == 1 else { fatalError("no Allocate after the fuzzed answer") }

    var framer = TURNStreamFramer()
    framer.append(bytes)
    var consumed = 0
    while let message = try? framer.next() { consumed += message.count }
    if let channelData = try? TURNChannelData.parse(bytes) {
        let written = channelData.encoded(padded: false)
        guard Array(bytes.prefix(written.count)) == written else { fatalError("ChannelData does not write back") }
    }
}
