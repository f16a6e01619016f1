import MediaCore
import WebRTC

/// libFuzzer entry: the input as the bytes a WHIP endpoint sends back to
/// our client. The response is read, and a body is read as the answer the
/// client takes its ICE credentials, fingerprint, DTLS role and candidates
/// from; whatever it holds, nothing traps, a status read is a three-digit
/// number, and the ICE check schedule built from the answer's candidates
/// takes only unicast IPv4 ones and never lets out more than one check per
/// 50 ms before its 1 s deadline.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWHIP(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let response = try? WHIPResponse.parse(Array(UnsafeBufferPointer(start: data, count: size))) else {
        return 0
    }
    guard (100...999).contains(response.status) else { fatalError("status \(response.status)") }
    guard let answer = try? SessionOffer(parsing: response.body) else { return 0 }
    for section in answer.sections {
        _ = answer.usernameFragment(section)
        _ = answer.password(section)
        _ = answer.fingerprint(section)
        _ = answer.setup(section)
        _ = section.candidates.map { ($0.host, $0.port) }
    }
    var schedule = ICECheckSchedule(localAddress: UDPAddress(host: [127, 0, 0, 1], port: 9), deadline: 1)
    for section in answer.sections {
        for candidate in section.candidates {
            let parts = candidate.host.split(separator: ".").compactMap { UInt8($0) }
            guard parts.count == 4, let port = UInt16(exactly: candidate.port) else { continue }
            schedule.add(UDPAddress(host: parts, port: port))
        }
    }
    for taken in schedule.candidates where ICECheckSchedule.refusal(of: taken, familyByteCount: 4) != nil {
        fatalError("\(taken) taken")
    }
    var checks = 0
    for millisecond in 0..<1500 where schedule.nextCheck(at: Double(millisecond) / 1000) != nil { checks += 1 }
    guard checks <= 20, checks <= schedule.candidates.count * 5 else { fatalError("\(checks) checks") }
    return 0
}
