// TURN's methods and attributes (RFC 8656 17, 18) on STUN messages, ERROR-CODE,
// the long-term credential key (RFC 8489 9.2) and ChannelData (RFC 8656 12.4).
import MediaCore

/// The TURN methods (RFC 8656 17).
public enum TURNMethod {
    /// Allocate: asks for a relayed transport address.
    public static let allocate: UInt16 = 0x003
    /// Refresh: sets the allocation's lifetime; 0 deletes it.
    public static let refresh: UInt16 = 0x004
    /// Send indication: data from the client to a peer.
    public static let send: UInt16 = 0x006
    /// Data indication: data from a peer to the client.
    public static let data: UInt16 = 0x007
    /// CreatePermission: lets a peer's IP address send to the relayed address.
    public static let createPermission: UInt16 = 0x008
    /// ChannelBind: binds a channel number to a peer.
    public static let channelBind: UInt16 = 0x009
}

/// The TURN attribute types (RFC 8656 18) and the long-term credential ones
/// (RFC 8489 14.9, 14.10).
public enum TURNAttributeType {
    /// CHANNEL-NUMBER: the channel (0x4000 … 0x4FFF) and two reserved bytes.
    public static let channelNumber: UInt16 = 0x000C
    /// LIFETIME: seconds until the allocation expires.
    public static let lifetime: UInt16 = 0x000D
    /// XOR-PEER-ADDRESS: a peer's address, masked like XOR-MAPPED-ADDRESS.
    public static let xorPeerAddress: UInt16 = 0x0012
    /// DATA: the application data of a Send or Data indication.
    public static let data: UInt16 = 0x0013
    /// REALM: the server's realm, part of the long-term key.
    public static let realm: UInt16 = 0x0014
    /// NONCE: the server's nonce, echoed in authenticated requests.
    public static let nonce: UInt16 = 0x0015
    /// XOR-RELAYED-ADDRESS: the relayed transport address.
    public static let xorRelayedAddress: UInt16 = 0x0016
    /// REQUESTED-TRANSPORT: the relay's protocol (17, UDP).
    public static let requestedTransport: UInt16 = 0x0019
}

/// An ERROR-CODE attribute's value (RFC 8489 14.8): the code (300 … 699)
/// and the reason phrase.
public struct STUNErrorCode: Sendable, Hashable, CustomStringConvertible {
    /// The code: the class times 100 plus the number (401, 438).
    public var code: Int
    /// The reason phrase as the server wrote it.
    public var reason: String

    /// Creates an error code.
    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Reads the attribute's value: two reserved bytes, the class (3 bits),
    /// the number (0 … 99) and the reason phrase in UTF-8 (trailing NUL
    /// bytes, which some servers count in the length, left out).
    ///
    /// - Throws: `.invalidData` for fewer than 4 bytes, a class outside
    ///   3 … 6 or a number over 99.
    public init(parsing value: [UInt8]) throws(MediaError) {
        guard value.count >= 4 else { throw .invalidData("STUN ERROR-CODE of \(value.count) bytes: it needs 4") }
        let errorClass = Int(value[2] & 0x07)
        let number = Int(value[3])
        guard (3...6).contains(errorClass), number < 100 else {
            throw .invalidData("STUN ERROR-CODE with class \(errorClass) and number \(number)")
        }
        var reason = value[4...]
        while reason.last == 0 { reason = reason.dropLast() }
        self.init(code: errorClass * 100 + number, reason: String(decoding: reason, as: UTF8.self))
    }

    /// The attribute's value.
    public var value: [UInt8] { [0, 0, UInt8(code / 100), UInt8(code % 100)] + Array(reason.utf8) }

    /// `401 Unauthorized`.
    public var description: String { "\(code) \(reason)" }
}

extension STUNMessage {
    /// The address in an XOR-…-ADDRESS attribute of `type`
    /// (XOR-MAPPED-ADDRESS, XOR-PEER-ADDRESS, XOR-RELAYED-ADDRESS), if any and
    /// well formed.
    public func xorAddress(_ type: UInt16) -> UDPAddress? {
        guard let value = attribute(type) else { return nil }
        var mapped = STUNMessage(method: method, messageClass: messageClass, transactionID: transactionID)
        mapped.attributes = [Attribute(type: STUNAttributeType.xorMappedAddress, value: value)]
        return mapped.xorMappedAddress
    }

    /// ERROR-CODE, if present.
    ///
    /// - Throws: `.invalidData` when it is malformed.
    public func errorCode() throws(MediaError) -> STUNErrorCode? {
        guard let value = attribute(STUNAttributeType.errorCode) else { return nil }
        return try STUNErrorCode(parsing: value)
    }

    /// A 32-bit attribute's value (LIFETIME), if present with 4 bytes.
    public func uint32(_ type: UInt16) -> UInt32? {
        guard let value = attribute(type), value.count == 4 else { return nil }
        return value.reduce(0) { $0 << 8 | UInt32($1) }
    }
}

