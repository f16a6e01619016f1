// Janus 1.1.2 started for the Janus recipe tests: its configuration written to a temporary directory (the HTTP
// transport on 127.0.0.1 at a port picked free, only the plugins a test names, ICE on loopback only), stopped by
// stop() or deinit.
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

final class JanusServer: @unchecked Sendable {
    static let executable = "/usr/bin/janus"
    static let modules = "/usr/lib/x86_64-linux-gnu/janus"
    /// Whether Debian's janus package is installed.
    static var available: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    /// Janus's JSON API over HTTP, http://127.0.0.1:PORT/janus.
    let url: String
    let directory: TemporaryDirectory
    private let process: BackgroundProcess

    /// Janus 1.1.2 skips every interface flagged IFF_LOOPBACK when it gathers
    /// ICE candidates (libnice then falls back to the other interfaces), so
    /// with loopback only it would offer none. This wrapper of getifaddrs(3),
    /// preloaded into Janus alone, clears that flag; `ice_enforce_list = "lo"`
    /// then keeps 127.0.0.1 as Janus's one host candidate.
    private static let loopbackShim = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <ifaddrs.h>
        #include <net/if.h>
        int getifaddrs(struct ifaddrs **list) {
            int (*next)(struct ifaddrs **) = (int (*)(struct ifaddrs **))dlsym(RTLD_NEXT, "getifaddrs");
            int status = next(list);
            if (status == 0)
                for (struct ifaddrs *entry = *list; entry != 0; entry = entry->ifa_next)
                    entry->ifa_flags &= ~IFF_LOOPBACK;
            return status;
        }
        """

    /// Starts Janus with the plugins named in `plugins` (e.g.
    /// "janus.plugin.streaming") and each one's jcfg text; a port another
    /// process took meanwhile is retried with another.
    init(plugins: [String: String]) throws {
        let directory = try TemporaryDirectory(prefix: "janus")
        self.directory = directory
        let shimSource = directory.path("loopback.c")
        let shim = directory.path("loopback.so")
        try Data(Self.loopbackShim.utf8).write(to: URL(fileURLWithPath: shimSource))
        let built = try runProcess("gcc", ["-shared", "-fPIC", "-O2", "-o", shim, shimSource, "-ldl"])
        guard built.status == 0 else { throw ProcessError("gcc could not build the loopback shim: \(built.stderr)") }
        let fileManager = FileManager.default
        for folder in ["plugins", "transports", "none"] {
            try fileManager.createDirectory(atPath: directory.path(folder), withIntermediateDirectories: true)
        }
        for (name, configuration) in plugins {
            let library = "libjanus_" + name.replacingOccurrences(of: "janus.plugin.", with: "") + ".so"
            try fileManager.createSymbolicLink(
                atPath: directory.path("plugins/\(library)"), withDestinationPath: "\(Self.modules)/plugins/\(library)")
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: directory.path("\(name).jcfg")))
        }
        try fileManager.createSymbolicLink(
            atPath: directory.path("transports/libjanus_http.so"),
            withDestinationPath: "\(Self.modules)/transports/libjanus_http.so")
        let core = """
            general: {
              configs_folder = "\(directory.url.path)"
              plugins_folder = "\(directory.path("plugins"))"
              transports_folder = "\(directory.path("transports"))"
              events_folder = "\(directory.path("none"))"
              loggers_folder = "\(directory.path("none"))"
              interface = "127.0.0.1"
              debug_level = 4
            }
            nat: {
              ice_enforce_list = "lo"
            }
            """
        try Data(core.utf8).write(to: URL(fileURLWithPath: directory.path("janus.jcfg")))
        for _ in 0..<5 {
            let port = try freeTCPPort()
            let http = """
                general: {
                  json = "plain"
                  base_path = "/janus"
                  http = true
                  port = \(port)
                  ip = "127.0.0.1"
                  https = false
                }
                admin: {
                  admin_http = false
                }
                """
            try Data(http.utf8).write(to: URL(fileURLWithPath: directory.path("janus.transport.http.jcfg")))
            let process = try BackgroundProcess(
                "/usr/bin/env",
                [
                    "LD_PRELOAD=\(shim)", Self.executable, "-F", directory.url.path, "-C",
                    directory.path("janus.jcfg"), "-o",
                ], in: directory)
            if tcpPortListens(port, within: 15) {
                self.url = "http://127.0.0.1:\(port)/janus"
                self.process = process
                return
            }
            process.signal(SIGKILL)
            process.wait(timeout: 5)
        }
        throw ProcessError("janus did not start on a free port in 5 tries")
    }

    deinit { stop() }

    /// Stops Janus (SIGKILL: the test runner's children may inherit an
    /// ignored SIGTERM) and returns its log.
    @discardableResult
    func stop() -> String {
        process.signal(SIGKILL)
        return String(decoding: process.wait(timeout: 5).stdout, as: UTF8.self)
    }

    /// `python3 Peers/janus_peers.py ARGUMENTS…` in the background.
    func peer(_ arguments: [String]) throws -> BackgroundProcess {
        try BackgroundProcess(
            "/usr/bin/python3", [WHEPPeerTests.peers.appendingPathComponent("janus_peers.py").path] + arguments,
            in: directory)
    }
}

extension JanusServer {
    /// Janus with the streaming plugin's mountpoint 1 on a free RTP port pair (`rtcp`: taking the sender's RTCP on
    /// the next port) and `janus_peers.py MODE URL 1 ARGUMENTS… READY` in the background, once it says its
    /// viewers are ready (a file in `directory`, waited for up to `seconds`).
    static func streamingMountpoint(
        rtcp: Bool = false, viewers mode: String, _ arguments: [String], readyWithin seconds: Int,
        in directory: TemporaryDirectory
    ) throws -> (janus: JanusServer, port: UInt16, viewers: BackgroundProcess) {
        let port = try freeRTPPortPair()
        let janus = try JanusServer(plugins: [
            "janus.plugin.streaming": JanusStreamingTests.mountpoint(port: port, rtcp: rtcp)
        ])
        let ready = directory.path("viewers-ready")
        let viewers = try janus.peer([mode, janus.url, "1"] + arguments + [ready])
        for _ in 0..<(seconds * 50) where !FileManager.default.fileExists(atPath: ready) { usleep(20_000) }
        try #require(FileManager.default.fileExists(atPath: ready), "\(viewers.wait(timeout: 1).stderr)")
        return (janus, port, viewers)
    }
}
