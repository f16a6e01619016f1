import MediaCore
import WebRTC

/// libFuzzer entry: the input as one STUN datagram, parsed and handed to an
/// ICE-lite agent. What parses writes bytes that parse again to the same
/// method, class, transaction ID and attributes; an answered request gets
/// a response that parses, verifies with the agent's password and maps
/// the source address.
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
    return 0
}