extension STUNMessage.Attribute {
    /// An XOR-…-ADDRESS attribute of `type` for `address` in a message with
    /// `transactionID`.
    public static func xorAddress(_ type: UInt16, _ address: UDPAddress, transactionID: [UInt8]) -> Self {
        Self(type: type, value: xorMappedAddress(address, transactionID: transactionID).value)
    }
}

/// The long-term credential key (RFC 8489 9.2.2, MD5): MD5 of
/// `username:realm:password`. The strings are used as given (no
/// OpaqueString preparation; plain ASCII credentials are unaffected).
public func stunLongTermKey(username: String, realm: String, password: String) -> [UInt8] {
    MD5.digest(Array("\(username):\(realm):\(password)".utf8))
}

/// A ChannelData message (RFC 8656 12.4): a channel number, a length and
/// the application data; over TCP padded to a multiple of 4 bytes.
public struct TURNChannelData: Sendable, Hashable {
    /// The channels a client may bind (RFC 8656 12).
    public static let channels: ClosedRange<UInt16> = 0x4000...0x4FFF

    /// The channel number.
    public var channel: UInt16
    /// The application data.
    public var data: [UInt8]

    /// Creates a message; traps unless `channel` is in ``channels`` and the
    /// data fits the 16-bit length.
    public init(channel: UInt16, data: [UInt8]) {
        precondition(Self.channels.contains(channel), "a TURN channel is in 0x4000 … 0x4FFF")
        precondition(data.count <= 0xFFFF, "ChannelData carries at most 65535 bytes")
        self.channel = channel
        self.data = data
    }

    /// Whether `firstByte` starts a ChannelData message (0x40 … 0x4F, RFC 7983).
    public static func startsChannelData(_ firstByte: UInt8) -> Bool { firstByte & 0xF0 == 0x40 }

    /// Reads one message; bytes past the length (padding) are ignored.
    ///
    /// - Throws: `.invalidData` for fewer than 4 bytes, a channel outside
    ///   0x4000 … 0x4FFF or a length past the end.
    public static func parse(_ bytes: [UInt8]) throws(MediaError) -> TURNChannelData {
        guard bytes.count >= 4 else { throw .invalidData("ChannelData of \(bytes.count) bytes: the header has 4") }
        let channel = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        guard channels.contains(channel) else {
            throw .invalidData("ChannelData on channel 0x\(String(channel, radix: 16)), outside 0x4000 … 0x4fff")
        }
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        guard 4 + length <= bytes.count else {
            throw .invalidData("ChannelData length \(length) runs past the \(bytes.count)-byte message")
        }
        return TURNChannelData(channel: channel, data: Array(bytes[4..<(4 + length)]))
    }

    /// The message's bytes; `padded` (over TCP) adds zeros to a multiple of 4.
    public func encoded(padded: Bool) -> [UInt8] {
        var bytes = [UInt8(channel >> 8), UInt8(channel & 0xFF), UInt8(data.count >> 8), UInt8(data.count & 0xFF)]
        bytes += data
        if padded { bytes += [UInt8](repeating: 0, count: (4 - data.count % 4) % 4) }
        return bytes
    }
}

/// Cuts a TCP byte stream from a TURN server into messages (RFC 8656
/// 12.5): STUN messages (20 bytes and their length) and ChannelData (4
/// bytes, the length, padding to 4).
public struct TURNStreamFramer: Sendable {
    private var buffered: [UInt8] = []

    /// An empty framer.
    public init() {}

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: [UInt8]) { buffered += bytes }

    /// The bytes held that do not make a whole message yet.
    public var pendingCount: Int { buffered.count }

    /// The next whole message (a ChannelData with its padding cut off), or
    /// nil until more bytes come.
    ///
    /// - Throws: `.invalidData` when the stream holds neither STUN (first
    ///   byte 0 … 3) nor ChannelData (0x40 … 0x4F); the stream cannot be
    ///   resynchronised after that.
    public mutating func next() throws(MediaError) -> [UInt8]? {
        guard buffered.count >= 4 else { return nil }
        let length = Int(buffered[2]) << 8 | Int(buffered[3])
        let whole: Int
        let kept: Int
        if TURNChannelData.startsChannelData(buffered[0]) {
            whole = 4 + (length + 3) & ~3
            kept = 4 + length
        } else if buffered[0] < 4 {
            whole = 20 + length
            kept = whole
        } else {
            throw .invalidData(
                "TURN stream byte 0x\(String(buffered[0], radix: 16)) starts neither STUN nor ChannelData")
        }
        guard buffered.count >= whole else { return nil }
        let message = Array(buffered[0..<kept])
        buffered.removeFirst(whole)
        return message
    }
}
