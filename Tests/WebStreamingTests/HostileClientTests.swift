import Foundation
import TestSupport
import Testing
import WebStreaming

/// The server against strangers (raw sockets from Python, some bound to
/// 127.0.0.2 and on so that they come from other addresses): idle
/// connections, responses and close frames never read, control replies asked
/// for and never read, and requests from other sites.
@Suite(.serialized)
struct HostileClientTests {
    /// Helpers for the scripts: a connection from a chosen loopback address,
    /// the WebSocket upgrade, masked frames, and whether the server ended a
    /// connection.
    static let prelude = """
        import base64, json, os, socket, struct, sys, time
        port = int(sys.argv[1])
        def connect(address="127.0.0.1", small=False):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if small: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.bind((address, 0))
            s.settimeout(10)
            s.connect(("127.0.0.1", port))
            return s
        def upgrade(host=None, origin=None):
            key = base64.b64encode(os.urandom(16)).decode()
            text = (f"GET /stream HTTP/1.1\\r\\nHost: {host or f'127.0.0.1:{port}'}\\r\\nUpgrade: websocket\\r\\n"
                    f"Connection: Upgrade\\r\\nSec-WebSocket-Key: {key}\\r\\nSec-WebSocket-Version: 13\\r\\n")
            if origin: text += f"Origin: {origin}\\r\\n"
            return (text + "\\r\\n").encode()
        def status(s):
            head = b""
            while b"\\r\\n\\r\\n" not in head:
                c = s.recv(1)
                if not c: return None
                head += c
            return int(head.split(b" ")[1])
        def masked(opcode, payload):
            mask = os.urandom(4)
            return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        def ended(s):
            s.setblocking(False)
            try:
                while True:
                    data = s.recv(65536)
                    if not data: return True
            except BlockingIOError:
                return False
            except ConnectionResetError:
                return True

        """

    static func runScript(_ body: String, port: Int) throws -> String {
        let result = try runProcess("/usr/bin/python3", ["-c", prelude + body, String(port)])
        guard result.status == 0 else { throw ProcessError("script failed: \(result.stderr.suffix(3000))") }
        return String(decoding: result.stdout, as: UTF8.self)
    }

    /// Twelve idle connections from one address: the server keeps eight
    /// (the per-address bound) and closes the four oldest. Twenty-four more
    /// from six other addresses fill the bound of 32 on all pending
    /// requests; a real request from 127.0.0.1 then closes the oldest of the
    /// address holding the most, and is answered.
    @Test func idleStrangersDoNotDenyANewClient() throws {
        var configuration = WebStreamServer.Configuration()
        configuration.maximumPendingRequests = 32
        let harness = try ServerHarness(configuration: configuration, samples: [], clients: 0)
        let output = try Self.runScript(
            """
            import http.client
            crowd = [connect("127.0.0.20") for _ in range(12)]
            time.sleep(0.3)
            others = [connect(f"127.0.0.{2 + i % 6}") for i in range(24)]
            time.sleep(0.3)
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/stats")
            print("stats", c.getresponse().status)
            time.sleep(0.3)
            print("crowd", [i for i, s in enumerate(crowd) if ended(s)])
            print("others", sum(ended(s) for s in others))
            """, port: harness.port)
        let statistics = harness.stop()
        #expect(output == "stats 200\ncrowd [0, 1, 2, 3, 4]\nothers 0\n")
        #expect(statistics?.clientsRefused == 5)
        #expect(harness.log.filter { $0.contains("closed to make room") }.count == 5)
    }

    /// A request whose response is never read is closed at the response
    /// deadline (the client gets less than the page, then the end), and a
    /// head with two Content-Length fields is refused with 400.
    @Test func unreadResponsesEndAtTheirDeadline() throws {
        var configuration = WebStreamServer.Configuration()
        configuration.page = Array(repeating: UInt8(ascii: "x"), count: 8 << 20)
        configuration.socketSendBuffer = 4096
        configuration.responseTimeoutSeconds = 0.5
        let harness = try ServerHarness(configuration: configuration, samples: [], clients: 0)
        let output = try Self.runScript(
            """
            s = connect(small=True)
            s.sendall(f"GET / HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\n\\r\\n".encode())
            time.sleep(2)
            total = 0
            while True:
                data = s.recv(65536)
                if not data: break
                total += len(data)
            print("short", total < 8 << 20)
            for lengths in (("0", "5"), ("0", "0")):
                s = connect()
                fields = "".join(f"Content-Length: {n}\\r\\n" for n in lengths)
                s.sendall(f"GET /stats HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n{fields}\\r\\n".encode())
                print("two lengths", status(s))
            """, port: harness.port)
        harness.stop()
        #expect(output == "short True\ntwo lengths 400\ntwo lengths 400\n")
        #expect(harness.log.contains { $0.contains("did not take its response in time") })
    }

