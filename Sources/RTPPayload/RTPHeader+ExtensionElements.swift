// RFC 8285 header extension elements in an RTPHeader: read in the one-byte and
// two-byte forms, set in the form the header already uses (one-byte when it has
// none), and the transport-wide sequence number element read and written.
import FormatConv

/// One element of an RFC 8285 header extension: its local identifier (the
/// `a=extmap` id) and its data.
public struct RTPHeaderExtensionElement: Sendable, Hashable {
    /// The local identifier: 1 to 14 in the one-byte form, 1 to 255 in the two-byte form.
    public var id: UInt8
    /// The element's data (1 to 16 bytes in the one-byte form, 0 to 255 in the two-byte form).
    public var data: [UInt8]

    /// Creates the element `id` carrying `data`.
    public init(id: UInt8, data: [UInt8]) {
        self.id = id
        self.data = data
    }
}

extension RTPHeader {
    /// The profile value of the one-byte form (RFC 8285 4.2).
    public static let oneByteExtensionProfile: UInt16 = 0xBEDE
    /// The profile value of the two-byte form, its low 4 bits ("appbits") being zero (RFC 8285 4.3).
    public static let twoByteExtensionProfile: UInt16 = 0x1000

    /// The RFC 8285 elements of the header extension, in order; empty without an extension.
    /// - Throws: `.invalidData` when the extension uses neither RFC 8285 form, or an element runs past its end.
    public func extensionElements() throws(MediaError) -> [RTPHeaderExtensionElement] {
        guard let headerExtension else { return [] }
        let data = headerExtension.data
        var elements: [RTPHeaderExtensionElement] = []
        var offset = 0
        if headerExtension.profile == Self.oneByteExtensionProfile {
            while offset < data.count {
                let id = data[offset] >> 4
                let length = Int(data[offset] & 0x0F) + 1
                if id == 0 {
                    // A padding byte (its length nibble is zero by RFC 8285 4.2).
                    offset += 1
                    continue
                }
                if id == 15 { break }  // reserved: stop reading (RFC 8285 4.2)
                guard offset + 1 + length <= data.count else {
                    throw .invalidData(
                        "RTP one-byte header extension element \(id) of \(length) bytes runs past the "
                            + "\(data.count)-byte extension")
                }
                elements.append(
                    RTPHeaderExtensionElement(id: id, data: Array(data[(offset + 1)..<(offset + 1 + length)])))
                offset += 1 + length
            }
        } else if headerExtension.profile & 0xFFF0 == Self.twoByteExtensionProfile {
            while offset < data.count {
                let id = data[offset]
                if id == 0 {
                    offset += 1
                    continue
                }
                guard offset + 2 <= data.count else {
                    throw .invalidData("RTP two-byte header extension element \(id) has no length byte")
                }
                let length = Int(data[offset + 1])
                guard offset + 2 + length <= data.count else {
                    throw .invalidData(
                        "RTP two-byte header extension element \(id) of \(length) bytes runs past the "
                            + "\(data.count)-byte extension")
                }
                elements.append(
                    RTPHeaderExtensionElement(id: id, data: Array(data[(offset + 2)..<(offset + 2 + length)])))
                offset += 2 + length
            }
        } else {
            throw .invalidData(
                "RTP header extension profile 0x\(String(headerExtension.profile, radix: 16)) is neither RFC 8285 "
                    + "form (0xBEDE, 0x100X)")
        }
        return elements
    }

    /// The data of element `id`, or nil when the header has no such element (or no RFC 8285 extension).
    public func extensionElement(id: UInt8) -> [UInt8]? {
        (try? extensionElements())?.first { $0.id == id }?.data
    }

    /// Sets element `id` to `data`, replacing an element with that id and keeping the others. The one-byte form is
    /// written unless the header already uses the two-byte form or an element needs it.
    /// - Throws: `.invalidArgument` for an id or data length no form can carry, or when the header already has an
    ///   extension of another profile (it cannot hold elements).
    public mutating func setExtensionElement(id: UInt8, data: [UInt8]) throws(MediaError) {
        guard id >= 1 else { throw .invalidArgument("RTP header extension element id 0 is padding, not an element") }
        guard data.count <= 255 else {
            throw .invalidArgument("RTP header extension element of \(data.count) bytes is over 255 bytes")
        }
        var elements: [RTPHeaderExtensionElement]
        do {
            elements = try extensionElements()
        } catch {
            throw .invalidArgument("cannot add element \(id) to the RTP header extension: \(error.message)")
        }
        if let index = elements.firstIndex(where: { $0.id == id }) {
            elements[index].data = data
        } else {
            elements.append(RTPHeaderExtensionElement(id: id, data: data))
        }
        let wasTwoByte = headerExtension.map { $0.profile & 0xFFF0 == Self.twoByteExtensionProfile } ?? false
        let needsTwoByte = elements.contains { $0.id > 14 || $0.data.isEmpty || $0.data.count > 16 }
        var bytes: [UInt8] = []
        let profile: UInt16
        if wasTwoByte || needsTwoByte {
            profile = wasTwoByte ? headerExtension!.profile : Self.twoByteExtensionProfile
            for element in elements {
                bytes.append(element.id)
                bytes.append(UInt8(element.data.count))
                bytes += element.data
            }
        } else {
            profile = Self.oneByteExtensionProfile
            for element in elements {
                bytes.append(element.id << 4 | UInt8(element.data.count - 1))
                bytes += element.data
            }
        }
        while bytes.count % 4 != 0 { bytes.append(0) }
        headerExtension = (profile, bytes)
    }

    /// The transport-wide sequence number (draft-holmer-rmcat-transport-wide-cc-extensions-01 2) carried in element
    /// `extensionID`, or nil when the packet has none (or the element is not 2 bytes long).
    public func transportSequenceNumber(extensionID: UInt8) -> UInt16? {
        guard let data = extensionElement(id: extensionID), data.count == 2 else { return nil }
        return UInt16(data[0]) << 8 | UInt16(data[1])
    }
}

/// The transport-wide congestion control header extension's name in SDP and the packet-level helper that stamps it.
public enum TransportWideSequenceNumber {
    /// The `a=extmap` URI of the transport-wide sequence number header extension.
    public static let extensionURI = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    /// `packet` with its transport-wide sequence number element `extensionID` set to `sequenceNumber` (added, or
    /// replaced when it has one); the payload and padding are kept.
    /// - Throws: `.invalidData` when `packet` is not an RTP packet; `.invalidArgument` when its header extension
    ///   cannot hold elements.
    public static func stamping(
        _ packet: [UInt8], extensionID: UInt8, sequenceNumber: UInt16
    ) throws(MediaError) -> [UInt8] {
        var (header, payload) = try RTPHeader.parse(packet)
        try header.setExtensionElement(
            id: extensionID, data: [UInt8(sequenceNumber >> 8), UInt8(truncatingIfNeeded: sequenceNumber)])
        var output: [UInt8] = []
        output.reserveCapacity(header.size + payload.count + header.paddingLength)
        header.write(into: &output)
        output += packet[payload]
        output += packet[payload.upperBound...]
        return output
    }
}
