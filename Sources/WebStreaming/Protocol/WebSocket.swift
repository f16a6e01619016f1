import MediaCore

/// The server side of the WebSocket protocol (RFC 6455) without I/O: the
/// opening handshake, frames to send, and a reader for the client's frames.
public enum WebSocket {
    /// The GUID the accept key is made with (RFC 6455 1.3).
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a `Sec-WebSocket-Key`: base64 of the SHA-1
    /// of the key and the GUID (RFC 6455 4.2.2 item 5.4).
    public static func acceptKey(for key: String) -> String {
        Base64.encode(SHA1.hash(Array((key + guid).utf8)))
    }

    /// The `101 Switching Protocols` response for an upgrade request, or the
    /// status and reason to refuse it with (RFC 6455 4.2.1, 4.2.2).
    public static func handshakeResponse(for request: HTTPRequest) -> Result<[UInt8], HandshakeRefusal> {
        guard request.method == "GET" else { return .failure(HandshakeRefusal(status: 405, reason: "not GET")) }
        guard request.minorVersion >= 1 else {
            return .failure(HandshakeRefusal(status: 400, reason: "WebSocket needs HTTP/1.1"))
        }
        guard request.field("host") != nil else { return .failure(HandshakeRefusal(status: 400, reason: "no Host")) }
        guard request.field("upgrade", contains: "websocket"), request.field("connection", contains: "upgrade") else {
            return .failure(HandshakeRefusal(status: 426, reason: "not a WebSocket upgrade"))
        }
        guard request.field("sec-websocket-version") == "13" else {
            return .failure(HandshakeRefusal(status: 426, reason: "Sec-WebSocket-Version is not 13"))
        }
        guard let key = request.field("sec-websocket-key"), (try? Base64.decode(key))?.count == 16 else {
            return .failure(HandshakeRefusal(status: 400, reason: "Sec-WebSocket-Key is not 16 bytes in base64"))
        }
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(acceptKey(for: key))\r\n\r\n"
        return .success(Array(response.utf8))
    }

    /// Why an upgrade request was refused.
    public struct HandshakeRefusal: Error, Sendable, Hashable {
        /// The HTTP status to answer with (`400`, `426` …).
        public var status: Int
        /// What was wrong with the request, for the response body and logs.
        public var reason: String
    }

    /// Frame opcodes (RFC 6455 5.2, 11.8).
    public struct Opcode: RawRepresentable, Sendable, Hashable {
        /// The 4-bit opcode of the frame's first byte.
        public var rawValue: UInt8
        /// Creates the opcode `rawValue` (0 to 15).
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// A later fragment of a message (0).
        public static let continuation = Opcode(rawValue: 0)
        /// A UTF-8 text message (1).
        public static let text = Opcode(rawValue: 1)
        /// A binary message (2).
        public static let binary = Opcode(rawValue: 2)
        /// The closing handshake (8).
        public static let close = Opcode(rawValue: 8)
        /// A ping, to be answered with a pong carrying the same payload (9).
        public static let ping = Opcode(rawValue: 9)
        /// A pong, the answer to a ping (10).
        public static let pong = Opcode(rawValue: 10)
        /// Close, ping and pong (opcodes 8…15).
        public var isControl: Bool { rawValue & 8 != 0 }
    }

    /// Close status codes (RFC 6455 7.4.1).
    public enum CloseCode {
        /// 1000: the purpose of the connection was fulfilled.
        public static let normal: UInt16 = 1000
        /// 1001: the server is going away (shutting down).
        public static let goingAway: UInt16 = 1001
        /// 1002: the peer broke the protocol.
        public static let protocolError: UInt16 = 1002
        /// 1007: a text message was not UTF-8.
        public static let invalidPayload: UInt16 = 1007
        /// 1009: a message was longer than the reader takes.
        public static let messageTooBig: UInt16 = 1009
    }

    /// The header of an unmasked server frame carrying `payloadLength` bytes,
    /// final, with `opcode` (RFC 6455 5.2): 2, 4 or 10 bytes.
    public static func frameHeader(opcode: Opcode, payloadLength: Int) -> [UInt8] {
        var header: [UInt8] = [0x80 | opcode.rawValue]
        if payloadLength < 126 {
            header.append(UInt8(payloadLength))
        } else if payloadLength <= 0xFFFF {
            header += [126, UInt8(payloadLength >> 8), UInt8(truncatingIfNeeded: payloadLength)]
        } else {
            header.append(127)
            for shift in stride(from: 56, through: 0, by: -8) {
                header.append(UInt8(truncatingIfNeeded: UInt64(payloadLength) >> UInt64(shift)))
            }
        }
        return header
    }

    /// A whole unmasked server frame.
    public static func frame(opcode: Opcode, payload: some Collection<UInt8>) -> [UInt8] {
        frameHeader(opcode: opcode, payloadLength: payload.count) + payload
    }

