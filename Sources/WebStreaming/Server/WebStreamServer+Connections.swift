import MediaCore
import Sockets

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
        statisticsReply = nil
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
            enforceDeadlines()
            removeClosed()
            return
        }
        for (index, connection) in connections.enumerated() {
            let events = descriptors[index + 1].revents
            if events & Int16(POLLIN | POLLERR | POLLHUP) != 0 { read(connection) }
            if events & Int16(POLLOUT) != 0 { flush(connection) }
        }
        if descriptors[0].revents & Int16(POLLIN) != 0 { acceptPending() }
        enforceDeadlines()
        removeClosed()
    }

    private func acceptPending() {
        while true {
            guard let (fd, peer) = acceptWaitingConnection(on: listener) else { return }
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if let size = configuration.socketSendBuffer {
                var value = Int32(size)
                _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size))
            }
            let host = peer.host
            makeRoomForPendingRequest(from: host)
            connections.append(
                Connection(
                    id: nextID, descriptor: fd, address: host, port: peer.port,
                    configuration: configuration))
            nextID += 1
        }
    }

    private func read(_ connection: Connection) {
        guard !connection.isClosed else { return }
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count: Int
        switch receiveAvailable(on: connection.descriptor, into: &buffer) {
        case .transferred(let read): count = read
        case .wouldBlock: return
        case .closed:
            drop(connection, reason: "closed the connection")
            return
        case .failed(let code):
            drop(connection, reason: "read failed: \(StreamIOResult.text(code))")
            return
        }
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

    func handle(_ event: WebSocket.Event, from connection: Connection) {
        guard connection.isWebSocket, !connection.isClosed else { return }
        var fits = true
        switch event {
        case .ping(let payload):
            fits = connection.queue.appendControl(WebSocket.frame(opcode: .pong, payload: payload))
        case .pong:
            break
        case .text(let text):
            // "stats": the statistics as a text message.
            // A client's requests read in one poll share one reply's bytes.
            if text == "stats" {
                let reply = statisticsReply ?? WebSocket.frame(opcode: .text, payload: Array(statisticsJSON().utf8))
                statisticsReply = reply
                fits = connection.queue.appendControl(reply)
            }
        case .binary:
            break
        case .close(let code, _):
            startClosing(connection, WebSocket.closeFrame(code: code ?? WebSocket.CloseCode.normal))
        case .failure(let code, let reason):
            report(.warning, "client \(connection.id) (\(connection.peer)) broke the protocol: \(reason)")
            startClosing(connection, WebSocket.closeFrame(code: code, reason: reason))
        }
        guard fits else {
            controlOverflow(connection)
            return
        }
        flush(connection)
    }

    /// Queues `closeFrame` after what was started and nothing else; the
    /// connection ends once it is written or at the closing deadline.
    func startClosing(_ connection: Connection, _ closeFrame: [UInt8]) {
        connection.queue.endAccessUnits()
        connection.queue.appendControl(closeFrame)
        connection.state = .closing
    }

    /// Closes a client whose control replies passed the bound.
    func controlOverflow(_ connection: Connection) {
        statisticsSoFar.httpErrors += 1
        drop(
            connection,
            reason:
                "it does not read its replies: \(connection.queue.controlBytes) bytes of control messages waiting, "
                + "more than \(configuration.maximumControlBytes)")
    }

    /// Writes as much of the connection's queue as its socket takes now.
    func flush(_ connection: Connection) {
        while !connection.queue.isEmpty {
            let bytes = connection.queue.nextBytes
            if bytes.isEmpty {
                connection.queue.consume(0)
                continue
            }
            let sent: Int
            switch sendAvailable(bytes, on: connection.descriptor) {
            case .transferred(let count): sent = count
            case .wouldBlock, .closed: return
            case .failed(let code):
                drop(connection, reason: "write failed: \(StreamIOResult.text(code))")
                return
            }
            connection.queue.consume(sent)
            connection.bytesSent += sent
            if sent > 0 { connection.lastWrite = monotonicSeconds() }
        }
        switch connection.state {
        case .responding, .closing: drop(connection, reason: nil)
        default: break
        }
    }

    func drop(_ connection: Connection, reason: String?) {
        guard !connection.isClosed else { return }
        if connection.isWebSocket || connection.isClosing {
            departedSkips += connection.queue.skips
            departedAccessUnitsSkipped += connection.queue.accessUnitsSkipped
            report(
                .info,
                "client \(connection.id) (\(connection.peer)) left\(reason.map { " (\($0))" } ?? ""): "
                    + "\(connection.queue.accessUnitsQueued) access units, \(connection.bytesSent) bytes, "
                    + "\(connection.queue.skips) skips")
        }
        shutdown(connection.descriptor, Int32(SHUT_RDWR))
        _ = Glibc.close(connection.descriptor)
        connection.isClosed = true
        // Its queue and reader go with it; the memory goes back at once.
        connection.queue = ClientQueue(maximumBytes: 0)
        connection.reader = WebSocket.FrameReader(maximumMessageBytes: 0)
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
