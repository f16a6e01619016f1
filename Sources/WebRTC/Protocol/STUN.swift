import MediaCore

/// A UDP transport address: an IPv4 (4 bytes) or IPv6 (16 bytes) host and a
/// port.
public struct UDPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address bytes in network order: 4 for IPv4, 16 for IPv6.
    public var host: [UInt8]
    /// The UDP port.
    public var port: UInt16

    /// Creates an address; traps unless `host` has 4 or 16 bytes.
    public init(host: [UInt8], port: UInt16) {
        precondition(host.count == 4 || host.count == 16, "a UDP address has 4 or 16 address bytes")
        self.host = host
        self.port = port
    }

    /// `a.b.c.d` for IPv4; for IPv6 the RFC 5952 text (lowercase hex groups, the longest run of two or more zero
    /// groups, the first of equal runs, as `::`): `::1`, `fd00::2`.
    public var hostText: String {
        if host.count == 4 { return host.map { String($0) }.joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(host[$0]) << 8 | UInt16(host[$0 + 1]) }
        var best = (start: 0, count: 0)
        var index = 0
        while index < 8 {
            var end = index
            while end < 8 && groups[end] == 0 { end += 1 }
            if end - index > best.count { best = (index, end - index) }
            index = max(end, index + 1)
        }
        let text = { (part: ArraySlice<UInt16>) in part.map { String($0, radix: 16) }.joined(separator: ":") }
        guard best.count >= 2 else { return text(groups[...]) }
        return text(groups[..<best.start]) + "::" + text(groups[(best.start + best.count)...])
    }

    /// `a.b.c.d:port` for IPv4, `[x:x:…]:port` for IPv6.
    public var description: String { host.count == 4 ? "\(hostText):\(port)" : "[\(hostText)]:\(port)" }
}

/// A STUN message (RFC 8489): the header's method, class and transaction
/// ID, and the attributes in order.
///
/// ```swift
/// let message = try STUNMessage.parse(datagram)
/// guard message.verifyIntegrity(key: Array(password.utf8)), message.verifyFingerprint() else { return }
/// var response = STUNMessage(
///     method: STUNMessage.bindingMethod, messageClass: .successResponse, transactionID: message.transactionID)
/// response.attributes.append(.xorMappedAddress(peer, transactionID: message.transactionID))
/// socket.send(response.encoded(integrityKey: Array(password.utf8), fingerprint: true), to: peer)
/// ```
///
/// The parser takes bytes and nothing else: it checks the header (the two
/// zero bits, the length, the magic cookie), reads each attribute's type,
/// length and padding, and notes where MESSAGE-INTEGRITY and FINGERPRINT
/// start so that both can be verified over the bytes as received.
/// Attributes after MESSAGE-INTEGRITY other than FINGERPRINT, and after
/// FINGERPRINT, are ignored (RFC 8489 14.5, 14.7). It does no long-term
/// credentials, no MESSAGE-INTEGRITY-SHA256 and no TURN.
public struct STUNMessage: Sendable, Hashable {
    /// The message class (RFC 8489 5).
    public enum MessageClass: UInt8, Sendable, Hashable {
        case request = 0
        case indication = 1
        case successResponse = 2
        case errorResponse = 3
    }

    /// One attribute: its type and its value without padding.
    public struct Attribute: Sendable, Hashable {
        /// The attribute type (``STUNAttributeType``).
        public var type: UInt16
        /// The value's bytes, without the padding to 4 bytes.
        public var value: [UInt8]

        /// Creates an attribute of `type` with `value`.
        public init(type: UInt16, value: [UInt8]) {
            self.type = type
            self.value = value
        }
    }

    /// The magic cookie (RFC 8489 5).
    public static let magicCookie: UInt32 = 0x2112_A442
    /// The binding method.
    public static let bindingMethod: UInt16 = 0x0001
    /// The most bytes a message may have here (a UDP datagram's worth).
    public static let maximumBytes = 1500

