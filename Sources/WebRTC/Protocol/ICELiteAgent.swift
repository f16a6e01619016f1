import MediaCore

/// The answering side of ICE for a lite implementation (RFC 8445 2.5):
/// it never sends checks, it answers the peer's binding requests, takes the
/// pair the peer nominates and watches consent (RFC 7675).
///
/// ```swift
/// let clock = RTPMonotonicClock()
/// var ice = ICELiteAgent(localUsernameFragment: "abcd", localPassword: password)
/// ice.remoteUsernameFragment = offer.iceUsernameFragment   // the offer's video section
/// switch ice.receive(datagram, from: peer, at: clock.now) {
/// case .respond(let response): socket.send(response, to: peer)
/// case .ignored(let reason): log(reason)
/// case .keepalive: break   // a Binding indication
/// }
/// if ice.consentExpired(at: clock.now) { close() }
/// ```
///
/// A request counts only with a USERNAME of `local:remote`, a valid
/// MESSAGE-INTEGRITY keyed with the local password, a valid FINGERPRINT,
/// PRIORITY and ICE-CONTROLLING (a lite agent is always controlled); any
/// other datagram is ignored with a reason and changes nothing. A valid
/// request is answered with XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY and
/// FINGERPRINT; with USE-CANDIDATE its source becomes the selected address.
/// Consent lasts ``consentTimeout`` from the last valid request from the
/// selected address (or from any address before one is selected).
public struct ICELiteAgent: Sendable {
    /// What ``receive(_:from:at:)`` made of a datagram.
    public enum Outcome: Sendable, Hashable {
        /// Send this response to the datagram's source.
        case respond([UInt8])
        /// Not a request this agent answers; why.
        case ignored(String)
        /// A Binding indication: a keepalive (RFC 8445 11), needing no answer and refusing nothing.
        case keepalive
    }

    /// Our ice-ufrag, which requests' USERNAME must start with.
    public private(set) var localUsernameFragment: String
    /// Our ice-pwd: the key of MESSAGE-INTEGRITY on requests sent to us and on our responses.
    public private(set) var localPassword: String
    /// The peer's ice-ufrag from its SDP; nil accepts any remote part.
    public var remoteUsernameFragment: String?
    /// True when this side controls (a full agent publishing with WHIP):
    /// requests must then carry ICE-CONTROLLED instead.
    public var isControlling = false
    /// How long consent lasts without a valid request (RFC 7675: 30 s).
    public var consentTimeout = MediaTime(value: 30, timescale: 1)
    /// The address the peer nominated (USE-CANDIDATE).
    public private(set) var selectedAddress: UDPAddress?
    /// Addresses that sent a valid request, with the time of the last one
    /// (nanoseconds).
    public private(set) var validatedAddresses: [UDPAddress: Int64] = [:]
    /// Valid requests answered.
    public private(set) var requestsAnswered = 0
    /// Datagrams ignored.
    public private(set) var requestsIgnored = 0

    /// Creates an agent with our credentials, no address selected and no remote ice-ufrag required.
    public init(localUsernameFragment: String, localPassword: String) {
        self.localUsernameFragment = localUsernameFragment
        self.localPassword = localPassword
    }

    /// An ICE restart (RFC 8445 9): new credentials on both sides. The selected address, the validated
    /// addresses and consent stay, so media goes on until the peer's checks with the new credentials come.
    public mutating func restart(localUsernameFragment: String, localPassword: String, remoteUsernameFragment: String) {
        self.localUsernameFragment = localUsernameFragment
        self.localPassword = localPassword
        self.remoteUsernameFragment = remoteUsernameFragment
    }

    /// A random ice-ufrag (8 characters) and ice-pwd (24 characters) from the
    /// ice-char set (RFC 8839 5.4).
    public static func randomCredentials() -> (usernameFragment: String, password: String) {
        let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var generator = SystemRandomNumberGenerator()
        let make = { (count: Int) in String((0..<count).map { _ in characters.randomElement(using: &generator)! }) }
        return (make(8), make(24))
    }

