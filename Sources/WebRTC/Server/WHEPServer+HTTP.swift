import Sockets
import WebStreaming

#if canImport(Glibc)
    import Glibc
#endif

// HTTP: connections accepted (bounded in total and per source address, with
// deadlines for the request head and body), a request read, routed
// (WHEPRoute) and answered on the spot, then closed.
extension WHEPServer {
    /// One HTTP connection: what it sent so far, from where, and when.
    struct HTTPConnection {
        var descriptor: Int32
        var buffer: [UInt8] = []
        var source: UDPAddress
        var acceptedAt: Double
        /// When the request head was complete (the body deadline runs from then).
        var headAt: Double?
    }

    /// The HTTP source of a session's offer, and its rank among the offers taken.
    struct OfferOrigin {
        var source: UDPAddress
        var number: Int
    }

    func acceptConnections() {
        // At most 256 per poll, so that a flood of connections cannot hold
        // the media back.
        for _ in 0..<256 {
            guard let (descriptor, peer) = acceptWaitingConnection(on: listener) else { return }
            let source = UDPAddress(peer)
            let fromThere = connections.filter { $0.source.host == source.host }.count
            guard fromThere < configuration.maximumConnectionsPerAddress else {
                refusedConnections += 1
                _ = Glibc.close(descriptor)
                continue
            }
            if connections.count >= configuration.maximumConnections { evictConnection() }
            connections.append(HTTPConnection(descriptor: descriptor, source: source, acceptedAt: wallClockSeconds()))
            readRequest(at: connections.count - 1)
        }
    }

    /// Makes room for a new connection: closes the oldest connection of the
    /// source address that holds the most, so that strangers holding idle
    /// connections never keep out a client from another address.
    private func evictConnection() {
        var counts: [[UInt8]: Int] = [:]
        for connection in connections { counts[connection.source.host, default: 0] += 1 }
        guard let busiest = counts.max(by: { $0.value < $1.value })?.key,
            let index = connections.firstIndex(where: { $0.source.host == busiest })
        else { return }
        refusedConnections += 1
        _ = Glibc.close(connections[index].descriptor)
        connections.remove(at: index)
    }

    /// Closes connections whose head did not come within
    /// ``SignallingLimits/requestHeadTimeout`` of the accept, or whose body did
    /// not come within ``SignallingLimits/requestBodyTimeout`` of the head.
    func expireConnections(at now: Double) {
        for index in connections.indices.reversed() {
            let connection = connections[index]
            let late =
                connection.headAt.map { now - $0 > configuration.requestBodyTimeout }
                ?? (now - connection.acceptedAt > configuration.requestHeadTimeout)
            guard late else { continue }
            expiredConnections += 1
            _ = Glibc.close(connection.descriptor)
            connections.remove(at: index)
        }
    }

