import Foundation
import TestSupport
import Testing

/// Our WHIP client against our WHIP endpoint, both given a bearer token:
/// the publish goes through with the endpoint's token and is refused with
/// another, and neither process prints the token.
@Suite(.serialized)
struct WHIPTokenEndToEndTests {
    @Test func aPublisherWithTheTokenIsRecordedAndOneWithoutIsRefused() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 20, gop: 10)
        let token = "endpoint-T0ken.value"
        try Data("\(token)\n".utf8).write(to: URL(fileURLWithPath: directory.path("token")))
        let output = directory.path("received.h264")
        let (endpoint, port) = try WHIPSendExitTests.startEndpoint(
            output: output, in: directory, ["--token-file", directory.path("token")])

        let stranger = try runProcess(
            TestPaths.codecsExecutable.path,
            WHIPSendExitTests.send(input, port: port, ["--token", "not-the-token"]))
        #expect(stranger.status == 1)
        #expect(stranger.stderr.contains("the endpoint refused the token (401)"), "\(stranger.stderr)")
        let anonymous = try runProcess(TestPaths.codecsExecutable.path, WHIPSendExitTests.send(input, port: port))
        #expect(anonymous.status == 1)
        #expect(anonymous.stderr.contains("401"), "\(anonymous.stderr)")

        let sent = try runProcess(
            TestPaths.codecsExecutable.path, WHIPSendExitTests.send(input, port: port, ["--token", token]))
        let received = endpoint.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr.suffix(2000))")
        #expect(received.status == 0, "\(received.stderr.suffix(2000))")
        #expect(try ffmpegFrameMD5(path: output) == ffmpegFrameMD5(path: input))
        for text in [
            stranger.stderr, anonymous.stderr, sent.stderr, received.stderr, WHIPSendExitTests.logs(in: directory),
        ] {
            #expect(!text.contains(token))
        }
    }
}
