// The WebStreaming page's WebRTC player plots its received bit rate beside the latency plot.
import Foundation
import TestSupport
import Testing

@Suite(.serialized)
struct WebRTCPageRatePlotTests {
    /// The page with `?whep=URL` plays `serve --whep` in Chromium: `codecsWebRTC.stats()` carries a received rate per
    /// poll, none negative and some above 0, beside the inbound-rtp bytes received.
    @Test func thePagesWebRTCPlayerPlotsItsReceivedRate() throws {
        guard ChromiumCongestionTests.chromiumInstalled else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let frames = 60
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, size: "320x240", rate: 30, frames: frames, gop: 30)
        let whepPort = try freeTCPPort()
        let httpPort = try freeTCPPort()
        let whep = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "serve", "-i", input, "--whep", "127.0.0.1:\(whepPort)", "--linger", "5"], in: directory)
        let web = try BackgroundProcess(
            TestPaths.codecsExecutable.path, ["stream", "serve", "-i", input, "--http", "127.0.0.1:\(httpPort)"],
            in: directory)
        let page = "http://127.0.0.1:\(httpPort)/?whep=http://127.0.0.1:\(whepPort)/whep"
        let viewer = try runProcess(
            "/usr/bin/python3",
            [
                WHEPPeerTests.peers.appendingPathComponent("page_both_chromium.py").path, page, String(frames),
                "http://127.0.0.1:\(whepPort)/",
            ])
        _ = whep.wait(timeout: 60)
        _ = web.wait(timeout: 60)
        #expect(viewer.status == 0, "\(viewer.stderr.suffix(2000))")
        let both = try #require(try JSONSerialization.jsonObject(with: viewer.stdout) as? [String: Any])
        let webrtc = try #require(both["webrtc"] as? [String: Any], "\(both)")
        let rates = try #require(webrtc["rates"] as? [[String: Any]], "\(webrtc.keys)")
        let values = rates.compactMap { ($0["value"] as? NSNumber)?.doubleValue }
        #expect(!values.isEmpty)
        #expect(values.count == rates.count)
        #expect(values.allSatisfy { $0 >= 0 })
        #expect(values.contains { $0 > 0 })
        let inbound = try #require(webrtc["inbound"] as? [String: Any])
        let bytes = try #require((inbound["bytesReceived"] as? NSNumber)?.doubleValue)
        print(
            "page WebRTC rate plot: \(values.count) points, peak \(Int(values.max() ?? 0)) kbit/s, \(Int(bytes)) bytes")
    }
}