    /// A WebSocket client that sends pings (or "stats" requests) and reads
    /// nothing is closed once its replies waiting pass the bound; its
    /// writes then fail. The server holds nothing for it afterwards.
    @Test(arguments: ["ping", "stats"])
    func aClientThatDoesNotReadItsRepliesIsClosed(kind: String) throws {
        var configuration = WebStreamServer.Configuration()
        configuration.socketSendBuffer = 4096
        configuration.maximumControlBytes = 65536
        let harness = try ServerHarness(configuration: configuration, samples: [], clients: 0)
        let output = try Self.runScript(
            """
            s = connect(small=True)
            s.sendall(upgrade())
            print("status", status(s))
            frame = masked(9, os.urandom(125)) if sys.argv[2] == "ping" else masked(1, b"stats")
            burst, sent, start = frame * 100, 0, time.time()
            try:
                while time.time() - start < 10:
                    s.sendall(burst)
                    sent += len(burst)
                print("closed False")
            except (BrokenPipeError, ConnectionResetError, socket.timeout):
                print("closed True")
            """.replacingOccurrences(of: "sys.argv[2]", with: "\"\(kind)\""), port: harness.port)
        let statistics = harness.stop()
        #expect(output == "status 101\nclosed True\n")
        #expect(harness.log.contains { $0.contains("it does not read its replies") })
        #expect(statistics?.clientsConnected == 0)
        #expect(statistics?.totalQueuedBytes == 0)
    }

    /// Two clients that send a close frame and then read nothing fill a
    /// limit of two: a third is refused (503) until the closing deadline has
    /// ended them, then a fourth is taken (101).
    @Test func closingClientsCountAgainstTheLimitAndTimeOut() throws {
        var configuration = WebStreamServer.Configuration()
        configuration.socketSendBuffer = 4096
        configuration.maximumClients = 2
        configuration.closingTimeoutSeconds = 3
        let harness = try ServerHarness(configuration: configuration, samples: [], clients: 0)
        let output = try Self.runScript(
            """
            holders = []
            for _ in range(2):
                s = connect(small=True)
                s.sendall(upgrade())
                assert status(s) == 101
                # Pongs fill the socket buffers, so the close reply cannot be written.
                s.sendall(masked(9, os.urandom(125)) * 1000)
                s.sendall(masked(8, struct.pack(">H", 1000)))
                holders.append(s)
            time.sleep(0.3)
            third = connect()
            third.sendall(upgrade())
            print("third", status(third))
            time.sleep(4.5)
            print("holders ended", all(ended(s) for s in holders))
            fourth = connect()
            fourth.sendall(upgrade())
            print("fourth", status(fourth))
            """, port: harness.port)
        harness.stop()
        #expect(output == "third 503\nholders ended True\nfourth 101\n")
        #expect(harness.log.filter { $0.contains("did not finish closing in time") }.count == 2)
    }

    /// Log lines about clients are limited per second; those left out are
    /// counted in the next line that goes out, so every refusal is accounted for.
    @Test func logLinesAreLimited() throws {
        let harness = try ServerHarness(samples: [], clients: 0, maximumLogLinesPerSecond: 3)
        _ = try Self.runScript(
            """
            def refused():
                s = connect()
                s.sendall(upgrade(origin="http://evil.example"))
                assert status(s) == 403
            for _ in range(30): refused()
            time.sleep(1.2)
            refused()
            """, port: harness.port)
        harness.stop()
        let logged = harness.log
        let refusals = logged.filter { $0.contains("refused: Origin") }.count
        let leftOut = logged.compactMap { line -> Int? in
            guard line.hasSuffix("lines about clients left out (more than 3 a second)") else { return nil }
            return Int(line.prefix { $0 != " " })
        }
        #expect(refusals + leftOut.reduce(0, +) == 31)
        #expect(!leftOut.isEmpty && refusals < 31)
    }

    /// A ping sent in the same write as the upgrade request is answered.
    @Test func framesRightBehindTheUpgradeAreRead() throws {
        let harness = try ServerHarness(samples: [], clients: 0)
        let output = try Self.runScript(
            """
            s = connect()
            s.sendall(upgrade() + masked(9, b"early"))
            print("status", status(s))
            data = b""
            while b"\\x8a\\x05early" not in data:
                chunk = s.recv(4096)
                if not chunk: break
                data += chunk
            print("pong", b"\\x8a\\x05early" in data)
            """, port: harness.port)
        harness.stop()
        #expect(output == "status 101\npong True\n")
    }

    /// WebSocket clients from one address are bounded: a third from
    /// 127.0.0.2 gets 503, one from 127.0.0.3 is taken.
    @Test func clientsPerAddressAreBounded() throws {
        var configuration = WebStreamServer.Configuration()
        configuration.maximumClientsPerAddress = 2
        let harness = try ServerHarness(configuration: configuration, samples: [], clients: 0)
        let output = try Self.runScript(
            """
            held = []
            for address in ("127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.3"):
                s = connect(address)
                s.sendall(upgrade())
                held.append(s)
                print(address, status(s))
            """, port: harness.port)
        let statistics = harness.stop()
        #expect(output == "127.0.0.2 101\n127.0.0.2 101\n127.0.0.2 503\n127.0.0.3 101\n")
        #expect(statistics?.clientsRefused == 1)
    }

