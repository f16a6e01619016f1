import Foundation
import TestSupport
import Testing

/// Short runs of scripts/soak_hostile_whep.py (`make soak-hostile-whep` runs
/// it for 60 s with 200 workers): 50 hostile workers of eleven kinds from ten
/// loopback addresses against `codecs stream serve --whep --token-file` for
/// 8 s with one aiortc viewer (with the token) joining 2 s in, and against
/// `codecs stream receive whip:// --token-file` for 6 s with our publisher.
@Suite(.serialized)
struct WHEPHostileSoakTests {
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/soak_hostile_whep.py").path
    }

    @Test func aViewerGetsEveryFrameWhileStrangersAttack() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, size: "176x144", rate: 25, frames: 200, gop: 25)
        let expected = try ffmpegFrameMD5(path: input)
        #expect(expected.count == 200)
        let framemd5 = directory.path("expected.framemd5")
        try Data(expected.map { "0, \($0)\n" }.joined().utf8).write(to: URL(fileURLWithPath: framemd5))
        let run = try runProcess(
            "/usr/bin/python3",
            [
                Self.script, "--codecs", TestPaths.codecsExecutable.path, "--input", input, "--framemd5", framemd5,
                "--gop", "25", "--viewer", WHEPPeerTests.peers.appendingPathComponent("whep_aiortc.py").path,
                "--connections", "50", "--addresses", "10", "--join-after", "2",
            ])
        #expect(run.status == 0, "\(run.stderr.suffix(3000))")
        let report = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        #expect(report["offerStatus"] as? Int == 201, "\(run.stderr.suffix(3000))")
        let frames = try #require(report["frames"] as? [String])
        let start = try #require(frames.first.flatMap { expected.firstIndex(of: $0) }, "\(frames.prefix(3))")
        #expect(start % 25 == 0, "a viewer starts at a keyframe")
        // aiortc hands a frame on when the next one starts: all but the last.
        #expect(frames == Array(expected[start..<(expected.count - 1)]))

        try Self.expectNothingForStrangers(report)
    }

    @Test func aPublisherIsRecordedBitExactWhileStrangersAttack() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, size: "176x144", rate: 25, frames: 150, gop: 25)
        let expected = try ffmpegFrameMD5(path: input)
        let framemd5 = directory.path("expected.framemd5")
        try Data(expected.map { "0, \($0)\n" }.joined().utf8).write(to: URL(fileURLWithPath: framemd5))
        let output = directory.path("received.h264")
        let run = try runProcess(
            "/usr/bin/python3",
            [
                Self.script, "--codecs", TestPaths.codecsExecutable.path, "--input", input, "--framemd5", framemd5,
                "--gop", "25", "--whip", "--output", output, "--connections", "50", "--addresses", "10",
                "--join-after", "2",
            ])
        #expect(run.status == 0, "\(run.stderr.suffix(3000))")
        let report = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        #expect(report["clientStatus"] as? Int == 0, "\(report["clientStderr"] ?? "")")
        #expect(try ffmpegFrameMD5(path: output) == expected)
        try Self.expectNothingForStrangers(report)
    }

    /// What every hostile kind got: 401 for offers and guessed session URLs
    /// (a connection the server closed unanswered counts as "no answer"), 400
    /// for two Content-Length fields, counts without ids from the
    /// statistics, no answer to a datagram; one session, the real client's.
    static func expectNothingForStrangers(_ report: [String: Any]) throws {
        let hostile = try #require(report["hostile"] as? [String: [String: Any]])
        func statuses(_ kind: String) -> [String: Int] { hostile[kind]?["statuses"] as? [String: Int] ?? [:] }
        for kind in ["offer", "offer-guess", "delete-guess", "patch-guess"] {
            #expect(Set(statuses(kind).keys).isSubset(of: ["401", "no answer"]), "\(kind): \(statuses(kind))")
            #expect(statuses(kind)["401", default: 0] > 0, "\(kind): \(statuses(kind))")
        }
        #expect(Set(statuses("two-lengths").keys).isSubset(of: ["400", "no answer"]), "\(statuses("two-lengths"))")
        #expect(statuses("two-lengths")["400", default: 0] > 0)
        #expect(statuses("stats")["200", default: 0] > 0)
        #expect(report["idsSeenByStrangers"] as? Int == 0)
        for kind in ["udp-junk", "stun-guess"] {
            #expect(hostile[kind]?["datagrams"] as? Int ?? 0 > 0)
            #expect(hostile[kind]?["replies"] as? Int == 0, "\(kind)")
        }
        let log = try #require(report["serverLog"] as? [String])
        #expect(log.filter { $0.contains(" joined from ") }.count == 1)
        #expect(log.filter { $0.contains(" joined from 127.0.0.1:") }.count == 1)
        #expect(try #require(report["maxRSSKiB"] as? Int) < 256 * 1024)
    }
}
