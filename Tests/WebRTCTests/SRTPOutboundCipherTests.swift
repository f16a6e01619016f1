// Outbound SRTP through OpenSSL against libsrtp2: the same bytes for every packet (sequence wraps, retransmissions,
// several SSRCs, CSRCs and header extensions), and libsrtp2 takes them back to the plain packets.
import MediaCore
import Testing

@testable import WebRTC

struct SRTPOutboundCipherTests {
    /// An RTP packet: version 2, `csrcs` CSRCs, a one-byte-header extension of `extensionWords` words when above 0.
    static func packet(
        sequence: UInt16, ssrc: UInt32, payload: Int, csrcs: Int = 0, extensionWords: Int = 0, seed: Int
    ) -> [UInt8] {
        var bytes: [UInt8] = [0x80 | UInt8(csrcs) | (extensionWords > 0 ? 0x10 : 0), 96]
        bytes += [UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0x12, 0x34, 0x56, UInt8(seed & 0xFF)]
        bytes += [UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF), UInt8(ssrc & 0xFF)]
        for index in 0..<csrcs { bytes += [0, 0, 0, UInt8(index + 1)] }
        if extensionWords > 0 {
            bytes += [0xBE, 0xDE, 0, UInt8(extensionWords)]
            bytes += (0..<extensionWords * 4).map { UInt8(($0 + seed) & 0xFF) }
        }
        bytes += (0..<payload).map { UInt8(($0 * 7 + seed) & 0xFF) }
        return bytes
    }

    /// The packets: 40 on one SSRC across the sequence number wrap, a retransmission of two of them, 10 on a second
    /// SSRC with CSRCs and header extensions, payloads from 0 to 1200 bytes.
    static var packets: [[UInt8]] {
        var list: [[UInt8]] = []
        for step in 0..<40 {
            list.append(
                packet(sequence: 65_520 &+ UInt16(step), ssrc: 0x1111_2222, payload: (step * 97) % 1201, seed: step))
            if step == 25 {
                list.append(packet(sequence: 65_530, ssrc: 0x1111_2222, payload: (10 * 97) % 1201, seed: 10))
                list.append(packet(sequence: 2, ssrc: 0x1111_2222, payload: (18 * 97) % 1201, seed: 18))
            }
        }
        for step in 0..<10 {
            list.append(
                packet(
                    sequence: 1000 + UInt16(step), ssrc: 0xDEAD_BEEF, payload: 100 + step, csrcs: step % 3,
                    extensionWords: step % 4, seed: 100 + step))
        }
        return list
    }

    @Test func openSSLProtectsAsLibsrtpDoes() throws {
        for seed in 0..<4 {
            let key = (0..<30).map { UInt8(($0 * 31 + seed * 17 + 5) & 0xFF) }
            let ours = try SRTPContext(keyAndSalt: key, direction: .outbound, openSSLSender: true)
            let libsrtp = try SRTPContext(keyAndSalt: key, direction: .outbound, openSSLSender: false)
            let inbound = try SRTPContext(keyAndSalt: key, direction: .inbound)
            var unprotected = 0
            for (index, plain) in Self.packets.enumerated() {
                let protected = try ours.protectRTP(plain)
                #expect(protected == (try libsrtp.protectRTP(plain)), "packet \(index), key \(seed)")
                #expect(protected.count == plain.count + 10)
                // The two retransmissions are replays to the receiver; every other packet comes back.
                if let back = try? inbound.unprotectRTP(protected) {
                    #expect(back == plain)
                    unprotected += 1
                }
            }
            #expect(unprotected == Self.packets.count - 2)
        }
    }

    /// A packet too short for its header is refused with the reason, not sent garbled.
    @Test func refusesAPacketShorterThanItsHeader() throws {
        let context = try SRTPContext(keyAndSalt: Array(repeating: 1, count: 30), direction: .outbound)
        var packet = Self.packet(sequence: 1, ssrc: 1, payload: 0, csrcs: 3, seed: 0)
        packet.removeLast(8)
        #expect(throws: MediaError.self) { try context.protectRTP(packet) }
    }
}
