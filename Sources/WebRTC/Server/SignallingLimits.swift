// The HTTP signalling's token and limits, shared by the WHEP server and the
// WHIP endpoint (one definition, read through each configuration).

/// What a WHEP server or a WHIP endpoint asks of the strangers that reach its
/// HTTP port: the bearer token, and the bounds on connections, pending
/// sessions and request deadlines. Each configuration reads these fields
/// directly (`configuration.token`, `configuration.maximumConnections`).
public struct SignallingLimits: Sendable {
    /// The bearer token that POST, DELETE and PATCH must carry
    /// (`Authorization: Bearer TOKEN`, RFC 9725 §4.5), and that makes a WHEP
    /// server's `GET /whep/stats` list the sessions; nil for none. A token68
    /// (letters, digits, `-._~+/`, trailing `=`). Never logged.
    public var token: String?
    /// Seconds a viewer or publisher has, from its offer, to complete ICE
    /// and DTLS; past it the slot is reclaimed.
    public var handshakeTimeout = 5.0
    /// Sessions not yet connected (ICE and DTLS pending) that one source
    /// address may hold; its next offer gets `429`.
    public var maximumPendingOffersPerAddress = 4
    /// HTTP connections at once. At the bound, a new one closes the
    /// oldest connection of the address that holds the most.
    public var maximumConnections = 64
    /// HTTP connections one source address may hold; more are closed at once.
    public var maximumConnectionsPerAddress = 8
    /// Seconds from a connection's accept to the end of its request head.
    public var requestHeadTimeout = 5.0
    /// Seconds from the end of a request head to the end of its body.
    public var requestBodyTimeout = 10.0
    /// STUN/TURN servers advertised to clients: one `Link: <URL>; rel="ice-server"` field each (RFC 9725 4.6) on
    /// the 201 of an offer and on an `OPTIONS` that is not a CORS preflight; none by default.
    public var iceServers: [ICEServer] = []

    /// The defaults above, no token.
    public init() {}
}

/// A configuration that holds ``SignallingLimits`` and reads their fields
/// as its own.
public protocol SignallingConfiguration {
    /// The token and the limits.
    var limits: SignallingLimits { get set }
}

extension SignallingConfiguration {
    /// A field of ``limits``, read and written as the configuration's own.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<SignallingLimits, Value>) -> Value {
        get { limits[keyPath: keyPath] }
        set { limits[keyPath: keyPath] = newValue }
    }
}
