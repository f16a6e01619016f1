import Testing
import WebStreaming

/// The client-frame reader: masking, lengths, fragmentation, control frames
/// and the protocol errors of RFC 6455 5 and 7.4.
struct WebSocketFrameReaderTests {
    /// A client frame: masked with `mask` unless `masked` is false.
    static func frame(
        _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true, mask: [UInt8] = [1, 2, 3, 4],
        rsv: UInt8 = 0
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 255)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((payload.count >> shift) & 255)) }
        }
        if masked { bytes += mask }
        bytes += payload.enumerated().map { masked ? $0.element ^ mask[$0.offset % 4] : $0.element }
        return bytes
    }

    @Test(arguments: [0, 1, 125, 126, 127, 65535, 65536])
    func binaryOfLength(_ length: Int) {
        let payload = (0..<length).map { UInt8($0 % 251) }
        var reader = WebSocket.FrameReader(maximumMessageBytes: 1 << 20)
        let bytes = Self.frame(2, payload, mask: [0x37, 0xFA, 0x21, 0x3D])
        // Byte by byte for small frames, in two pieces for large ones: the
        // event comes exactly when the last byte arrives.
        var events: [WebSocket.Event] = []
        if length < 200 {
            for (index, byte) in bytes.enumerated() {
                let got = reader.append([byte])
                #expect(got.isEmpty == (index < bytes.count - 1))
                events += got
            }
        } else {
            events += reader.append(bytes[..<(bytes.count / 2)])
            #expect(events.isEmpty)
            events += reader.append(bytes[(bytes.count / 2)...])
        }
        #expect(events == [.binary(payload)])
    }

    /// RFC 6455 5.7: "Hello" masked, fragmented, with a ping in between.
    @Test func fragmentsAndInterleavedPing() {
        var reader = WebSocket.FrameReader()
        let bytes =
            Self.frame(1, Array("Hel".utf8), fin: false) + Self.frame(9, Array("p".utf8))
            + Self.frame(0, Array("l".utf8), fin: false) + Self.frame(0, Array("o".utf8))
            + Self.frame(10, []) + Self.frame(8, [0x03, 0xE8] + Array("bye".utf8))
            + Self.frame(1, Array("after close".utf8))
        #expect(
            reader.append(bytes) == [
                .ping(Array("p".utf8)), .text("Hello"), .pong([]), .close(code: 1000, reason: "bye"),
            ])
    }

    @Test(arguments: [
        ("unmasked", frame(2, [1], masked: false), UInt16(1002)),
        ("RSV1", frame(2, [1], rsv: 4), 1002),
        ("reserved opcode 3", frame(3, []), 1002),
        ("reserved opcode 11", frame(11, []), 1002),
        ("fragmented ping", frame(9, [], fin: false), 1002),
        ("long ping", frame(9, [UInt8](repeating: 0, count: 126)), 1002),
        ("lone continuation", frame(0, [1]), 1002),
        ("message inside a message", frame(1, [65], fin: false) + frame(1, [65]), 1002),
        ("text not UTF-8", frame(1, [0xC3, 0x28]), 1007),
        ("one-byte close", frame(8, [3]), 1002),
        ("too big", frame(2, [UInt8](repeating: 0, count: 1025)), 1009),
        (
            "too big in fragments",
            frame(2, [UInt8](repeating: 0, count: 600), fin: false) + frame(0, [UInt8](repeating: 0, count: 600)), 1009
        ),
    ])
    func protocolErrors(name: String, bytes: [UInt8], code: UInt16) {
        var reader = WebSocket.FrameReader(maximumMessageBytes: 1024)
        let events = reader.append(bytes)
        guard case .failure(let got, _)? = events.last else {
            Issue.record("\(name): no failure in \(events)")
            return
        }
        #expect(got == code, "\(name)")
        #expect(reader.append(Self.frame(2, [1])).isEmpty, "\(name): read on after a failure")
    }

    @Test func serverFrames() {
        #expect(
            WebSocket.frame(opcode: .text, payload: Array("Hello".utf8)) == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(WebSocket.frameHeader(opcode: .binary, payloadLength: 256) == [0x82, 0x7E, 0x01, 0x00])
        #expect(
            WebSocket.frameHeader(opcode: .binary, payloadLength: 65536) == [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0])
        #expect(WebSocket.closeFrame(code: 1001) == [0x88, 0x02, 0x03, 0xE9])
    }
}
