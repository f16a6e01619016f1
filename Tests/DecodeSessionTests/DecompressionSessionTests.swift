import DecodeSession
import FormatConv
import Foundation
import MediaCore
import Testing
import TestSupport

@Suite struct DecompressionSessionTests {
    @Test func md5MatchesKnownVector() {
        #expect(MD5.hex(Array("abc".utf8)) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(MD5.hex([]) == "d41d8cd98f00b204e9800998ecf8427e")
    }

    @Test func smokeDecodeMatchesFFmpeg() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try TestStreams.make("smoke", in: directory, codec: .h264, encoderArgs: ["-bf", "3", "-g", "12"])
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let session = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        let frames = try decodeAll(session, samples)
        let expected = try TestStreams.ffmpegMD5s(path, pixelFormat: "yuv420p")
        #expect(frames.map { md5Hex($0.pixelBuffer) } == expected)
        print(session.statistics, session.backend, session.drops)
    }
}
