import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

/// The fuzz targets' seeds and any crashing inputs found since
/// (`Tests/Fixtures/fuzz/STUN`, `…/WebRTCOffer`) through the same entry
/// points; and what the seeds from independent peers must give.
struct WebRTCFuzzRegressionTests {
    static func files(_ target: String) -> [URL] {
        let folders = [
            TestPaths.repositoryRoot.appendingPathComponent("Fuzz/\(target)/seeds"),
            TestPaths.fixtures.appendingPathComponent("fuzz/\(target)"),
        ]
        return folders.flatMap {
            (try? FileManager.default.contentsOfDirectory(at: $0, includingPropertiesForKeys: nil)) ?? []
        }
    }

    static func seed(_ target: String, _ name: String) throws -> Data {
        try Data(contentsOf: TestPaths.repositoryRoot.appendingPathComponent("Fuzz/\(target)/seeds/\(name)"))
    }

    @Test func replaysTheSTUNInputs() throws {
        let inputs = Self.files("STUN")
        #expect(inputs.count >= 2)
        for url in inputs {
            let bytes = Array(try Data(contentsOf: url))
            var agent = ICELiteAgent(localUsernameFragment: "lite", localPassword: "0123456789abcdefghijklmn")
            _ = agent.receive(bytes, from: UDPAddress(host: [127, 0, 0, 1], port: 5000), at: .zero)
            if let message = try? STUNMessage.parse(bytes) {
                #expect(try STUNMessage.parse(message.encoded()).transactionID == message.transactionID)
            }
        }
    }

    /// The request seed was written by Python's hmac and zlib (not by this
    /// code): the agent answers it and takes the nomination.
    @Test func answersARequestBuiltByAnotherImplementation() throws {
        let bytes = Array(try Self.seed("STUN", "binding-request-use-candidate"))
        var agent = ICELiteAgent(localUsernameFragment: "lite", localPassword: "0123456789abcdefghijklmn")
        agent.remoteUsernameFragment = "Hx4f"
        let source = UDPAddress(host: [127, 0, 0, 1], port: 5000)
        guard case .respond = agent.receive(bytes, from: source, at: .zero) else {
            Issue.record("the request was not answered")
            return
        }
        #expect(agent.selectedAddress == source)
    }

    /// Offers Chromium 156 and aiortc 1.4 wrote on this machine's packages:
    /// both are answered for a Constrained Baseline stream, neither offers
    /// High (profile_idc 100) in packetization mode 1.
    @Test(arguments: ["chromium-audio-video.sdp", "aiortc-video.sdp"])
    func negotiatesTheOffersOfRealPeers(name: String) throws {
        let text = String(decoding: try Self.seed("WebRTCOffer", name), as: UTF8.self)
        let offer = try SessionOffer(parsing: text)
        let video = try offer.negotiateVideo(streamProfileLevelID: [0x42, 0xC0, 0x1E])
        let section = offer.sections[video.sectionIndex]
        #expect(section.rtpmaps[Int(video.payloadType)]?.name == "H264")
        #expect(section.formatParameters[Int(video.payloadType)]?["packetization-mode"] == "1")
        #expect(video.retransmissionPayloadType != nil)
        #expect(video.nack && video.pictureLossIndication)
        #expect(throws: MediaError.self) { try offer.negotiateVideo(streamProfileLevelID: [0x64, 0x00, 0x1F]) }
    }

    @Test func replaysTheOfferInputs() throws {
        for url in Self.files("WebRTCOffer") {
            let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
            guard let offer = try? SessionOffer(parsing: text),
                let video = try? offer.negotiateVideo(streamProfileLevelID: [0x42, 0xE0, 0x1F])
            else { continue }
            let parameters = AnswerParameters(
                usernameFragment: "lite", password: "0123456789abcdefghijklmn",
                fingerprint: [UInt8](repeating: 1, count: 32), candidateHost: "127.0.0.1", candidatePort: 9, ssrc: 1,
                retransmissionSSRC: 2, sessionID: 1)
            let answer = try SessionOffer(
                parsing: offer.answer(video, parameters: parameters, streamProfileLevelID: [0x42, 0xE0, 0x1F]))
            #expect(answer.sections.count == offer.sections.count)
        }
    }
}
