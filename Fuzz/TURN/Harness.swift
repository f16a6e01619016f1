import MediaCore
import WebRTC

/// libFuzzer entry: the input as a conversation of a TURN client (RFC 8656) with its server. Byte 0: bit 0 TCP
/// (the server's messages then go through `TURNStreamFramer`, cut in two), bit 1 no credentials. Then records of
/// an operation byte, a 16-bit length and that many bytes the server sends. The operation's low 3 bits start a
/// request first (none, Allocate, Refresh of 600 s or, with bit 7, 0 s, CreatePermission, ChannelBind, Binding,
/// a poll 100 s later, a send of the record's bytes to the peer); bit 3 puts the last request's transaction ID
/// into the server's message, bit 4 signs it again with the client's long-term key (so answers past a 401 are
/// reached), bit 5 reads it as ChannelData on the first channel bound.
///
/// Checked: every message the client sends parses (STUN, or ChannelData over a bound channel), and once the
/// server named a realm its new requests other than Binding carry a MESSAGE-INTEGRITY that verifies with
/// MD5(username:realm:password); events agree with the client's state; after a poll the next deadline lies
/// ahead; the framer gives the same messages from two pieces as from one; ChannelData that parses writes back to
/// its bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTURNClient(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let flags = bytes.first else { return 0 }
    var conversation = Conversation(tcp: flags & 1 != 0, credentials: flags & 2 == 0)
    var index = 1
    while index + 3 <= bytes.count, conversation.step < 64 {
        let operation = bytes[index]
        let length = Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
        let message = Array(bytes[(index + 3)..<min(bytes.count, index + 3 + length)])
        index += 3 + length
        conversation.run(operation, message)
    }
    return 0
}

struct Conversation {
    let tcp: Bool
    let credentials: TURNClient.Credentials?
    var client: TURNClient
    var framer = TURNStreamFramer()
    var now = 0.0
    var step = 0
    var lastTransactionID: [UInt8]?
    /// Transaction IDs sent so far: a retransmission keeps the bytes it was first sent with (RFC 8489 6.2.1).
    var sent: Set<[UInt8]> = []
    let peer = UDPAddress(host: [127, 0, 0, 1], port: 40000)

    init(tcp: Bool, credentials: Bool) {
        self.tcp = tcp
        self.credentials = credentials ? .init(username: "u", password: "p") : nil
        client = TURNClient(transport: tcp ? .tcp : .udp, credentials: self.credentials)
    }

    mutating func run(_ operation: UInt8, _ message: [UInt8]) {
        step += 1
        now += 0.1
        switch operation & 7 {
        case 1: client.allocate(at: now)
        case 2: client.refresh(lifetime: operation & 0x80 == 0 ? 600 : 0, at: now)
        case 3: client.createPermission(for: peer, at: now)
        case 4: _ = try? client.bindChannel(to: peer, at: now)
        case 5: client.bind(at: now)
        case 6:
            now += 100
            client.poll(at: now)
            if let deadline = client.nextDeadline, deadline <= now {
                fatalError("a deadline \(deadline) not after \(now)")
            }
        case 7: _ = try? client.send(message, to: peer)
        default: break
        }
        checkOutgoing()
        guard !message.isEmpty, operation & 7 != 7 else { return }
        var answer = message
        if operation & 0x20 != 0, let channel = client.channels.values.min() {
            answer = TURNChannelData(channel: channel, data: Array(message.prefix(0xFFFF))).encoded(padded: tcp)
        }
        if operation & 0x08 != 0, answer.count >= 20, let id = lastTransactionID {
            answer.replaceSubrange(8..<20, with: id)
        }
        if operation & 0x10 != 0, let realm = client.realm, let credentials,
            var parsed = try? STUNMessage.parse(answer)
        {
            parsed.attributes.removeAll {
                $0.type == STUNAttributeType.messageIntegrity || $0.type == STUNAttributeType.fingerprint
            }
            let key = stunLongTermKey(username: credentials.username, realm: realm, password: credentials.password)
            answer = parsed.encoded(integrityKey: key)
        }
        if let parsed = try? TURNChannelData.parse(answer), answer.count == 4 + parsed.data.count {
            guard parsed.encoded(padded: false) == answer else { fatalError("ChannelData does not write back") }
        }
        for piece in frame(answer) {
            client.receive(piece, at: now)
            checkEvents()
            checkOutgoing()
        }
    }

    /// Over TCP, the messages the framer cuts from `answer` sent in two pieces (the same as from one piece);
    /// over UDP, `answer` as one datagram.
    mutating func frame(_ answer: [UInt8]) -> [[UInt8]] {
        guard tcp else { return [answer] }
        var whole = framer
        whole.append(answer)
        var expected: [[UInt8]] = []
        while let message = try? whole.next() { expected.append(message) }
        framer.append(Array(answer.prefix(answer.count / 2)))
        var pieces: [[UInt8]] = []
        while let message = try? framer.next() { pieces.append(message) }
        framer.append(Array(answer.dropFirst(answer.count / 2)))
        while let message = try? framer.next() { pieces.append(message) }
        guard pieces == expected else { fatalError("the framer cut two pieces otherwise than one") }
        if (try? framer.next()) == nil, (try? whole.next()) != nil { fatalError("the framer's states differ") }
        // A stream that went wrong is closed by the client's owner; start a new one.
        if (try? framer.next()) == nil { framer = TURNStreamFramer() }
        return pieces
    }

    mutating func checkOutgoing() {
        for message in client.takeOutgoing() {
            if let first = message.first, TURNChannelData.startsChannelData(first) {
                guard let channelData = try? TURNChannelData.parse(message),
                    client.channels.values.contains(channelData.channel)
                else { fatalError("ChannelData sent that does not parse or is on no bound channel") }
                continue
            }
            guard let parsed = try? STUNMessage.parse(message) else { fatalError("a TURN message that does not parse") }
            guard parsed.messageClass == .request, sent.insert(parsed.transactionID).inserted else { continue }
            lastTransactionID = parsed.transactionID
            if parsed.method != STUNMessage.bindingMethod, let realm = client.realm, let credentials {
                let key = stunLongTermKey(username: credentials.username, realm: realm, password: credentials.password)
                guard parsed.verifyIntegrity(key: key) else {
                    fatalError("a request past the 401 that does not verify")
                }
            }
        }
    }

    mutating func checkEvents() {
        for event in client.takeEvents() {
            switch event {
            case .allocated(let relayed, _, _):
                guard client.relayedAddress == relayed else { fatalError("an allocation event without the allocation") }
            case .refreshed(0):
                guard client.relayedAddress == nil, client.channels.isEmpty, client.permissions.isEmpty else {
                    fatalError("a deleted allocation that keeps its state")
                }
            case .channelBound(let bound, let channel):
                guard client.channels[bound] == channel, client.permissions.contains(bound.host) else {
                    fatalError("a channel event without the channel")
                }
            case .permissionCreated(let permitted):
                guard client.permissions.contains(permitted.host) else { fatalError("a permission event without it") }
            default: break
            }
        }
    }
}
