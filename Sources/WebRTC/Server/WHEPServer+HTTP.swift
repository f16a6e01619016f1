#if canImport(Glibc)
    import Glibc
#endif

// HTTP: connections accepted, a request read and answered on the spot (CORS,
// WHEP and WHIP POSTs, DELETE of a session URL, the page, the statistics), then
// closed.
extension WHEPServer {
    func acceptConnections() {
        while true {
            let descriptor = accept(listener, nil, nil)
            guard descriptor >= 0 else { return }
            guard connections.count < 64 else {
                _ = Glibc.close(descriptor)
                continue
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            connections.append((descriptor, [], wallClockSeconds()))
            readRequest(at: connections.count - 1)
        }
    }

    func readRequest(at index: Int) {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let descriptor = connections[index].descriptor
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            _ = Glibc.close(descriptor)
            connections.remove(at: index)
            return
        }
        guard count > 0 else { return }
        connections[index].buffer += chunk[0..<count]
        let response: [UInt8]
        switch WHEPRequest.parse(connections[index].buffer) {
        case .incomplete: return
        case .invalid(let status, let reason): response = Self.response(status, body: reason)
        case .complete(let request): response = answer(request)
        }
        var written = 0
        while written < response.count {
            let sent = response[written...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                written += sent
            } else if sent < 0 && (errno == EAGAIN || errno == EINTR) {
                var descriptors = [pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)]
                _ = Glibc.poll(&descriptors, 1, 100)
            } else {
                break
            }
        }
        _ = Glibc.close(descriptor)
        connections.remove(at: index)
    }

    static let corsFields = [
        "Access-Control-Allow-Origin: *", "Access-Control-Allow-Methods: OPTIONS, POST, DELETE, PATCH",
        "Access-Control-Allow-Headers: Content-Type, Authorization, If-Match",
        "Access-Control-Expose-Headers: Location, Link, ETag",
    ]

    static func response(_ status: Int, body: String = "", type: String = "text/plain", extra: [String] = []) -> [UInt8]
    {
        let reasons = [
            200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 404: "Not Found",
            405: "Method Not Allowed", 409: "Conflict", 411: "Length Required", 413: "Content Too Large",
            415: "Unsupported Media Type", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
            503: "Service Unavailable", 505: "HTTP Version Not Supported",
        ]
        let bytes = Array(body.utf8)
        var lines = ["HTTP/1.1 \(status) \(reasons[status] ?? "Error")"] + corsFields + extra
        lines += ["Content-Type: \(type)", "Content-Length: \(bytes.count)", "Connection: close", "", ""]
        return Array(lines.joined(separator: "\r\n").utf8) + bytes
    }

    private func answer(_ request: WHEPRequest) -> [UInt8] {
        let path = request.path
        switch request.method {
        case "OPTIONS":
            return Self.response(204, extra: ["Accept-Post: application/sdp"])
        case "POST" where path == "/whep":
            return createPeer(request, incoming: false)
        case "POST" where path == configuration.whipPath:
            return createPeer(request, incoming: true)
        case "DELETE" where sessionID(path) != nil:
            let id = sessionID(path)!
            guard let peer = peers[id] else { return Self.response(404, body: "no session \(id)") }
            let who = peer.video.isIncoming ? "publisher" : "viewer"
            perform(peer.close(reason: "the \(who) sent DELETE", at: clock.now))
            collectSamples(of: peer)
            removeClosedPeers()
            return Self.response(200)
        case "PATCH" where sessionID(path) != nil:
            return Self.response(405, body: "trickle ICE is not supported: the answer carries the host candidate")
        case "GET" where path == "/":
            return Self.response(200, body: WHEPPage.html, type: "text/html; charset=utf-8")
        case "GET" where path == "/whep/stats":
            return Self.response(200, body: statisticsJSON(), type: "application/json")
        default:
            return Self.response(path.hasPrefix("/whep") ? 405 : 404, body: "\(request.method) \(path) is not served")
        }
    }

    /// The session id in a session URL (`/whep/ID`, `WHIP-PATH/ID`).
    private func sessionID(_ path: String) -> String? {
        for prefix in ["/whep/"] + (configuration.whipPath.map { [$0 + "/"] } ?? []) where path.hasPrefix(prefix) {
            let id = path.dropFirst(prefix.count)
            if !id.isEmpty && !id.contains("/") { return String(id) }
        }
        return nil
    }
}
