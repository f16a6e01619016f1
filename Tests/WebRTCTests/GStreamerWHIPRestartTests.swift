import FormatConv
// Our WHIP client's ICE restart against webrtcbin as the endpoint (Peers/gst_whip.py): webrtcbin 1.22 restarts ICE
// only through a new offer and answer, so its endpoint answers the restart's PATCH 501; the client says so, keeps
// its credentials, and the stream goes on bit-exact.
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

@Suite(
    .serialized,
    .enabled(
        if: GStreamerWebRTC.isAvailable,
        "needs GStreamer's webrtcbin, libnice and python3-gst-1.0 (scripts/bootstrap installs them)"))
struct GStreamerWHIPRestartTests {
    /// 50 frames at 25 per second, an ICE restart after 25: the PATCH gets 501 (the endpoint's log: POST 201,
    /// PATCH 501, DELETE 200), restartICE() throws naming it, the ice-ufrag is unchanged, and every frame webrtcbin
    /// wrote has the file's MD5.
    @Test func webrtcbinRefusesTheRestartAndMediaGoesOn() throws {
        let directory = try TemporaryDirectory()
        let input = try GStreamerWHIPMatrixTests.prepare(directory)
        var assembler = AccessUnitAssembler(codec: .h264)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: input)))
        let samples = (assembler.append(bytes) + assembler.finish()).compactMap {
            if case .sample(let sample) = $0 { sample } else { nil }
        }
        #expect(samples.count == 50)
        let output = directory.path("received.h264")
        let endpoint = try BackgroundProcess(
            "/usr/bin/python3",
            [GStreamerWHIPMatrixTests.script, "endpoint", output, GStreamerWHIPMatrixTests.token, "30"], in: directory)
        let port = try #require(
            GStreamerWHIPInteropTests.announcedPort(in: directory), "the webrtcbin endpoint printed no port")
        let client = try WHIPClient(
            url: "http://127.0.0.1:\(port)/whip", format: try VideoStreamFormat(samples[0].formatDescription),
            token: GStreamerWHIPMatrixTests.token)
        try client.connect(timeoutSeconds: 10)
        let ufrag = client.iceUsernameFragment
        for (index, sample) in samples.enumerated() {
            if index == 25 {
                do {
                    try client.restartICE()
                    Issue.record("webrtcbin took an ICE restart")
                } catch {
                    #expect(error.message.hasPrefix("WHIP endpoint answered the ICE restart's PATCH with 501: "))
                }
            }
            try client.send(sample)
            let next = ContinuousClock.now + .milliseconds(40)
            while ContinuousClock.now < next { try client.poll(timeoutMilliseconds: 10) }
        }
        #expect(client.iceRestarts == 0)
        #expect(client.iceUsernameFragment == ufrag)
        client.endStream()
        for _ in 0..<20 { try client.poll(timeoutMilliseconds: 10) }
        #expect(try client.finish() == .deleted(status: 200))
        let result = endpoint.wait(timeout: 40)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        let received = try GStreamerWHIPInteropTests.lastJSONLine(result.stdout)
        let log = (received["log"] as? [[Any]])?.map { $0.map { "\($0)" } }
        #expect(log == [["POST", "/whip", "201"], ["PATCH", "/whip/1", "501"], ["DELETE", "/whip/1", "200"]])
        let source = try ffmpegFrameMD5(path: input)
        #expect(source.count == 50)
        #expect(try ffmpegFrameMD5(path: output) == source)
    }
}
