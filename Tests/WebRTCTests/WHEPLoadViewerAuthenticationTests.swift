// The light WHEP viewers' SRTP check without decryption: packets libsrtp2 protects (an independent implementation of
// RFC 3711) count, a flipped byte is rejected, a repeated packet is a replay, across a sequence number wrap.
import Foundation
import TestSupport
import Testing

@testable import WebRTC

struct WHEPLoadViewerAuthenticationTests {
    /// An RTP packet (version 2, payload type 96, SSRC 0x11223344) with `payload`.
    static func packet(sequence: UInt16, marker: Bool, payload: [UInt8]) -> [UInt8] {
        [
            0x80, (marker ? 0x80 : 0) | 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0, 0, 0x0B, 0xB8,
            0x11, 0x22, 0x33, 0x44,
        ] + payload
    }

    static let keyAndSalt = (0..<30).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }

    /// Ten packets from libsrtp2 (sequence numbers 65530 through 3: the rollover counter becomes 1), every third
    /// with the marker bit.
    static func protected() throws -> [[UInt8]] {
        let sender = try SRTPContext(keyAndSalt: keyAndSalt, direction: .outbound, openSSLSender: false)
        return try (0..<10).map { step in
            let sequence = UInt16(truncatingIfNeeded: 65530 + step)
            let payload = (0..<(100 + step)).map { UInt8(truncatingIfNeeded: $0 ^ step) }
            return try sender.protectRTP(packet(sequence: sequence, marker: step % 3 == 2, payload: payload))
        }
    }

    static func take(
        _ datagrams: [[UInt8]], into counts: inout WHEPLoadViewers.Counts, _ check: SRTPInboundAuthenticator
    ) {
        for datagram in datagrams { datagram.withUnsafeBytes { counts.take($0, authenticator: check) } }
    }

    @Test func everyPacketOfLibsrtpCountsAcrossTheWrap() throws {
        let datagrams = try Self.protected()
        var counts = WHEPLoadViewers.Counts()
        Self.take(datagrams, into: &counts, try SRTPInboundAuthenticator(keyAndSalt: Self.keyAndSalt))
        #expect(counts.packets == 10 && counts.frames == 3 && counts.rejected == 0 && counts.replayed == 0)
        #expect(counts.bytes == datagrams.map(\.count).reduce(0, +))
    }

    @Test func aFlippedByteIsRejectedAndNotCounted() throws {
        let datagrams = try Self.protected()
        for position in [1, 5, 20, datagrams[4].count - 1] {
            var tampered = datagrams
            tampered[4][position] ^= 0x01
            var counts = WHEPLoadViewers.Counts()
            Self.take(tampered, into: &counts, try SRTPInboundAuthenticator(keyAndSalt: Self.keyAndSalt))
            #expect(counts.rejected == 1, "byte \(position)")
            #expect(counts.packets == 9 && counts.replayed == 0, "byte \(position)")
            #expect(counts.bytes == datagrams.map(\.count).reduce(0, +) - datagrams[4].count)
        }
    }

    @Test func otherKeysAreRejectedAndNoKeysCountAsRejected() throws {
        let datagrams = try Self.protected()
        var counts = WHEPLoadViewers.Counts()
        var otherKey = Self.keyAndSalt
        otherKey[0] ^= 0xFF
        Self.take(datagrams, into: &counts, try SRTPInboundAuthenticator(keyAndSalt: otherKey))
        #expect(counts.rejected == 10 && counts.packets == 0)
        datagrams[0].withUnsafeBytes { counts.take($0, authenticator: nil) }
        #expect(counts.rejected == 11)
    }

    @Test func aRepeatedPacketIsAReplayEvenOutOfOrder() throws {
        let datagrams = try Self.protected()
        var counts = WHEPLoadViewers.Counts()
        let check = try SRTPInboundAuthenticator(keyAndSalt: Self.keyAndSalt)
        // 0, 2, 1 (late but new), 9 (past the wrap), then 1, 9 and 2 again, and 5 (late, new).
        Self.take([0, 2, 1, 9, 1, 9, 2, 5].map { datagrams[$0] }, into: &counts, check)
        #expect(counts.packets == 5 && counts.replayed == 3 && counts.rejected == 0)
    }
}
