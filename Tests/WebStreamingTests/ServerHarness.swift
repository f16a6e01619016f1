import FormatConv
import Foundation
import MediaCore
import TestSupport
import WebStreaming

/// A ``WebStreamServer`` on 127.0.0.1, port 0, driven by its own thread: it
/// waits for `clients` WebSocket clients, sends `samples` (one every
/// `framePeriod` seconds), then closes (clients get 1001 once their queues
/// are written) — or, with no samples, serves until ``stop()``.
final class ServerHarness: @unchecked Sendable {
    let port: Int
    let page: [UInt8]
    private let lock = NSLock()
    private var stopRequested = false
    private var finalStatistics: WebStreamServer.Statistics?
    private var logMessages: [LogMessage] = []
    private let done = DispatchSemaphore(value: 0)

    init(
        configuration: WebStreamServer.Configuration = WebStreamServer.Configuration(),
        samples: [CompressedSample], clients: Int, framePeriod: Double = 0, drainSeconds: Double = 20,
        maximumLogLinesPerSecond: Int = 20
    ) throws {
        let server = try WebStreamServer(configuration)
        server.maximumLogLinesPerSecond = maximumLogLinesPerSecond
        port = server.port
        page = configuration.page
        let box = ServerBox(server)
        let thread = Thread { [self] in
            // The server's messages, logged on this thread only.
            CodecLog.withHandler({ message in self.lock.withLock { self.logMessages.append(message) } }) {
                serve(
                    box.server, samples: samples, clients: clients, framePeriod: framePeriod, drainSeconds: drainSeconds
                )
            }
        }
        thread.start()
    }

    private func serve(
        _ server: WebStreamServer, samples: [CompressedSample], clients: Int, framePeriod: Double, drainSeconds: Double
    ) {
        let deadline = Date().addingTimeInterval(30)
        while !isStopped, server.clientCount < clients, Date() < deadline {
            try? server.poll(timeoutMilliseconds: 10)
        }
        let start = Date()
        for (index, sample) in samples.enumerated() where !isStopped {
            while Date().timeIntervalSince(start) < Double(index) * framePeriod {
                try? server.poll(timeoutMilliseconds: 1)
            }
            try? server.poll(timeoutMilliseconds: 0)
            server.send(sample)
        }
        if samples.isEmpty {
            while !isStopped { try? server.poll(timeoutMilliseconds: 10) }
        }
        let statistics = server.statistics
        server.close(drainSeconds: drainSeconds)
        lock.withLock { finalStatistics = statistics }
        done.signal()
    }

    private var isStopped: Bool { lock.withLock { stopRequested } }

    /// Ends serving (with no samples) and waits for the thread; returns the
    /// statistics from just before the server closed.
    @discardableResult
    func stop() -> WebStreamServer.Statistics? {
        lock.withLock { stopRequested = true }
        return finish()
    }

    /// Waits (up to 60 s) for the thread to end after its samples.
    @discardableResult
    func finish() -> WebStreamServer.Statistics? {
        _ = done.wait(timeout: .now() + 60)
        done.signal()
        return lock.withLock { finalStatistics }
    }

    /// The text of the server's messages to `CodecLog`.
    var log: [String] { lock.withLock { logMessages.map(\.message) } }
    /// The server's messages to `CodecLog`, with their levels and subsystems.
    var messages: [LogMessage] { lock.withLock { logMessages } }
}

/// Hands a server to the thread that alone uses it from then on.
private final class ServerBox: @unchecked Sendable {
    let server: WebStreamServer
    init(_ server: WebStreamServer) { self.server = server }
}

/// The Python `websockets` client (Debian's python3-websockets) as a test
/// tool: `receive` collects every message until the server closes and prints
/// JSON; `--delay S` sleeps after each binary message (a slow reader, with a
/// 16 KiB socket receive buffer and read limit).
let pythonReceiveClient = """
    import asyncio, hashlib, json, sys, base64, socket, websockets
    async def main(port, delay, annexb_path):
        out = {"config": None, "units": [], "texts": [], "closeCode": None}
        chunks = []
        for attempt in range(200):  # a server started just now may not listen yet
            extra = {}
            try:
                if delay:
                    # A slow reader holds little: a 16 KiB receive buffer and read limit, so that the server
                    # sees it fall behind instead of the kernel's buffer growing to hold the whole stream.
                    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
                    extra = {"sock": sock, "read_limit": 16384}
                    sock.connect(("127.0.0.1", port))
                ws = await websockets.connect(f"ws://127.0.0.1:{port}/stream", max_size=None, max_queue=1,
                                              compression=None, **extra)
                break
            except OSError:
                if "sock" in extra: extra["sock"].close()
                await asyncio.sleep(0.05)
        if True:  # the block the connection is used in
            try:
                async for message in ws:
                    if isinstance(message, str):
                        parsed = json.loads(message)
                        if parsed.get("type") == "config": out["config"] = parsed
                        else: out["texts"].append(parsed)
                        continue
                    data = message[30:]
                    chunks.append(data)
                    out["units"].append({"version": message[0], "key": message[1] & 1,
                        "pts": int.from_bytes(message[2:10], "big", signed=True),
                        "dts": int.from_bytes(message[10:18], "big", signed=True),
                        "capture": int.from_bytes(message[18:26], "big", signed=True),
                        "seq": int.from_bytes(message[26:30], "big"),
                        "md5": hashlib.md5(data).hexdigest(), "size": len(data)})
                    if delay: await asyncio.sleep(delay)
            except websockets.ConnectionClosed:
                pass
            out["closeCode"] = ws.close_code
            await ws.close()
        if annexb_path:
            with open(annexb_path, "wb") as f: f.write(b"".join(chunks))
        print(json.dumps(out))
    asyncio.run(main(int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None))
    """

/// Runs ``pythonReceiveClient`` and returns its JSON text.
func runPythonReceiverOutput(port: Int, delay: Double = 0, annexBPath: String? = nil) throws -> Data {
    let result = try runProcess(
        "/usr/bin/python3", ["-c", pythonReceiveClient, String(port), String(delay)] + (annexBPath.map { [$0] } ?? []))
    guard result.status == 0 else {
        throw ProcessError("python client failed (\(result.status)): \(result.stderr.suffix(2000))")
    }
    return result.stdout
}

/// Runs ``pythonReceiveClient`` and decodes its JSON.
func runPythonReceiver(port: Int, delay: Double = 0, annexBPath: String? = nil) throws -> [String: Any] {
    try parseReceiverOutput(runPythonReceiverOutput(port: port, delay: delay, annexBPath: annexBPath))
}

func parseReceiverOutput(_ data: Data) throws -> [String: Any] {
    guard let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw ProcessError("the python client printed no JSON object")
    }
    return json
}
