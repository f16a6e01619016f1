import MediaCore
import Sockets
import Testing

/// SocketAddress: one type for IPv4 and IPv6, parsed from and printed as
/// `HOST:PORT`, with a clear error for anything else.
struct SocketAddressTests {
    @Test(arguments: [("127.0.0.1:5004", "127.0.0.1", 5004), ("[::1]:5004", "::1", 5004), ("[0:0::1]:0", "::1", 0)])
    func parsesAndPrints(_ text: String, _ host: String, _ port: Int) throws {
        let address = try SocketAddress(parsing: text)
        #expect(address.host == host)
        #expect(address.port == UInt16(port))
        #expect(address.isIPv6 == host.contains(":"))
        #expect(try SocketAddress(parsing: address.description) == address)
    }

    @Test func printsBothFamilies() throws {
        #expect(try SocketAddress(parsing: "127.0.0.1:5004").description == "127.0.0.1:5004")
        #expect(try SocketAddress(parsing: "[::1]:5004").description == "[::1]:5004")
        #expect(try SocketAddress(parsing: "127.0.0.1:5004").addressBytes == [127, 0, 0, 1])
        #expect(try SocketAddress(parsing: "[::1]:5004").addressBytes == Array(repeating: 0, count: 15) + [1])
    }

    @Test func theUDPSocketAddressIsTheSameType() throws {
        let address: UDPSocket.Address = try SocketAddress(parsing: "127.0.0.1:5004")
        #expect(address == (try UDPSocket.Address(host: "127.0.0.1", port: 5004)))
    }

    @Test(arguments: [
        ("", "expected HOST:PORT"),
        ("127.0.0.1", "expected HOST:PORT"),
        ("127.0.0.1:", "expected a number from 0 to 65535"),
        ("127.0.0.1:65536", "expected a number from 0 to 65535"),
        ("127.0.0.1:+5", "expected a number from 0 to 65535"),
        ("127.0.0.1:50x4", "expected a number from 0 to 65535"),
        ("localhost:5004", "expected a numeric IPv4 or IPv6 address"),
        ("300.1.1.1:5004", "expected a numeric IPv4 or IPv6 address"),
        ("::1:5004", "write an IPv6 host in brackets"),
        ("[::1:5004", "needs a closing ]"),
        ("[::1]5004", "expected :PORT after [HOST]"),
        ("[garbage]:5004", "expected a numeric IPv4 or IPv6 address"),
    ])
    func rejectsGarbageSayingWhatIsWrong(_ text: String, _ reason: String) {
        let error = #expect(throws: MediaError.self) { try SocketAddress(parsing: text) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("address \(text): ") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }
}
