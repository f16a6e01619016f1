import FormatConv
import MediaCore
import MediaIO
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// Sends Annex-B access units to every connected client of a `TCPListener`
/// (Sockets): the server of `codecs stream serve --port`, whose clients read
/// a raw H.264/HEVC elementary stream (`ffplay tcp://HOST:PORT`, say).
///
/// A client that connects mid-stream is held back until the next keyframe:
/// the sender writes parameter sets before every keyframe, so the client's
/// first bytes are a complete, decodable access unit (H.264 7.4.1.2.3 and
/// H.265 7.4.2.4.4: an IDR/IRAP access unit starts a coded video sequence).
/// A client whose connection fails is dropped and reported; the others carry on.
/// Clients coming and going are logged through `CodecLog` at the `info`
/// level, drops and refusals at `warning`, under ``logSubsystem``.
///
/// Each client has its own queue: an access unit is queued for every started
/// client and written as far as its socket takes it without waiting, so one
/// client that stops reading never holds up the others. A client whose queue
/// grows past ``maximumQueuedBytes`` has fallen too far behind and is dropped,
/// with the reason in the log. With `maximumQueuedBytes` nil (a sender that
/// measures its one receiver) every send waits until the client took it.
///
/// It is a ``LiveSink``: a ``LivePipeline`` sends to it, and its waits
/// accept new clients. One thread at a time may call it.
public final class StreamBroadcaster {
    private final class Client {
        let connection: TCPConnection
        var started = false
        var accessUnitsSent = 0
        var bytesSent = 0
        /// Bytes queued and not yet written, oldest first.
        var queue: [UInt8] = []
        var queueStart = 0
        var queuedBytes: Int { queue.count - queueStart }
        init(_ connection: TCPConnection) { self.connection = connection }
    }

    private let listener: TCPListener
    private var clients: [Client] = []
    /// The most bytes a client may fall behind before it is dropped; nil:
    /// sends wait for the client instead.
    public let maximumQueuedBytes: Int?
    /// The most clients connected at once; one more is told so (its
    /// connection closed at once, and logged). nil: no limit.
    public let maximumClients: Int?
    /// How a refusal's log line names the client limit, in parentheses at
    /// its end (a tool names its option here).
    public var maximumClientsName = "maximumClients"
    /// The most bytes queued for all clients together; past it the client
    /// furthest behind is dropped (and logged) until the total fits. nil: no
    /// limit beyond each client's own.
    public let maximumTotalQueuedBytes: Int?
    /// Clients refused because ``maximumClients`` were connected.
    public private(set) var refusedClients = 0
    /// The `CodecLog` subsystem of the broadcaster's messages.
    public static let logSubsystem = "livestreaming.broadcast"
    /// Turns samples into Annex-B gather lists (``LiveSink`` sends).
    var annexBWriter = AnnexBWriter(policy: .beforeEveryKeyframe)

    /// Sends to the clients `listener` accepts; the limits are described
    /// with their properties (nil: none).
    public init(
        listener: TCPListener, maximumQueuedBytes: Int? = nil, maximumClients: Int? = nil,
        maximumTotalQueuedBytes: Int? = nil
    ) {
        self.listener = listener
        self.maximumQueuedBytes = maximumQueuedBytes
        self.maximumClients = maximumClients
        self.maximumTotalQueuedBytes = maximumTotalQueuedBytes
    }

    /// The bytes queued for every client together.
    public var totalQueuedBytes: Int { clients.reduce(0) { $0 + $1.queuedBytes } }

    /// The number of connected clients.
    public var clientCount: Int { clients.count }

    /// Accepts clients that are waiting, for up to `timeoutMilliseconds`
    /// for the first of them (0: only those already waiting).
    public func acceptPending(timeoutMilliseconds: Int32 = 0) throws(MediaError) {
        var timeout = timeoutMilliseconds
        while let connection = try listener.accept(timeoutMilliseconds: timeout) {
            timeout = 0
            if let maximumClients, clients.count >= maximumClients {
                refusedClients += 1
                log(
                    .warning,
                    "client \(connection.peer) refused: \(clients.count) clients connected already (\(maximumClientsName))"
                )
                connection.close()
                continue
            }
            if let limit = maximumQueuedBytes {
                // The kernel's send buffer is part of how far a client may fall
                // behind: keep it within the same bound (Linux would let it grow
                // to megabytes on its own).
                connection.setSendBufferSize(min(limit, 1 << 20))
            }
            clients.append(Client(connection))
            log(.info, "client \(connection.peer) connected; it starts at the next keyframe")
            timeout = 0
        }
    }

