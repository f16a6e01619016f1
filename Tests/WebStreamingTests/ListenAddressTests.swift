import MediaCore
import Testing
import WebStreaming

/// The page server listens on numeric IPv4 addresses only (it reads its
/// clients' addresses as IPv4): anything else is refused before a socket is made.
struct ListenAddressTests {
    @Test(arguments: ["::1", "::", "localhost", "127.0.0"])
    func aHostThatIsNotNumericIPv4IsRefused(_ host: String) {
        let error = #expect(throws: MediaError.self) {
            try WebStreamServer(WebStreamServer.Configuration(host: host, port: 0))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("listen address \(host): expected a numeric IPv4") == true)
    }

    @Test func loopbackIPv4Listens() throws {
        let server = try WebStreamServer(WebStreamServer.Configuration(host: "127.0.0.1", port: 0))
        #expect(server.port > 0)
        server.close(drainSeconds: 0)
    }
}
