// What the TURN client makes of the server's messages: responses (401 and
// 438 answered with credentials), Data indications and ChannelData.
import MediaCore

extension TURNClient {
    /// Reads one message from the server: a datagram over UDP, one message
    /// of ``TURNStreamFramer`` over TCP. Results come out of ``takeEvents()``;
    /// anything not used is reported as ``Event/ignored(_:)`` with the reason.
    public mutating func receive(_ bytes: [UInt8], at now: Double) {
        guard let first = bytes.first else {
            events.append(.ignored("an empty message"))
            return
        }
        if TURNChannelData.startsChannelData(first) {
            do {
                let message = try TURNChannelData.parse(bytes)
                guard let peer = peersByChannel[message.channel] else {
                    events.append(.ignored("ChannelData on channel 0x\(String(message.channel, radix: 16)), not bound"))
                    return
                }
                events.append(.data(from: peer, message.data))
            } catch {
                events.append(.ignored(error.message))
            }
            return
        }
        let message: STUNMessage
        do {
            message = try STUNMessage.parse(bytes)
        } catch {
            events.append(.ignored(error.message))
            return
        }
        switch message.messageClass {
        case .indication: receiveIndication(message)
        case .request: events.append(.ignored("a STUN request (method 0x\(String(message.method, radix: 16)))"))
        case .successResponse, .errorResponse: receiveResponse(message, at: now)
        }
    }

    private mutating func receiveIndication(_ message: STUNMessage) {
        guard message.method == TURNMethod.data else {
            events.append(.ignored("a STUN indication of method 0x\(String(message.method, radix: 16))"))
            return
        }
        guard let peer = message.xorAddress(TURNAttributeType.xorPeerAddress),
            let data = message.attribute(TURNAttributeType.data)
        else {
            events.append(.ignored("a Data indication without XOR-PEER-ADDRESS or DATA"))
            return
        }
        events.append(.data(from: peer, data))
    }

    static func method(of request: Request) -> UInt16 {
        switch request {
        case .binding: STUNMessage.bindingMethod
        case .allocate: TURNMethod.allocate
        case .refresh: TURNMethod.refresh
        case .createPermission: TURNMethod.createPermission
        case .channelBind: TURNMethod.channelBind
        }
    }

    private mutating func receiveResponse(_ message: STUNMessage, at now: Double) {
        let id = message.transactionID
        guard let transaction = transactions[id] else {
            events.append(.ignored("a response to no outstanding request"))
            return
        }
        let request = transaction.request
        guard message.method == Self.method(of: request) else {
            events.append(.ignored("a response of method 0x\(String(message.method, radix: 16)) to \(request)"))
            return
        }
        if message.messageClass == .errorResponse {
            receiveError(message, transaction: transaction, at: now)
            return
        }
        if transaction.authenticated {
            // RFC 8489 9.2.5: a response to an authenticated request must verify with the same key.
            guard let key, message.verifyIntegrity(key: key) else {
                events.append(.ignored("a success response to \(request) whose MESSAGE-INTEGRITY does not verify"))
                return
            }
        }
        transactions[id] = nil
        switch request {
        case .binding:
            guard let mapped = message.xorMappedAddress else {
                return fail(request, nil, "the Binding response has no XOR-MAPPED-ADDRESS")
            }
            events.append(.mapped(mapped))
        case .allocate:
            guard let relayed = message.xorAddress(TURNAttributeType.xorRelayedAddress) else {
                return fail(request, nil, "the Allocate response has no XOR-RELAYED-ADDRESS")
            }
            guard let granted = message.uint32(TURNAttributeType.lifetime) else {
                return fail(request, nil, "the Allocate response has no LIFETIME")
            }
            relayedAddress = relayed
            lifetime = granted
            events.append(.allocated(relayed: relayed, mapped: message.xorMappedAddress, lifetime: granted))
        case .refresh(let asked):
            let granted = message.uint32(TURNAttributeType.lifetime) ?? asked
            lifetime = granted
            if granted == 0 {
                relayedAddress = nil
                permissions = []
                channels = [:]
                peersByChannel = [:]
            }
            events.append(.refreshed(lifetime: granted))
        case .createPermission(let peer):
            permissions.insert(peer.host)
            events.append(.permissionCreated(peer))
        case .channelBind(let peer, let channel):
            channels[peer] = channel
            peersByChannel[channel] = peer
            permissions.insert(peer.host)
            events.append(.channelBound(peer, channel: channel))
        }
    }

    private mutating func receiveError(_ message: STUNMessage, transaction: Transaction, at now: Double) {
        let request = transaction.request
        transactions[message.transactionID] = nil
        let errorCode: STUNErrorCode
        do {
            guard let code = try message.errorCode() else {
                return fail(request, nil, "an error response without ERROR-CODE")
            }
            errorCode = code
        } catch {
            return fail(request, nil, "an error response with \(error.message)")
        }
        let realmText = message.attribute(TURNAttributeType.realm).map { String(decoding: $0, as: UTF8.self) }
        let newNonce = message.attribute(TURNAttributeType.nonce)
        switch errorCode.code {
        case 401 where credentials != nil && request != .binding:
            guard !transaction.authenticated else {
                return fail(
                    request, errorCode,
                    "the server refused user \(credentials!.username)'s credentials in realm \(realm ?? "?")")
            }
            guard let realmText, let newNonce else {
                return fail(request, errorCode, "the 401 response has no REALM or NONCE")
            }
            setCredentials(realm: realmText, nonce: newNonce)
            start(request, at: now)
        case 438 where credentials != nil && transaction.staleNonceRetries < 2:
            guard let newNonce else { return fail(request, errorCode, "the 438 response has no NONCE") }
            setCredentials(realm: realmText ?? realm ?? "", nonce: newNonce)
            start(request, at: now, staleNonceRetries: transaction.staleNonceRetries + 1)
        case 401:
            fail(request, errorCode, credentials == nil ? "no credentials were given" : "")
        default:
            fail(request, errorCode, "")
        }
    }

    private mutating func setCredentials(realm newRealm: String, nonce newNonce: [UInt8]) {
        realm = newRealm
        nonce = newNonce
        if let credentials {
            key = stunLongTermKey(username: credentials.username, realm: newRealm, password: credentials.password)
        }
    }

    private mutating func fail(_ request: Request, _ errorCode: STUNErrorCode?, _ reason: String) {
        events.append(.failed(request, TURNError(request: request, errorCode: errorCode, reason: reason)))
    }
}