    func readRequest(at index: Int) {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let descriptor = connections[index].descriptor
        let count: Int
        switch receiveAvailable(on: descriptor, into: &chunk) {
        case .transferred(let read): count = read
        case .wouldBlock: return
        case .closed, .failed:
            _ = Glibc.close(descriptor)
            connections.remove(at: index)
            return
        }
        connections[index].buffer += chunk[0..<count]
        let response: [UInt8]
        switch WHEPRequest.parse(connections[index].buffer) {
        case .incomplete:
            if connections[index].headAt == nil,
                case .complete = HTTPRequest.parseHead(connections[index].buffer[...])
            {
                connections[index].headAt = wallClockSeconds()
            }
            return
        case .invalid(let status, let reason): response = Self.response(status, body: reason)
        case .complete(let request): response = answer(request, from: connections[index].source)
        }
        // The answers are small (the socket's send buffer holds them); a
        // client that does not read is given up on after about a second.
        var written = 0
        var waits = 0
        while written < response.count {
            let result = sendAvailable(response[written...], on: descriptor)
            if case .transferred(let sent) = result {
                written += sent
            } else if result == .wouldBlock && waits < 10 {
                waits += 1
                var descriptors = [pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)]
                _ = Glibc.poll(&descriptors, 1, 100)
            } else {
                break
            }
        }
        _ = Glibc.close(descriptor)
        connections.remove(at: index)
    }

    /// The CORS fields of the endpoint's answers (WHEP and WHIP drafts): a
    /// player on another origin may POST, DELETE and PATCH with a bearer
    /// token and read the Location of its session, the ETag its PATCHes name,
    /// the ICE servers' Link fields and Accept-Patch.
    static let corsFields = [
        "Access-Control-Allow-Origin: *", "Access-Control-Allow-Methods: OPTIONS, POST, DELETE, PATCH",
        "Access-Control-Allow-Headers: Content-Type, Authorization, If-Match",
        "Access-Control-Expose-Headers: Location, ETag, Link, Accept-Patch",
    ]

    /// One `Link` field per configured ICE server (RFC 9725 4.6).
    var iceServerLinks: [String] { configuration.iceServers.map { "Link: \($0.linkValue)" } }

    static func response(
        _ status: Int, body: String = "", type: String = "text/plain", extra: [String] = [], cors: Bool = false,
        headOnly: Bool = false
    ) -> [UInt8] {
        let reasons = [
            200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            405: "Method Not Allowed", 409: "Conflict", 411: "Length Required", 413: "Content Too Large",
            415: "Unsupported Media Type", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
            412: "Precondition Failed", 500: "Internal Server Error", 503: "Service Unavailable",
            505: "HTTP Version Not Supported",
        ]
        let bytes = Array(body.utf8)
        var lines = ["HTTP/1.1 \(status) \(reasons[status] ?? "Error")"] + (cors ? corsFields : []) + extra
        lines += ["Content-Type: \(type)", "Content-Length: \(bytes.count)", "Connection: close", "", ""]
        return Array(lines.joined(separator: "\r\n").utf8) + (headOnly ? [] : bytes)
    }

    private func answer(_ request: WHEPRequest, from source: UDPAddress) -> [UInt8] {
        let route = WHEPRoute.decide(
            request, whipPath: configuration.whipPath, token: token, servesViewers: configuration.servesViewers)
        let cors = route.allowsCrossOrigin
        switch route {
        case .preflight:
            // RFC 9725 4.6: the ICE servers on an OPTIONS, but not on a CORS preflight.
            let preflight = request.fields["access-control-request-method"] != nil
            return Self.response(
                204, extra: ["Accept-Post: application/sdp"] + (preflight ? [] : iceServerLinks), cors: true)
        case .offer(let incoming):
            return createPeer(request, incoming: incoming, from: source)
        case .delete(let id):
            guard let peer = peers[id] else { return Self.response(404, body: "no such session", cors: cors) }
            let who = peer.video.isIncoming ? "publisher" : "viewer"
            perform(peer.close(reason: "the \(who) sent DELETE from \(source)", at: clock.now))
            collectSamples(of: peer)
            removeClosedPeers()
            return Self.response(200, cors: cors)
        case .patch(let id):
            return patchSession(request, id: id, cors: cors)
        case .page(let headOnly):
            return Self.response(200, body: WHEPPage.html, type: "text/html; charset=utf-8", headOnly: headOnly)
        case .statistics(let full, let headOnly):
            let body = full ? statisticsJSON() : countsJSON()
            return Self.response(200, body: body, type: "application/json", headOnly: headOnly)
        case .unauthorized(let presented):
            unauthorizedRequests += 1
            report(
                "\(request.method) \(request.path) from \(source) refused: " + (presented ? "wrong" : "no") + " token")
            return Self.response(
                401, body: presented ? "the bearer token is not valid" : "a bearer token is required",
                extra: ["WWW-Authenticate: Bearer" + (presented ? " error=\"invalid_token\"" : "")], cors: cors)
        case .refused(let status, let reason):
            return Self.response(status, body: reason)
        }
    }
}