    /// The 12-bit method (``bindingMethod`` for ICE).
    public var method: UInt16
    /// Request, indication, success or error response.
    public var messageClass: MessageClass
    /// 12 bytes.
    public var transactionID: [UInt8]
    /// The attributes in order; when parsed, those after MESSAGE-INTEGRITY other than FINGERPRINT are left out.
    public var attributes: [Attribute]
    /// The bytes as parsed (empty for a message built here).
    public private(set) var raw: [UInt8] = []
    /// Where MESSAGE-INTEGRITY's attribute header starts in ``raw``.
    public private(set) var integrityOffset: Int?
    /// Where FINGERPRINT's attribute header starts in ``raw``.
    public private(set) var fingerprintOffset: Int?

    /// Creates a message to encode; traps unless `transactionID` has 12 bytes and `method` fits 12 bits.
    public init(method: UInt16, messageClass: MessageClass, transactionID: [UInt8], attributes: [Attribute] = []) {
        precondition(transactionID.count == 12, "a STUN transaction ID has 12 bytes")
        precondition(method < 0x1000, "a STUN method has 12 bits")
        self.method = method
        self.messageClass = messageClass
        self.transactionID = transactionID
        self.attributes = attributes
    }

    /// Whether `bytes` starts like a STUN message: the first byte in 0...3
    /// (RFC 7983) and the magic cookie in place.
    public static func looksLikeSTUN(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count >= 20 else { return false }
        let start = bytes.startIndex
        let b = { (i: Int) in bytes[bytes.index(start, offsetBy: i)] }
        return b(0) < 4 && b(4) == 0x21 && b(5) == 0x12 && b(6) == 0xA4 && b(7) == 0x42
    }

    /// Reads one message.
    ///
    /// - Throws: `.invalidData` naming what is wrong: fewer than 20 bytes,
    ///   the top two bits set, a length that is not a multiple of 4 or
    ///   disagrees with the datagram, no magic cookie, an attribute running
    ///   past the end, a FINGERPRINT that is not the last attribute.
    public static func parse(_ bytes: [UInt8]) throws(MediaError) -> STUNMessage {
        guard bytes.count >= 20 else { throw .invalidData("STUN message of \(bytes.count) bytes: the header has 20") }
        guard bytes.count <= maximumBytes else {
            throw .invalidData("STUN message of \(bytes.count) bytes: more than \(maximumBytes)")
        }
        guard bytes[0] & 0xC0 == 0 else { throw .invalidData("STUN message with the top two bits set") }
        let type = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        guard length % 4 == 0 else { throw .invalidData("STUN message length \(length) is not a multiple of 4") }
        guard length + 20 == bytes.count else {
            throw .invalidData("STUN message length \(length) disagrees with the \(bytes.count)-byte datagram")
        }
        let cookie = UInt32(bytes[4]) << 24 | UInt32(bytes[5]) << 16 | UInt32(bytes[6]) << 8 | UInt32(bytes[7])
        guard cookie == magicCookie else { throw .invalidData("STUN message without the magic cookie") }
        // The class bits are 0x0100 (C1) and 0x0010 (C0); the method takes the rest.
        let classBits = UInt8((type >> 7) & 0x2 | (type >> 4) & 0x1)
        let method = (type & 0x000F) | (type & 0x00E0) >> 1 | (type & 0x3E00) >> 2
        var message = STUNMessage(
            method: method, messageClass: MessageClass(rawValue: classBits)!, transactionID: Array(bytes[8..<20]))
        message.raw = bytes
        var offset = 20
        while offset < bytes.count {
            guard offset + 4 <= bytes.count else { throw .invalidData("STUN attribute header cut short") }
            let attributeType = UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
            let attributeLength = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let padded = (attributeLength + 3) & ~3
            guard offset + 4 + padded <= bytes.count else {
                throw .invalidData(
                    "STUN attribute 0x\(String(attributeType, radix: 16)) of \(attributeLength) bytes runs past the end"
                )
            }
            if message.fingerprintOffset != nil {
                throw .invalidData("STUN attribute after FINGERPRINT")
            }
            let value = Array(bytes[(offset + 4)..<(offset + 4 + attributeLength)])
            switch attributeType {
            case STUNAttributeType.fingerprint:
                guard attributeLength == 4 else { throw .invalidData("STUN FINGERPRINT of \(attributeLength) bytes") }
                message.fingerprintOffset = offset
                message.attributes.append(Attribute(type: attributeType, value: value))
            case STUNAttributeType.messageIntegrity:
                guard message.integrityOffset == nil else { break }
                guard attributeLength == 20 else {
                    throw .invalidData("STUN MESSAGE-INTEGRITY of \(attributeLength) bytes")
                }
                message.integrityOffset = offset
                message.attributes.append(Attribute(type: attributeType, value: value))
            default:
                // After MESSAGE-INTEGRITY only FINGERPRINT counts.
                if message.integrityOffset == nil {
                    message.attributes.append(Attribute(type: attributeType, value: value))
                }
            }
            offset += 4 + padded
        }
        return message
    }