    /// Where media goes: the selected address, else the last validated one.
    public var destination: UDPAddress? {
        selectedAddress ?? validatedAddresses.max { $0.value < $1.value }?.key
    }

    /// Whether `address` sent a valid request (DTLS and SRTP are taken from
    /// such addresses only).
    public func isValidated(_ address: UDPAddress) -> Bool { validatedAddresses[address] != nil }

    /// Handles one datagram that looks like STUN.
    public mutating func receive(_ datagram: [UInt8], from source: UDPAddress, at now: MediaTime) -> Outcome {
        let outcome = check(datagram, from: source, at: now)
        switch outcome {
        case .ignored: requestsIgnored += 1
        case .respond: requestsAnswered += 1
        case .keepalive: break
        }
        return outcome
    }

    private mutating func check(_ datagram: [UInt8], from source: UDPAddress, at now: MediaTime) -> Outcome {
        let message: STUNMessage
        do { message = try STUNMessage.parse(datagram) } catch { return .ignored("malformed STUN: \(error.message)") }
        if message.method == STUNMessage.bindingMethod, message.messageClass == .indication { return .keepalive }
        guard message.method == STUNMessage.bindingMethod, message.messageClass == .request else {
            return .ignored("STUN message that is not a binding request")
        }
        guard message.verifyFingerprint() else { return .ignored("binding request without a valid FINGERPRINT") }
        guard let username = message.username else { return .ignored("binding request without USERNAME") }
        let expectedPrefix = localUsernameFragment + ":"
        guard username.hasPrefix(expectedPrefix) else {
            return .ignored("binding request for another username fragment")
        }
        if let remote = remoteUsernameFragment, username.dropFirst(expectedPrefix.count) != remote {
            return .ignored("binding request from another peer's username fragment")
        }
        guard message.verifyIntegrity(key: Array(localPassword.utf8)) else {
            return .ignored("binding request without a valid MESSAGE-INTEGRITY")
        }
        guard message.attribute(STUNAttributeType.priority)?.count == 4 else {
            return .ignored("binding request without PRIORITY")
        }
        if isControlling {
            guard message.attribute(STUNAttributeType.iceControlled) != nil else {
                return .ignored("binding request without ICE-CONTROLLED (this side controls)")
            }
        } else {
            guard message.attribute(STUNAttributeType.iceControlling) != nil else {
                return .ignored("binding request without ICE-CONTROLLING (a lite agent is always controlled)")
            }
        }
        let time = now.converted(toTimescale: 1_000_000_000).value
        validatedAddresses[source] = time
        if validatedAddresses.count > 16, let oldest = validatedAddresses.min(by: { $0.value < $1.value })?.key {
            validatedAddresses[oldest] = nil
        }
        if message.attribute(STUNAttributeType.useCandidate) != nil { selectedAddress = source }
        var response = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .successResponse, transactionID: message.transactionID)
        response.attributes.append(.xorMappedAddress(source, transactionID: message.transactionID))
        return .respond(response.encoded(integrityKey: Array(localPassword.utf8), fingerprint: true))
    }

    /// Whether consent has run out at `now`: no valid request within
    /// ``consentTimeout`` from the selected address (or from any, before
    /// one is selected). False before the first valid request.
    public func consentExpired(at now: MediaTime) -> Bool {
        let last: Int64?
        if let selectedAddress {
            last = validatedAddresses[selectedAddress]
        } else {
            last = validatedAddresses.values.max()
        }
        guard let last else { return false }
        return now.converted(toTimescale: 1_000_000_000).value - last
            > consentTimeout.converted(toTimescale: 1_000_000_000).value
    }

    /// Whether any valid request came at all.
    public var hasValidatedPeer: Bool { !validatedAddresses.isEmpty }
}
