// HTTP: a request head parsed and routed (the page, the statistics, the
// WebSocket upgrade of /stream) and the one response before the connection closes.
extension WebStreamServer {
    func handleRequest(_ connection: Connection, head: [UInt8]) {
        switch HTTPRequest.parse(head[...]) {
        case .incomplete:
            return
        case .invalid(let status, let reason):
            statisticsSoFar.httpErrors += 1
            respond(connection, status: status, type: "text/plain", body: Array((reason + "\n").utf8))
        case .complete(let request, let consumed):
            statisticsSoFar.httpRequests += 1
            route(request, connection)
            // Frames the client sent right behind its upgrade request.
            if connection.isWebSocket, consumed < head.count {
                for event in connection.reader.append(head[consumed...]) { handle(event, from: connection) }
            }
        }
    }

    private func route(_ request: HTTPRequest, _ connection: Connection) {
        if let refusal = hostRefusal(request) {
            statisticsSoFar.httpErrors += 1
            report(.warning, "connection \(connection.id) (\(connection.peer)) refused: \(refusal)")
            respond(connection, status: 403, type: "text/plain", body: Array((refusal + "\n").utf8))
            return
        }
        let head = request.method == "HEAD"
        guard request.method == "GET" || head else {
            statisticsSoFar.httpErrors += 1
            respond(connection, status: 405, type: "text/plain", body: Array("GET or HEAD only\n".utf8))
            return
        }
        switch request.path {
        case "/", "/index.html":
            respond(connection, status: 200, type: "text/html; charset=utf-8", body: configuration.page, headOnly: head)
        case "/stats":
            respond(
                connection, status: 200, type: "application/json", body: Array(statisticsJSON().utf8), headOnly: head)
        case "/stream":
            switch WebSocket.handshakeResponse(for: request) {
            case .failure(let refusal):
                statisticsSoFar.httpErrors += 1
                respond(
                    connection, status: refusal.status, type: "text/plain", body: Array((refusal.reason + "\n").utf8),
                    extraHeaders: refusal.status == 426 ? "Sec-WebSocket-Version: 13\r\n" : "")
            case .success(let response):
                if let refusal = originRefusal(request) {
                    statisticsSoFar.httpErrors += 1
                    report(.warning, "client \(connection.peer) refused: \(refusal)")
                    respond(connection, status: 403, type: "text/plain", body: Array((refusal + "\n").utf8))
                    return
                }
                let inUse = slotsInUse()
                let fromAddress = slotsInUse(from: connection.address)
                guard inUse < configuration.maximumClients, fromAddress < configuration.maximumClientsPerAddress else {
                    statisticsSoFar.clientsRefused += 1
                    report(
                        .warning,
                        "client \(connection.peer) refused: \(inUse) clients connected or closing, "
                            + "\(fromAddress) of them from \(connection.address) (the most allowed: "
                            + "\(configuration.maximumClients), \(configuration.maximumClientsPerAddress) from one address)"
                    )
                    respond(connection, status: 503, type: "text/plain", body: Array("too many clients\n".utf8))
                    return
                }
                connection.state = .webSocket
                connection.queue.appendControl(response)
                if let configurationMessage { connection.queue.appendControl(configurationMessage) }
                statisticsSoFar.clientsServed += 1
                report(.info, "client \(connection.id) (\(connection.peer)) connected; it starts at the next keyframe")
                flush(connection)
            }
        default:
            statisticsSoFar.httpErrors += 1
            respond(connection, status: 404, type: "text/plain", body: Array("not found\n".utf8))
        }
    }

    private func respond(
        _ connection: Connection, status: Int, type: String, body: [UInt8], headOnly: Bool = false,
        extraHeaders: String = ""
    ) {
        let head =
            "HTTP/1.1 \(status) \(reasonPhrase(status))\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\(extraHeaders)\r\n"
        connection.state = .responding
        connection.queue.appendControl(Array(head.utf8) + (headOnly ? [] : body))
        flush(connection)
    }
}

private func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 400: "Bad Request"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 426: "Upgrade Required"
    case 431: "Request Header Fields Too Large"
    case 503: "Service Unavailable"
    case 505: "HTTP Version Not Supported"
    default: "Error"
    }
}
