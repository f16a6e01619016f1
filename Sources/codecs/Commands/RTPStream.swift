import MediaIO
import RTPPayload

// What `codecs stream send` and `codecs stream receive` over RTP share: the
// rtp:// address and `--loss`/`--seed`. The commands are in RTPSendCommand.swift
// and RTPReceiveCommand.swift.

/// `rtp://HOST:PORT` (or `rtp://@HOST:PORT`, `rtp://@:PORT`).
struct RTPURL {
    var host: String
    var port: UInt16

    init?(_ text: String) {
        // MediaIO's URL reading: brackets, `@`, the port range checked.
        guard text.hasPrefix("rtp://"), let endpoint = try? URLEndpoint(url: text) else { return nil }
        host = endpoint.host
        port = UInt16(endpoint.port)
    }

}

/// `--loss PCT --seed N` as a fault injector, or nil without `--loss`.
func lossInjector(_ parsed: Arguments) throws -> PacketFaultInjector? {
    guard let text = parsed.value("loss") else {
        if parsed.value("seed") != nil { throw Arguments.UsageError(description: "--seed goes with --loss") }
        return nil
    }
    guard let percent = Double(text), percent.isFinite, (0...100).contains(percent) else {
        throw Arguments.UsageError(description: "--loss \(text): expected a percentage from 0 to 100")
    }
    let seed = try parsed.integer("seed", in: 0...Int.max, default: 1)!
    return PacketFaultInjector(seed: UInt64(seed), dropProbability: percent / 100)
}
