// Statistics: the figures of the server and of each client, and the JSON that
// /stats and the "stats" message serve.
extension WebStreamServer {
    /// Figures for one WebSocket client.
    public struct ClientStatistics: Sendable, Hashable {
        /// The number the server gave the connection, unique while it runs.
        public var id: Int
        /// The client's address and port, as text.
        public var peer: String
        /// Access units queued for the client (sent, or being sent).
        public var accessUnitsSent: Int
        /// Bytes written to the client's socket so far.
        public var bytesSent: Int
        /// Times the client fell behind and skipped to a keyframe.
        public var skips: Int
        /// Access units dropped by those skips.
        public var accessUnitsSkipped: Int
        /// Bytes queued for the client and not yet written.
        public var queuedBytes: Int
    }

    /// Figures for the whole server, readable at any time.
    public struct Statistics: Sendable, Hashable {
        /// The stream's RFC 6381 codec string (`avc1.64001f`), nil until the first access unit was sent.
        public var codecString: String?
        /// Access units given to ``WebStreamServer/send(_:captureMicroseconds:)`` so far.
        public var accessUnits = 0
        /// Keyframes among them.
        public var keyframes = 0
        /// Payload bytes of those access units.
        public var bytes = 0
        /// WebSocket clients connected now.
        public var clientsConnected = 0
        /// WebSocket clients accepted since the server started.
        public var clientsServed = 0
        /// Connections turned away: WebSocket clients past the limit (`503`) and connections closed to make room under
        /// the pending-request bounds.
        public var clientsRefused = 0
        /// Requests whose head was read in full, WebSocket upgrades included.
        public var httpRequests = 0
        /// Requests answered with an error status, or that were malformed or too slow, and connections closed at a
        /// deadline or for not reading their replies.
        public var httpErrors = 0
        /// Skips to a keyframe over all clients, those gone included.
        public var skips = 0
        /// Access units dropped by those skips.
        public var accessUnitsSkipped = 0
        /// Bytes queued and not yet written, over all clients connected now.
        public var totalQueuedBytes = 0
        /// The figures of each client connected now.
        public var clients: [ClientStatistics] = []
    }

    /// The figures now.
    public var statistics: Statistics {
        var result = statisticsSoFar
        result.clients = connections.filter(\.isWebSocket).map { c in
            ClientStatistics(
                id: c.id, peer: c.peer, accessUnitsSent: c.queue.accessUnitsQueued, bytesSent: c.bytesSent,
                skips: c.queue.skips, accessUnitsSkipped: c.queue.accessUnitsSkipped, queuedBytes: c.queue.queuedBytes)
        }
        result.clientsConnected = result.clients.count
        result.skips = departedSkips + result.clients.reduce(0) { $0 + $1.skips }
        result.accessUnitsSkipped = departedAccessUnitsSkipped + result.clients.reduce(0) { $0 + $1.accessUnitsSkipped }
        result.totalQueuedBytes = connections.reduce(0) { $0 + $1.queue.queuedBytes }
        return result
    }

    /// ``statistics`` as the JSON object `/stats` serves.
    public func statisticsJSON() -> String {
        let s = statistics
        let clients = s.clients.map { c in
            "{\"id\":\(c.id),\"peer\":\"\(c.peer)\",\"accessUnitsSent\":\(c.accessUnitsSent),"
                + "\"bytesSent\":\(c.bytesSent),\"skips\":\(c.skips),\"accessUnitsSkipped\":\(c.accessUnitsSkipped),"
                + "\"queuedBytes\":\(c.queuedBytes)}"
        }
        let codec = s.codecString.map { "\"\($0)\"" } ?? "null"
        return "{\"codecString\":\(codec),\"accessUnits\":\(s.accessUnits),\"keyframes\":\(s.keyframes),"
            + "\"bytes\":\(s.bytes),\"clientsConnected\":\(s.clientsConnected),\"clientsServed\":\(s.clientsServed),"
            + "\"clientsRefused\":\(s.clientsRefused),\"httpRequests\":\(s.httpRequests),"
            + "\"httpErrors\":\(s.httpErrors),\"skips\":\(s.skips),\"accessUnitsSkipped\":\(s.accessUnitsSkipped),"
            + "\"totalQueuedBytes\":\(s.totalQueuedBytes),\"serverTimeMicroseconds\":\(wallClockMicroseconds()),"
            + "\"clients\":[\(clients.joined(separator: ","))]}"
    }
}
