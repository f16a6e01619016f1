import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

// Connections: polling the sockets, accepting clients, reading request heads and
// client frames, writing the queues, closing connections and the server.
extension WebStreamServer {
    /// Accepts clients, reads requests and client frames, writes what is
    /// queued; waits up to `timeoutMilliseconds` (0: only what is ready now)
    /// for something to happen.
    public func poll(timeoutMilliseconds: Int32) throws(MediaError) {
        var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        for connection in connections {
            var events = Int16(POLLIN)
            if !connection.queue.isEmpty { events |= Int16(POLLOUT) }
            descriptors.append(pollfd(fd: connection.descriptor, events: events, revents: 0))
        }
        let ready = Glibc.poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
        if ready < 0 {
            if errno == EINTR { return }
            throw MediaError(.system, "poll: \(errorText())")
        }
        guard ready > 0 else {
            dropSlowRequests()
            removeClosed()
            return
        }
        for (index, connection) in connections.enumerated() {
            let events = descriptors[index + 1].revents
            if events & Int16(POLLIN | POLLERR | POLLHUP) != 0 { read(connection) }
            if events & Int16(POLLOUT) != 0 { flush(connection) }
        }
        if descriptors[0].revents & Int16(POLLIN) != 0 { acceptPending() }
        dropSlowRequests()
        removeClosed()
    }

    private func acceptPending() {
        while true {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listener, $0, &length) }
            }
            guard fd >= 0 else { return }
            if pendingRequestCount >= configuration.maximumPendingRequests {
                statisticsSoFar.clientsRefused += 1
                _ = Glibc.close(fd)
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if let size = configuration.socketSendBuffer {
                var value = Int32(size)
                _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size))
            }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            _ = inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
            let host = String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            connections.append(
                Connection(
                    id: nextID, descriptor: fd, peer: "\(host):\(UInt16(bigEndian: address.sin_port))",
                    queueBytes: configuration.clientQueueBytes, messageBytes: configuration.maximumClientMessageBytes))
            nextID += 1
        }
    }

    /// Connections still sending their request head.
    private var pendingRequestCount: Int {
        connections.filter { if case .request = $0.state { true } else { false } }.count
    }

    /// Closes connections whose request head did not come in time.
    private func dropSlowRequests() {
        let now = monotonicSeconds()
        for connection in connections {
            guard case .request = connection.state, now - connection.acceptedAt > configuration.requestTimeoutSeconds
            else { continue }
            statisticsSoFar.httpErrors += 1
            log("connection \(connection.id) (\(connection.peer)) closed: no request head in time")
            drop(connection, reason: nil)
        }
    }

    private func read(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count = buffer.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            drop(connection, reason: count == 0 ? "closed the connection" : "read failed: \(errorText())")
            return
        }
        guard count > 0 else { return }
        let bytes = buffer[0..<count]
        switch connection.state {
        case .request(var head):
            head += bytes
            connection.state = .request(head)
            handleRequest(connection, head: head)
        case .webSocket:
            for event in connection.reader.append(bytes) { handle(event, from: connection) }
        case .responding, .closing:
            break
        }
    }

    private func handle(_ event: WebSocket.Event, from connection: Connection) {
        switch event {
        case .ping(let payload):
            connection.queue.appendControl(WebSocket.frame(opcode: .pong, payload: payload))
        case .pong:
            break
        case .text(let text):
            // "stats": the statistics as a text message.
            if text == "stats" {
                connection.queue.appendControl(WebSocket.frame(opcode: .text, payload: Array(statisticsJSON().utf8)))
            }
        case .binary:
            break
        case .close(let code, _):
            connection.queue.appendControl(WebSocket.closeFrame(code: code ?? WebSocket.CloseCode.normal))
            connection.state = .closing
        case .failure(let code, let reason):
            log("client \(connection.id) (\(connection.peer)) broke the protocol: \(reason)")
            connection.queue.appendControl(WebSocket.closeFrame(code: code, reason: reason))
            connection.state = .closing
        }
        flush(connection)
    }

    /// Writes as much of the connection's queue as its socket takes now.
    func flush(_ connection: Connection) {
        while !connection.queue.isEmpty {
            let bytes = connection.queue.nextBytes
            if bytes.isEmpty {
                connection.queue.consume(0)
                continue
            }
            let sent = bytes.withUnsafeBytes {
                Glibc.send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                drop(connection, reason: "write failed: \(errorText())")
                return
            }
            connection.queue.consume(sent)
            connection.bytesSent += sent
        }
        switch connection.state {
        case .responding, .closing: drop(connection, reason: nil)
        default: break
        }
    }

    private func drop(_ connection: Connection, reason: String?) {
        guard connection.descriptor >= 0, !closedIDs.contains(connection.id) else { return }
        if connection.isWebSocket || { if case .closing = connection.state { true } else { false } }() {
            departedSkips += connection.queue.skips
            departedAccessUnitsSkipped += connection.queue.accessUnitsSkipped
            log(
                "client \(connection.id) (\(connection.peer)) left\(reason.map { " (\($0))" } ?? ""): "
                    + "\(connection.queue.accessUnitsQueued) access units, \(connection.bytesSent) bytes, "
                    + "\(connection.queue.skips) skips")
        }
        shutdown(connection.descriptor, Int32(SHUT_RDWR))
        _ = Glibc.close(connection.descriptor)
        closedIDs.insert(connection.id)
    }

    func removeClosed() {
        guard !closedIDs.isEmpty else { return }
        connections.removeAll { closedIDs.contains($0.id) }
        closedIDs.removeAll()
    }

    /// Stops listening; WebSocket clients get up to `drainSeconds` to take
    /// what is queued, then a close frame (1001, going away).
    public func close(drainSeconds: Double) {
        guard listener >= 0 else { return }
        _ = Glibc.close(listener)
        listener = -1
        for connection in connections where connection.isWebSocket {
            connection.queue.appendControl(WebSocket.closeFrame(code: WebSocket.CloseCode.goingAway))
            connection.state = .closing
        }
        let deadline = monotonicSeconds() + drainSeconds
        while connections.contains(where: { !$0.queue.isEmpty }), monotonicSeconds() < deadline {
            var descriptors = connections.map { pollfd(fd: $0.descriptor, events: Int16(POLLOUT), revents: 0) }
            _ = Glibc.poll(&descriptors, nfds_t(descriptors.count), 50)
            for connection in connections { flush(connection) }
            removeClosed()
        }
        for connection in connections { drop(connection, reason: "server stopped") }
        removeClosed()
    }
}

private func errorText() -> String { String(cString: strerror(errno)) }
