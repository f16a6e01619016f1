// HTTP: what the shared signalling machinery refused (connections past the
// bounds or their deadlines, requests without the token) and the budget of
// the log lines about it.
extension WHIPEndpoint {
    /// HTTP connections closed at once or evicted by the bounds on connections.
    public var refusedConnections: Int { core.refusedConnections }
    /// HTTP connections closed because the request head or body came too late.
    public var expiredConnections: Int { core.expiredConnections }
    /// Requests refused with 401 (no bearer token, or a wrong one).
    public var unauthorizedRequests: Int { core.unauthorizedRequests }
    /// The most log lines a second about refused requests; past it they are
    /// counted, and the count is logged once the second is over. 20 by default.
    public var maximumLogLinesPerSecond: Int {
        get { core.maximumLogLinesPerSecond }
        set { core.maximumLogLinesPerSecond = newValue }
    }
    /// Log lines about refused requests left out (more than ``maximumLogLinesPerSecond`` in a second).
    public var logLinesLeftOut: Int { core.logLinesLeftOut }
}