    /// A close frame with `code` and a UTF-8 `reason` of at most 123 bytes.
    public static func closeFrame(code: UInt16, reason: String = "") -> [UInt8] {
        frame(opcode: .close, payload: [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)] + reason.utf8.prefix(123))
    }

    /// What the client sent, one event per message or control frame.
    public enum Event: Sendable, Hashable {
        case text(String)
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        /// The client's close frame: its code (nil when it gave none) and reason.
        case close(code: UInt16?, reason: String)
        /// The client broke the protocol: answer a close frame with `code`
        /// and end the connection.
        case failure(code: UInt16, reason: String)
    }

    /// Reads client frames (RFC 6455 5.2–5.5): every frame must be masked;
    /// RSV bits must be clear (no extensions are negotiated); control frames
    /// are final and at most 125 bytes and may come between the fragments of
    /// a message; a message is at most ``maximumMessageBytes`` long; text
    /// must be UTF-8. After a `.failure` or `.close` it reads nothing more.
    public struct FrameReader: Sendable {
        /// The longest message, in bytes, the reader assembles; a longer one fails with code 1009.
        public let maximumMessageBytes: Int
        private var buffer: [UInt8] = []
        private var bufferStart = 0
        private var fragmentOpcode: Opcode?
        private var fragments: [UInt8] = []
        private var ended = false

        /// Creates a reader that takes messages of up to `maximumMessageBytes` bytes.
        public init(maximumMessageBytes: Int = 65536) { self.maximumMessageBytes = maximumMessageBytes }

        /// Bytes received and not yet made into events.
        public var bufferedBytes: Int { buffer.count - bufferStart + fragments.count }

        /// Takes bytes from the connection and returns the events they complete.
        public mutating func append(_ bytes: some Collection<UInt8>) -> [Event] {
            guard !ended else { return [] }
            buffer += bytes
            var events: [Event] = []
            while !ended, let event = nextEvent() { events.append(event) }
            if bufferStart > 4096, bufferStart * 2 > buffer.count {
                buffer.removeFirst(bufferStart)
                bufferStart = 0
            }
            return events
        }

        private mutating func fail(_ code: UInt16, _ reason: String) -> Event {
            ended = true
            return .failure(code: code, reason: reason)
        }

        /// The next event from whole frames in the buffer, or nil for "read more".
        private mutating func nextEvent() -> Event? {
            while true {
                let available = buffer.count - bufferStart
                guard available >= 2 else { return nil }
                let b0 = buffer[bufferStart]
                let b1 = buffer[bufferStart + 1]
                let fin = b0 & 0x80 != 0
                guard b0 & 0x70 == 0 else { return fail(CloseCode.protocolError, "RSV bits set without an extension") }
                let opcode = Opcode(rawValue: b0 & 0x0F)
                guard [0, 1, 2, 8, 9, 10].contains(opcode.rawValue) else {
                    return fail(CloseCode.protocolError, "reserved opcode \(opcode.rawValue)")
                }
                guard b1 & 0x80 != 0 else { return fail(CloseCode.protocolError, "a client frame is not masked") }
                var headerLength = 2
                var length = UInt64(b1 & 0x7F)
                if length == 126 {
                    guard available >= 4 else { return nil }
                    length = UInt64(buffer[bufferStart + 2]) << 8 | UInt64(buffer[bufferStart + 3])
                    headerLength = 4
                } else if length == 127 {
                    guard available >= 10 else { return nil }
                    length = 0
                    for i in 0..<8 { length = length << 8 | UInt64(buffer[bufferStart + 2 + i]) }
                    guard length >> 63 == 0 else { return fail(CloseCode.protocolError, "64-bit length with MSB set") }
                    headerLength = 10
                }
                if opcode.isControl {
                    guard fin else { return fail(CloseCode.protocolError, "a fragmented control frame") }
                    guard length <= 125 else { return fail(CloseCode.protocolError, "a control frame over 125 bytes") }
                } else if length > UInt64(maximumMessageBytes - fragments.count) {
                    return fail(CloseCode.messageTooBig, "a message over \(maximumMessageBytes) bytes")
                }
                let maskStart = bufferStart + headerLength
                let payloadStart = maskStart + 4
                guard buffer.count - payloadStart >= Int(length) else { return nil }
                var payload = Array(buffer[payloadStart..<(payloadStart + Int(length))])
                for i in payload.indices { payload[i] ^= buffer[maskStart + i % 4] }
                bufferStart = payloadStart + Int(length)

                switch opcode {
                case .ping: return .ping(payload)
                case .pong: return .pong(payload)
                case .close:
                    ended = true
                    if payload.isEmpty { return .close(code: nil, reason: "") }
                    guard payload.count >= 2 else { return fail(CloseCode.protocolError, "a 1-byte close payload") }
                    guard let reason = String(validating: payload[2...], as: UTF8.self) else {
                        return fail(CloseCode.invalidPayload, "a close reason that is not UTF-8")
                    }
                    return .close(code: UInt16(payload[0]) << 8 | UInt16(payload[1]), reason: reason)
                case .continuation:
                    guard let started = fragmentOpcode else {
                        return fail(CloseCode.protocolError, "a continuation frame with no message started")
                    }
                    fragments += payload
                    guard fin else { continue }
                    let message = fragments
                    fragments = []
                    fragmentOpcode = nil
                    return dataEvent(started, message)
                default:
                    guard fragmentOpcode == nil else {
                        return fail(CloseCode.protocolError, "a new message inside a fragmented one")
                    }
                    guard fin else {
                        fragmentOpcode = opcode
                        fragments = payload
                        continue
                    }
                    return dataEvent(opcode, payload)
                }
            }
        }

        private mutating func dataEvent(_ opcode: Opcode, _ payload: [UInt8]) -> Event {
            guard opcode == .text else { return .binary(payload) }
            guard let text = String(validating: payload, as: UTF8.self) else {
                return fail(CloseCode.invalidPayload, "a text message that is not UTF-8")
            }
            return .text(text)
        }
    }
}
