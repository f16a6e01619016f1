// The CLI's endpoint options of this area: `--ice-server` on `receive
// whip://` (the exact Link fields of OPTIONS), a bad one refused with a
// usage error, and `serve --whep … --listen ::1` listening on IPv6.
import Foundation
import TestSupport
import Testing

@Suite(.serialized)
struct ICEOptionsCLITests {
    typealias Client = LoopbackHTTPClient

    @Test func receiveAdvertisesTheICEServersGiven() throws {
        let directory = try TemporaryDirectory()
        let port = try freeTCPPort()
        let endpoint = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "receive", "whip://127.0.0.1:\(port)/live", "-o", directory.path("out.h264"), "--timeout",
                "30", "--ice-server", "stun:127.0.0.1:3478", "--ice-server",
                "turn:127.0.0.1:3478?transport=udp,user,pass",
            ], in: directory)
        #expect(tcpPortListens(port, within: 10))
        let options = try Client.fetch(port: port, Client.request("OPTIONS", "/live"))
        endpoint.signal(SIGINT)
        endpoint.wait(timeout: 10)
        #expect(options.status == 204)
        #expect(
            options.head.components(separatedBy: "\r\n").filter { $0.hasPrefix("Link:") } == [
                "Link: <stun:127.0.0.1:3478>; rel=\"ice-server\"",
                "Link: <turn:127.0.0.1:3478?transport=udp>; rel=\"ice-server\"; username=\"user\"; "
                    + "credential=\"pass\"; credential-type=\"password\"",
            ])
    }

    @Test func aBadICEServerIsAUsageError() throws {
        let result = try runProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "whip://127.0.0.1:9/live", "-o", "out.h264", "--ice-server", "turn:127.0.0.1"])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains(
                "--ice-server: ICE server turn:127.0.0.1: a TURN server needs URL,USERNAME,CREDENTIAL"),
            "\(result.stderr)")
    }

    /// `--listen ::1` replaces the host of `--whep`: the endpoint prints its IPv6 URL and answers there.
    @Test func serveListensOnTheAddressGiven() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 10, gop: 5)
        let port = try freeTCPPort()
        let tool = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "serve", "-i", input, "--whep", "127.0.0.1:\(port)", "--listen", "::1", "--wait-viewers", "1"],
            in: directory)
        var printed = false
        for _ in 0..<500 where !printed {
            usleep(20_000)
            printed = WHIPSendExitTests.logs(in: directory).contains("at http://[::1]:\(port)/whep")
        }
        tool.signal(SIGINT)
        let result = tool.wait(timeout: 10)
        #expect(printed, "\(result.stderr)")
    }
}
