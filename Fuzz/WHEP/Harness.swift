import MediaCore
import WebRTC

/// libFuzzer entry: the input as the bytes a WHEP or WHIP endpoint reads
/// from a viewer's or publisher's connection. A request that reads whole
/// reads the same from any longer prefix of the input (nothing after its
/// body is looked at) and its body is exactly its Content-Length; a POST
/// body then goes through the offer parser and both negotiations the
/// endpoint runs (a viewer's, a publisher's), and an accepted offer's
/// answer parses again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWHEP(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let outcome = WHEPRequest.parse(bytes)
    guard case .complete(let request) = outcome else { return 0 }
    let length = Int(request.fields["content-length"] ?? "0") ?? -1
    guard request.body.count == length else { fatalError("body of \(request.body.count) bytes, length \(length)") }
    for cut in stride(from: 0, through: bytes.count, by: max(1, bytes.count / 16)) {
        if case .complete(let early) = WHEPRequest.parse(Array(bytes[0..<cut])), early != request {
            fatalError("a prefix of \(cut) bytes reads as another request")
        }
    }
    guard request.method == "POST",
        let offer = try? SessionOffer(parsing: String(decoding: request.body, as: UTF8.self))
    else { return 0 }
    let profile: [UInt8] = [0x42, 0xE0, 0x1F]
    for video in [try? offer.negotiateVideo(streamProfileLevelID: profile), try? offer.negotiateIncomingVideo()] {
        guard let video else { continue }
        let parameters = AnswerParameters(
            usernameFragment: "lite", password: "0123456789abcdefghijklmn",
            fingerprint: [UInt8](repeating: 1, count: 32),
            candidateHost: "127.0.0.1", candidatePort: 9, ssrc: 1, retransmissionSSRC: 2, sessionID: 1)
        let answer = offer.answer(video, parameters: parameters, streamProfileLevelID: profile)
        guard (try? SessionOffer(parsing: answer)) != nil else { fatalError("our answer does not parse:\n\(answer)") }
    }
    return 0
}