    /// The value of the first attribute of `type`.
    public func attribute(_ type: UInt16) -> [UInt8]? { attributes.first { $0.type == type }?.value }

    /// USERNAME as text.
    public var username: String? {
        attribute(STUNAttributeType.username).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The address in XOR-MAPPED-ADDRESS, if any and well formed.
    public var xorMappedAddress: UDPAddress? {
        guard let value = attribute(STUNAttributeType.xorMappedAddress), value.count >= 8 else { return nil }
        let port = (UInt16(value[2]) << 8 | UInt16(value[3])) ^ 0x2112
        let mask = Self.cookieBytes + transactionID
        switch value[1] {
        case 1 where value.count == 8: return UDPAddress(host: (0..<4).map { value[4 + $0] ^ mask[$0] }, port: port)
        case 2 where value.count == 20:
            return UDPAddress(host: (0..<16).map { value[4 + $0] ^ mask[$0] }, port: port)
        default: return nil
        }
    }

    static let cookieBytes: [UInt8] = [0x21, 0x12, 0xA4, 0x42]

    /// Whether MESSAGE-INTEGRITY is present and its HMAC-SHA1 over the
    /// message up to it (the length field counting up to its end) with
    /// `key` matches (RFC 8489 14.5; short-term credentials: the key is the
    /// password).
    public func verifyIntegrity(key: [UInt8]) -> Bool {
        guard let offset = integrityOffset else { return false }
        var covered = Array(raw[0..<offset])
        let length = offset + 24 - 20
        covered[2] = UInt8(length >> 8)
        covered[3] = UInt8(length & 0xFF)
        let expected = HMACSHA1.authenticate(key: key, message: covered)
        return constantTimeEqual(expected, Array(raw[(offset + 4)..<(offset + 24)]))
    }

    /// Whether FINGERPRINT is present and equals the CRC-32 of the message
    /// up to it, XOR 0x5354554E (RFC 8489 14.7).
    public func verifyFingerprint() -> Bool {
        guard let offset = fingerprintOffset else { return false }
        let expected = CRC32.checksum(raw[0..<offset]) ^ 0x5354_554E
        let stored =
            UInt32(raw[offset + 4]) << 24 | UInt32(raw[offset + 5]) << 16 | UInt32(raw[offset + 6]) << 8
            | UInt32(raw[offset + 7])
        return expected == stored
    }

    /// The message's bytes: the header, the attributes (padded with zeros),
    /// then MESSAGE-INTEGRITY over all that when `integrityKey` is given,
    /// then FINGERPRINT when asked. Attributes of those two types in
    /// ``attributes`` are left out (they are computed).
    public func encoded(integrityKey: [UInt8]? = nil, fingerprint: Bool = false) -> [UInt8] {
        let type =
            (method & 0x000F) | (method & 0x0070) << 1 | (method & 0x0F80) << 2
            | UInt16(messageClass.rawValue & 0x1) << 4 | UInt16(messageClass.rawValue & 0x2) << 7
        var bytes: [UInt8] = [UInt8(type >> 8), UInt8(type & 0xFF), 0, 0] + Self.cookieBytes + transactionID
        for attribute in attributes
        where attribute.type != STUNAttributeType.messageIntegrity && attribute.type != STUNAttributeType.fingerprint {
            Self.append(attribute.type, attribute.value, to: &bytes)
        }
        if let integrityKey {
            Self.setLength(bytes.count - 20 + 24, in: &bytes)
            let mac = HMACSHA1.authenticate(key: integrityKey, message: bytes)
            Self.append(STUNAttributeType.messageIntegrity, mac, to: &bytes)
        }
        if fingerprint {
            Self.setLength(bytes.count - 20 + 8, in: &bytes)
            let crc = CRC32.checksum(bytes) ^ 0x5354_554E
            Self.append(
                STUNAttributeType.fingerprint,
                [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)], to: &bytes)
        }
        Self.setLength(bytes.count - 20, in: &bytes)
        return bytes
    }