    /// A WebSocket client that reads nothing while the stream goes on is
    /// closed once it has taken no byte for the stall deadline.
    @Test func aClientThatTakesNothingIsClosed() throws {
        let directory = try TemporaryDirectory()
        let (_, samples) = try WebStreamServerTests.makeStream(
            codec: .h264, frames: 75, gop: 25, size: "640x360", bitrate: "4M", in: directory)
        var configuration = WebStreamServer.Configuration()
        configuration.socketSendBuffer = 4096
        configuration.stalledClientSeconds = 1
        let harness = try ServerHarness(
            configuration: configuration, samples: samples, clients: 1, framePeriod: 0.04, drainSeconds: 0)
        let output = try Self.runScript(
            """
            s = connect(small=True)
            s.sendall(upgrade())
            print("status", status(s))
            time.sleep(5)
            s.settimeout(10)
            total = 0
            while True:
                data = s.recv(65536)
                if not data: break
                total += len(data)
            print("ended")
            """, port: harness.port)
        harness.finish()
        #expect(output == "status 101\nended\n")
        #expect(harness.log.contains { $0.contains("it took nothing for 1 s") })
    }

    /// Hosts and origins: IP addresses and localhost are served, another
    /// name only when it is an allowed origin's host; a page from another
    /// site may not open the stream, its own origin, loopback and allowed
    /// origins may, and a client that sends no Origin (not a browser) may.
    @Test func hostAndOriginPolicy() throws {
        var configuration = WebStreamServer.Configuration()
        configuration.allowedOrigins = ["https://viewer.example"]
        let harness = try ServerHarness(configuration: configuration, samples: [], clients: 0)
        let output = try Self.runScript(
            """
            def get(host):
                s = connect()
                s.sendall(f"GET /stats HTTP/1.1\\r\\nHost: {host}\\r\\n\\r\\n".encode())
                return status(s)
            def ws(origin=None, host=None):
                s = connect()
                s.sendall(upgrade(host=host, origin=origin))
                code = status(s)
                s.close()
                return code
            out = {
                "ipv4": get(f"127.0.0.1:{port}"), "localhost": get(f"localhost:{port}"), "ipv6": get(f"[::1]:{port}"),
                "lan": get("192.168.1.5:8080"), "rebound": get(f"evil.example:{port}"),
                "allowedHost": get("viewer.example"),
                "noOrigin": ws(), "ownOrigin": ws(f"http://127.0.0.1:{port}"),
                "lanOwnOrigin": ws("http://192.168.1.5:8080", host="192.168.1.5:8080"),
                "ownOriginBehindTLS": ws("https://192.168.1.5", host="192.168.1.5"),
                "loopbackOrigin": ws("http://localhost:5173"), "otherSite": ws("http://evil.example"),
                "nullOrigin": ws("null"), "allowedOrigin": ws("https://viewer.example"),
                "allowedOtherScheme": ws("http://viewer.example"),
                "reboundOrigin": ws(f"http://evil.example:{port}", host=f"evil.example:{port}"),
            }
            print(json.dumps(out, sort_keys=True))
            """, port: harness.port)
        harness.stop()
        let statuses = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Int])
        #expect(
            statuses == [
                "ipv4": 200, "localhost": 200, "ipv6": 200, "lan": 200, "rebound": 403, "allowedHost": 200,
                "noOrigin": 101, "ownOrigin": 101, "lanOwnOrigin": 101, "ownOriginBehindTLS": 101,
                "loopbackOrigin": 101, "otherSite": 403,
                "nullOrigin": 403, "allowedOrigin": 101, "allowedOtherScheme": 403, "reboundOrigin": 403,
            ])
    }

    /// Two Content-Length fields, equal or not, make the message's length
    /// unknown (RFC 9112 6.3): 400.
    @Test(arguments: [("0", "5"), ("0", "0"), ("5", "0")])
    func twoContentLengthFieldsAreRefused(first: String, second: String) {
        let text = "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: \(first)\r\ncontent-length: \(second)\r\n\r\n"
        #expect(
            HTTPRequest.parse(Array(text.utf8)[...])
                == .invalid(status: 400, reason: "more than one Content-Length field"))
    }

    @Test func originsAreNormalizedOrRefused() {
        #expect(WebStreamServer.normalizedOrigin("HTTPS://Viewer.Example/") == "https://viewer.example")
        #expect(WebStreamServer.normalizedOrigin("http://[::1]:8080") == "http://[::1]:8080")
        #expect(WebStreamServer.normalizedOrigin("http://10.0.0.2:80") == "http://10.0.0.2:80")
        for bad in [
            "null", "ftp://x", "http://", "http://x/page", "http://user@x", "http://x:port", "https://x?q", "x",
        ] {
            #expect(WebStreamServer.normalizedOrigin(bad) == nil, "\(bad)")
        }
    }
}
