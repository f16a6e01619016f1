// Deadlines and bounds on connections: the pending-request bounds (in all and
// per address) and the time each state may last.
extension WebStreamServer {
    /// Before a connection from `address` joins: when that address already
    /// has ``Configuration/maximumPendingRequestsPerAddress`` connections
    /// without a whole request head, closes its oldest; when every address
    /// together have ``Configuration/maximumPendingRequests``, closes the
    /// oldest of the addresses with the most. A new client always gets its turn;
    /// a stranger holding idle connections loses its own first.
    func makeRoomForPendingRequest(from address: String) {
        let pending = connections.filter(\.isPendingRequest)
        let fromAddress = pending.filter { $0.address == address }
        if fromAddress.count >= configuration.maximumPendingRequestsPerAddress, let oldest = fromAddress.first {
            evict(oldest, "\(fromAddress.count) connections from \(address) without a request head")
        } else if pending.count >= configuration.maximumPendingRequests {
            var counts: [String: Int] = [:]
            for connection in pending { counts[connection.address, default: 0] += 1 }
            let most = counts.values.max() ?? 0
            // The oldest connection of the addresses that have the most.
            if let oldest = pending.first(where: { counts[$0.address] == most }) {
                evict(
                    oldest,
                    "\(pending.count) connections without a request head, \(most) of them from \(oldest.address)")
            }
        }
    }

    private func evict(_ connection: Connection, _ why: String) {
        statisticsSoFar.clientsRefused += 1
        report(.warning, "connection \(connection.id) (\(connection.peer)) closed to make room: \(why)")
        drop(connection, reason: nil)
    }

    /// Closes the connections past their deadline: a request head not in
    /// after ``Configuration/requestTimeoutSeconds``, a response not taken
    /// after ``Configuration/responseTimeoutSeconds``, a close not finished
    /// after ``Configuration/closingTimeoutSeconds``, and a WebSocket client
    /// that took no byte for ``Configuration/stalledClientSeconds`` while
    /// bytes waited for it.
    func enforceDeadlines() {
        let now = monotonicSeconds()
        for connection in connections where !connection.isClosed {
            let age = now - connection.stateSince
            let why: String
            switch connection.state {
            case .request:
                // From the accept: each byte of the head sets `stateSince` again.
                guard now - connection.acceptedAt > configuration.requestTimeoutSeconds else { continue }
                why = "no request head in time"
            case .responding:
                guard age > configuration.responseTimeoutSeconds else { continue }
                why = "it did not take its response in time"
            case .closing:
                guard age > configuration.closingTimeoutSeconds else { continue }
                why = "it did not finish closing in time"
            case .webSocket:
                guard !connection.queue.isEmpty, now - connection.lastWrite > configuration.stalledClientSeconds
                else { continue }
                why = "it took nothing for \(Int(configuration.stalledClientSeconds)) s"
            }
            statisticsSoFar.httpErrors += 1
            if connection.isWebSocket || connection.isClosing {
                drop(connection, reason: why)
            } else {
                report(.warning, "connection \(connection.id) (\(connection.peer)) closed: \(why)")
                drop(connection, reason: nil)
            }
        }
    }
}
