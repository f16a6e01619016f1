import Foundation
import MediaCore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One client that connects to `codecs stream serve` and never reads must not
/// hold up the others: it is dropped once it falls `--client-buffer` bytes
/// behind, with the reason in the server's log, while a reading client gets
/// every frame.
@Test func aClientThatStopsReadingIsDroppedAndTheOthersCarryOn() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let clip = directory.path("clip.y4m")
    let frames = 150
    try writeClip(to: clip, frames: frames)
    let server = try BackgroundProcess(
        TestPaths.codecsExecutable.path,
        [
            "stream", "serve", "-i", clip, "--port", "0", "--listen", "127.0.0.1", "--no-pace", "--wait-clients", "2",
            "--client-buffer", "65536", "--keyint", "10", "--crf", "18",
        ])
    defer { server.terminate() }
    let port = try #require(server.waitForError { listeningPort($0) }, "\(server.standardError)")

    // The silent client: a small receive buffer, connected, never read.
    let silent = try silentClient(port: port)
    defer { close(silent) }

    let output = directory.path("received.y4m")
    let receiver = try runProcess(
        TestPaths.codecsExecutable.path, ["stream", "receive", "tcp://127.0.0.1:\(port)", "-o", output])
    #expect(receiver.status == 0, "\(receiver.stderr)")
    #expect(try ffmpegFrameMD5(path: output).count == frames, "\(receiver.stderr)")

    let served = server.wait()
    #expect(served.status == 0, "\(served.stderr)")
    let dropped = served.stderr.split(separator: "\n").filter { $0.contains("dropped: it fell") }
    #expect(dropped.count == 1, "\(served.stderr)")
    #expect(dropped.first?.contains("(more than 65536); it does not read fast enough") == true)
}

/// A silent client connected to 127.0.0.1:`port` with a small receive
/// buffer; the caller closes it.
private func silentClient(port: Int) throws -> Int32 {
    let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(silent >= 0)
    var small: Int32 = 4096
    _ = setsockopt(silent, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(silent, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    try #require(connected == 0)
    return silent
}

/// Memory is bounded in total, not only per client: with `--max-clients 4`
/// the fifth and later clients are closed at once, and with `--max-queue`
/// (1 MiB) below what the silent clients may each fall behind (4 MiB), the
/// one furthest behind is dropped as the total passes the cap. The stream is
/// lossless and paced, so the reading client keeps up on a busy machine. The reading
/// client gets every frame. (40 clients that never read used to take the
/// server to 702 MB.)
@Test func clientsAndTheirQueuesAreBoundedInTotal() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let clip = directory.path("clip.y4m")
    let frames = 150
    try writeClip(to: clip, frames: frames)
    let server = try BackgroundProcess(
        TestPaths.codecsExecutable.path,
        [
            "stream", "serve", "-i", clip, "--port", "0", "--listen", "127.0.0.1", "--wait-clients", "4",
            "--client-buffer", "4194304", "--max-clients", "4", "--max-queue", "1048576", "--keyint", "10", "--qp",
            "0",
        ])
    defer { server.terminate() }
    let port = try #require(server.waitForError { listeningPort($0) }, "\(server.standardError)")
    var silent: [Int32] = []
    defer { for descriptor in silent { close(descriptor) } }
    for _ in 0..<3 { silent.append(try silentClient(port: port)) }
    // Three more than the server takes: each is closed at once (a read
    // returns end of file).
    var refused: [Int32] = []
    defer { for descriptor in refused { close(descriptor) } }
    let output = directory.path("received.y4m")
    let receiver = try BackgroundProcess(
        TestPaths.codecsExecutable.path, ["stream", "receive", "tcp://127.0.0.1:\(port)", "-o", output])
    let four = server.waitForError { $0.components(separatedBy: "connected;").count > 4 ? true : nil }
    try #require(four == true, "\(server.standardError)")
    for _ in 0..<3 { refused.append(try silentClient(port: port)) }
    let received = receiver.wait()
    let served = server.wait()
    #expect(received.status == 0, "\(received.stderr)\n\(served.stderr)")
    #expect(try ffmpegFrameMD5(path: output).count == frames, "\(received.stderr)")
    #expect(served.status == 0, "\(served.stderr)")
    let lines = served.stderr.split(separator: "\n")
    #expect(
        lines.filter { $0.contains("refused: 4 clients connected already (--max-clients)") }.count == 3,
        "\(served.stderr)")
    let dropped = lines.filter { $0.contains("(more than 1048576) and it is the furthest behind") }
    #expect(dropped.count >= 1, "\(served.stderr)")
}
