// The WHIP client's media through a pacer (pacesMedia) against the library's own WHIP endpoint: a 50 KB keyframe
// waits in the pacer when sent and leaves no faster than the pacing rate allows.
import FormatConv
import Foundation
import MediaCore
import Testing
import WebRTC

@Suite(.serialized)
struct WHIPClientPacingTests {
    /// A keyframe of one IDR slice of `size` bytes (filler after the slice header) with `template`'s parameter
    /// sets.
    static func keyframe(size: Int, like template: CompressedSample) throws -> CompressedSample {
        let slice: [UInt8] = [0x65, 0x88, 0x80] + [UInt8](repeating: 0x5A, count: size - 3)
        return CompressedSample(
            data: try LengthPrefixed.write([slice], lengthSize: 4), formatDescription: template.formatDescription,
            pts: template.pts + MediaTime(value: 1, timescale: 1),
            dts: template.dts + MediaTime(value: 1, timescale: 1),
            duration: template.duration, isKeyframe: true)
    }

    /// A client that paces, connected to our endpoint (which answers with transport-cc): its start-up probes
    /// done and feedback taken, a 50 000-byte keyframe is sent. All of it waits in the pacer when `send` returns
    /// (an unpaced client had sent every packet). It leaves as the client polls, in no less time than its bytes
    /// take at the fastest pacing rate the pacer had meanwhile, less what the pacer may let out at once (its
    /// 40 ms burst, one packet over) and what probes sent faster.
    @Test func aLargeKeyframeLeavesAtThePacingRate() throws {
        let server = try WHIPClientSessionTests.PolledServer()
        defer { server.stop() }
        let samples = try WHIPClientSessionTests.samples()
        let sps = try #require(samples[0].formatDescription.parameterSets.first { $0[0] & 0x1F == 7 })
        let client = try WHIPClient(
            url: "http://127.0.0.1:\(server.httpPort)/live", profileLevelID: Array(sps[1...3]))
        client.pacesMedia = true
        try client.connect(timeoutSeconds: 10)
        for sample in samples {
            try client.send(sample)
            try client.poll(timeoutMilliseconds: 10)
        }
        try WHIPClientCongestionTests.pollForFeedback(client, reports: 3)
        let drained = Date().addingTimeInterval(10)
        while Date() < drained, (client.pacer?.queuedPackets ?? 0) > 0 || client.pacer?.activeProbeClusterID != nil {
            try client.poll(timeoutMilliseconds: 5)
        }
        let before = try #require(client.pacer)
        #expect(before.queuedPackets == 0)

        // From before the send: the pacer's budget refills from when the keyframe was queued.
        let start = ContinuousClock.now
        try client.send(try Self.keyframe(size: 50_000, like: samples.last!))
        let queued = try #require(client.pacer)
        #expect(queued.queuedBytes >= 50_000)
        #expect(queued.statistics.bytesSent == before.statistics.bytesSent)
        var fastest = queued.pacingRate
        while (client.pacer?.queuedPackets ?? 0) > 0, start.duration(to: .now) < .seconds(20) {
            try client.poll(timeoutMilliseconds: 5)
            fastest = max(fastest, client.pacer?.pacingRate ?? 0)
        }
        let elapsed = start.duration(to: .now)
        let after = try #require(client.pacer)
        #expect(after.queuedPackets == 0)
        let probed = after.statistics.probeBytesSent - queued.statistics.probeBytesSent
        let burst = Double(fastest) * 0.040 / 8 + 1500
        let paced = Double(queued.queuedBytes - probed) - burst
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        #expect(seconds >= paced * 8 / Double(fastest), "pacing rate \(fastest), probes \(probed) bytes")
        try client.finish()
    }
}
