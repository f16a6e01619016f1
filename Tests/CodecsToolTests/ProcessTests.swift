import Foundation
import TestSupport
import Testing

/// TestSupport's `runProcess`, which every tool test goes through.
struct ProcessTests {
    /// A child that reads one byte of a large input and exits closes the pipe
    /// while the rest is still being written: the write meets `EPIPE` (and,
    /// unless ignored, `SIGPIPE`, which would end this test process).
    @Test(arguments: [1, 4096])
    func childThatStopsReadingEarlyIsNotAnError(bytesRead: Int) throws {
        let input = Data(repeating: 0x5A, count: 8 << 20)
        let result = try runProcess("head", ["-c", "\(bytesRead)"], stdin: input)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == input.prefix(bytesRead))
    }

    @Test func childThatReadsEverythingGetsAllOfIt() throws {
        var input = Data(repeating: 0, count: 1 << 20)
        input.withUnsafeMutableBytes { bytes in
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 7 &+ 3) }
        }
        let result = try runProcess("cat", [], stdin: input)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == input)
    }

    @Test func exitStatusAndStandardErrorComeBack() throws {
        let result = try runProcess("sh", ["-c", "echo problem >&2; exit 3"])
        #expect(result.status == 3)
        #expect(result.stderr == "problem\n")
    }
}
