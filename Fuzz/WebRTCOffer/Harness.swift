import MediaCore
import WebRTC

/// libFuzzer entry: the input as an SDP offer. What parses is negotiated
/// against three stream profiles; an accepted offer gives an answer that
/// parses again with the chosen payload type in its video section and the
/// other sections rejected.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebRTCOffer(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let offer = try? SessionOffer(parsing: text) else { return 0 }
    for profile: [UInt8] in [[0x42, 0xE0, 0x1F], [0x4D, 0x40, 0x28], [0x64, 0x00, 0x33]] {
        guard let video = try? offer.negotiateVideo(streamProfileLevelID: profile) else { continue }
        let parameters = AnswerParameters(
            usernameFragment: "lite", password: "0123456789abcdefghijklmn",
            fingerprint: [UInt8](repeating: 1, count: 32),
            candidateHost: "127.0.0.1", candidatePort: 9, ssrc: 1, retransmissionSSRC: 2, sessionID: 1)
        let answer = offer.answer(video, parameters: parameters, streamProfileLevelID: profile)
        guard let parsed = try? SessionOffer(parsing: answer), parsed.sections.count == offer.sections.count else {
            fatalError("our answer does not parse:\n\(answer)")
        }
        let section = parsed.sections[video.sectionIndex]
        guard section.port == 9, section.formats.first == String(video.payloadType),
            parsed.sections.enumerated().allSatisfy({ $0.offset == video.sectionIndex || $0.element.port == 0 })
        else { fatalError("the answer's sections are wrong:\n\(answer)") }
    }
    return 0
}