    /// Sends one access unit, given as a gather list (FormatConv's `AnnexBWriter.gather(_:)`),
    /// to every client that has started, and starts waiting clients when
    /// `isKeyframe`. Returns the number of clients that received it.
    ///
    /// The list's ranges go out with `sendmsg`, not joined into one copy
    /// first: a client that keeps up costs no copy of the access unit. Only
    /// what a client's socket does not take at once is copied, into its queue.
    @discardableResult
    public func send(_ accessUnit: AnnexBGatherList, isKeyframe: Bool) -> Int {
        accessUnit.withBuffers { buffers in
            send(gathering: buffers, byteCount: accessUnit.byteCount, isKeyframe: isKeyframe)
        }
    }

    private func send(gathering buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>, byteCount: Int, isKeyframe: Bool)
        -> Int
    {
        var receivers = 0
        clients.removeAll { client in
            if !client.started {
                guard isKeyframe else { return false }
                client.started = true
            }
            do {
                if let limit = maximumQueuedBytes {
                    if client.queuedBytes == 0 {
                        // Nothing waiting: straight from the ranges; what the
                        // socket does not take now is queued.
                        client.queue.removeAll(keepingCapacity: true)
                        client.queueStart = 0
                        let sent = try client.connection.sendAvailable(gathering: buffers)
                        if sent < byteCount { GatheredWrite.append(buffers, from: sent, to: &client.queue) }
                    } else {
                        // Behind already: after the bytes queued before.
                        GatheredWrite.append(buffers, from: 0, to: &client.queue)
                        try flush(client)
                    }
                    if client.queuedBytes > limit {
                        log(
                            .warning,
                            "client \(client.connection.peer) dropped: it fell \(client.queuedBytes) bytes behind "
                                + "(more than \(limit)); it does not read fast enough")
                        client.connection.close()
                        return true
                    }
                } else {
                    try client.connection.send(gathering: buffers)
                }
            } catch {
                log(
                    .info,
                    "client \(client.connection.peer) left after \(client.accessUnitsSent) access units (\(error))")
                return true
            }
            client.accessUnitsSent += 1
            client.bytesSent += byteCount
            receivers += 1
            return false
        }
        if let cap = maximumTotalQueuedBytes {
            var total = totalQueuedBytes
            while total > cap,
                let index = clients.indices.max(by: { clients[$0].queuedBytes < clients[$1].queuedBytes })
            {
                let client = clients.remove(at: index)
                log(
                    .warning,
                    "client \(client.connection.peer) dropped: the clients' queues hold \(total) bytes together "
                        + "(more than \(cap)) and it is the furthest behind (\(client.queuedBytes) bytes)")
                client.connection.close()
                total -= client.queuedBytes
            }
        }
        return receivers
    }

    /// Writes as much of `client`'s queue as its socket takes now.
    private func flush(_ client: Client) throws(MediaError) {
        while client.queuedBytes > 0 {
            let sent = try client.connection.sendAvailable(client.queue[client.queueStart...])
            if sent == 0 { break }
            client.queueStart += sent
        }
        if client.queueStart > 1 << 20, client.queueStart * 2 > client.queue.count {
            client.queue.removeFirst(client.queueStart)
            client.queueStart = 0
        }
    }

    /// Starts every waiting client with the next access unit, keyframe or
    /// not (for a sender that tracks keyframes itself).
    public func startWaitingClients() {
        for client in clients { client.started = true }
    }

    /// Ends every connection after the bytes already sent; a client's queue
    /// gets up to `drainSeconds` to go out.
    public func closeAll(drainSeconds: Double = 5) {
        let deadline = LivePipeline.monotonicSeconds() + drainSeconds
        for client in clients where client.queuedBytes > 0 {
            while client.queuedBytes > 0, LivePipeline.monotonicSeconds() < deadline {
                guard client.connection.waitUntilWritable(milliseconds: 100) else { continue }
                guard (try? flush(client)) != nil else { break }
            }
            if client.queuedBytes > 0 {
                log(
                    .warning,
                    "client \(client.connection.peer): \(client.queuedBytes) bytes not taken in \(Int(drainSeconds)) s; closing"
                )
            }
        }
        for client in clients {
            client.connection.shutdownSending()
            log(
                .info,
                "client \(client.connection.peer): sent \(client.accessUnitsSent) access units, \(client.bytesSent) bytes"
            )
            client.connection.close()
        }
        clients.removeAll()
    }

    private func log(_ level: LogLevel, _ line: @autoclosure () -> String) {
        CodecLog.log(level, subsystem: Self.logSubsystem, line())
    }
}
