import MediaCore

/// Sends Annex-B access units to every connected client of a ``TCPListener``.
///
/// A client that connects mid-stream is held back until the next keyframe:
/// the sender writes parameter sets before every keyframe, so the client's
/// first bytes are a complete, decodable access unit (H.264 7.4.1.2.3 and
/// H.265 7.4.2.4.4: an IDR/IRAP access unit starts a coded video sequence).
/// A client whose connection fails is dropped and reported; the others carry on.
final class StreamBroadcaster {
    private final class Client {
        let connection: TCPConnection
        var started = false
        var accessUnitsSent = 0
        var bytesSent = 0
        init(_ connection: TCPConnection) { self.connection = connection }
    }

    private let listener: TCPListener
    private var clients: [Client] = []
    /// Called with a line of text when a client comes or goes.
    var log: (String) -> Void = { _ in }

    init(listener: TCPListener) {
        self.listener = listener
    }

    /// The number of connected clients.
    var clientCount: Int { clients.count }

    /// Accepts clients that are waiting, for up to `timeoutMilliseconds`
    /// for the first of them (0: only those already waiting).
    func acceptPending(timeoutMilliseconds: Int32 = 0) throws(MediaError) {
        var timeout = timeoutMilliseconds
        while let connection = try listener.accept(timeoutMilliseconds: timeout) {
            clients.append(Client(connection))
            log("client \(connection.peer) connected; it starts at the next keyframe")
            timeout = 0
        }
    }

    /// Sends one access unit to every client that has started, and starts
    /// waiting clients when `isKeyframe`. Returns the number of clients that
    /// received it.
    @discardableResult
    func send(_ accessUnit: [UInt8], isKeyframe: Bool) -> Int {
        var receivers = 0
        clients.removeAll { client in
            if !client.started {
                guard isKeyframe else { return false }
                client.started = true
            }
            do {
                try client.connection.send(accessUnit)
            } catch {
                log("client \(client.connection.peer) left after \(client.accessUnitsSent) access units (\(error))")
                return true
            }
            client.accessUnitsSent += 1
            client.bytesSent += accessUnit.count
            receivers += 1
            return false
        }
        return receivers
    }

    /// Starts every waiting client with the next access unit, keyframe or
    /// not (for a sender that tracks keyframes itself).
    func startWaitingClients() {
        for client in clients { client.started = true }
    }

    /// Ends every connection after the bytes already sent.
    func closeAll() {
        for client in clients {
            client.connection.shutdownSending()
            log(
                "client \(client.connection.peer): sent \(client.accessUnitsSent) access units, \(client.bytesSent) bytes"
            )
            client.connection.close()
        }
        clients.removeAll()
    }
}