    private static func append(_ type: UInt16, _ value: [UInt8], to bytes: inout [UInt8]) {
        bytes += [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(value.count >> 8), UInt8(value.count & 0xFF)]
        bytes += value
        bytes += [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
    }

    private static func setLength(_ length: Int, in bytes: inout [UInt8]) {
        bytes[2] = UInt8(length >> 8)
        bytes[3] = UInt8(length & 0xFF)
    }
}

extension STUNMessage.Attribute {
    /// XOR-MAPPED-ADDRESS (RFC 8489 14.2) for `address` in a message with
    /// `transactionID`.
    public static func xorMappedAddress(_ address: UDPAddress, transactionID: [UInt8]) -> Self {
        let mask = STUNMessage.cookieBytes + transactionID
        let port = address.port ^ 0x2112
        var value: [UInt8] = [0, address.host.count == 4 ? 1 : 2, UInt8(port >> 8), UInt8(port & 0xFF)]
        value += address.host.enumerated().map { $0.element ^ mask[$0.offset] }
        return Self(type: STUNAttributeType.xorMappedAddress, value: value)
    }

    /// USERNAME.
    public static func username(_ text: String) -> Self {
        Self(type: STUNAttributeType.username, value: Array(text.utf8))
    }

    /// A 32-bit attribute (PRIORITY).
    public static func uint32(_ type: UInt16, _ value: UInt32) -> Self {
        Self(
            type: type,
            value: [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)])
    }

    /// A 64-bit attribute (ICE-CONTROLLING, ICE-CONTROLLED tie breakers).
    public static func uint64(_ type: UInt16, _ value: UInt64) -> Self {
        Self(type: type, value: (0..<8).map { UInt8((value >> (56 - 8 * UInt64($0))) & 0xFF) })
    }
}

/// STUN attribute types used here (RFC 8489 18.3, RFC 8445 16.1).
public enum STUNAttributeType {
    /// USERNAME: in ICE, the receiver's ice-ufrag, a colon and the sender's.
    public static let username: UInt16 = 0x0006
    /// MESSAGE-INTEGRITY: HMAC-SHA1 over the message, 20 bytes.
    public static let messageIntegrity: UInt16 = 0x0008
    /// ERROR-CODE: class, number and reason phrase.
    public static let errorCode: UInt16 = 0x0009
    /// XOR-MAPPED-ADDRESS: the request's source address, masked with the magic cookie and transaction ID.
    public static let xorMappedAddress: UInt16 = 0x0020
    /// PRIORITY: the priority a peer-reflexive candidate would get (ICE).
    public static let priority: UInt16 = 0x0024
    /// USE-CANDIDATE: the controlling agent nominates the pair (ICE).
    public static let useCandidate: UInt16 = 0x0025
    /// SOFTWARE: the sender's name and version, as text.
    public static let software: UInt16 = 0x8022
    /// FINGERPRINT: the CRC-32 of the message XOR 0x5354554E, the last attribute.
    public static let fingerprint: UInt16 = 0x8028
    /// ICE-CONTROLLED: the sender is the controlled agent, with its tie breaker.
    public static let iceControlled: UInt16 = 0x8029
    /// ICE-CONTROLLING: the sender is the controlling agent, with its tie breaker.
    public static let iceControlling: UInt16 = 0x802A
}

/// CRC-32 with the ISO-HDLC polynomial (reflected 0xEDB88320), as zlib and
/// STUN's FINGERPRINT compute it.
package enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
}
