// nginx (with its RTMP module) started from a generated configuration in a temporary directory, for the recipes.
import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// nginx 1.22 as Debian's nginx-light and libnginx-mod-rtmp install it, run
/// in the foreground as one process (`master_process off`, so that killing
/// it leaves no worker behind) from a configuration written into a
/// temporary directory: its pid file, logs and temporary files stay there.
///
/// nginx cannot bind port 0: its ports are picked by binding port 0 on
/// 127.0.0.1 and closing it, and the start is retried (three times in
/// all) when one of them was taken in between.
final class NginxServer {
    let directory: TemporaryDirectory
    let peer: Peer
    /// The RTMP port (0 when no `rtmp` block was asked for).
    let rtmpPort: Int
    /// The HTTP port (0 when no `http` block was asked for).
    let httpPort: Int

    /// The Debian path of the RTMP module.
    static let rtmpModule = "/usr/lib/nginx/modules/ngx_rtmp_module.so"

    /// Starts nginx with `rtmp` (the body of an `application` block, or nil)
    /// and, when `httpRoot` is given, a static HTTP server of that directory.
    /// `rtmpApplication` names the application (`live`).
    init(rtmp: String? = nil, rtmpApplication: String = "live", httpRoot: String? = nil) throws {
        guard let executable = findExecutable("nginx") ?? findExecutable("/usr/sbin/nginx") else {
            throw ProcessError("nginx: not found (scripts/bootstrap installs nginx-light)")
        }
        if rtmp != nil, !FileManager.default.fileExists(atPath: Self.rtmpModule) {
            throw ProcessError("\(Self.rtmpModule): not found (scripts/bootstrap installs libnginx-mod-rtmp)")
        }
        directory = try TemporaryDirectory(prefix: "nginx")
        var lastError = ""
        for _ in 0..<3 {
            let rtmpPort = rtmp == nil ? 0 : try freePort(.tcp)
            let httpPort = httpRoot == nil ? 0 : try freePort(.tcp)
            let configuration = Self.configuration(
                directory: directory.url.path, rtmp: rtmp.map { (rtmpApplication, $0, rtmpPort) },
                http: httpRoot.map { ($0, httpPort) })
            let path = directory.path("nginx.conf")
            try configuration.write(toFile: path, atomically: true, encoding: .utf8)
            let peer = try Peer(
                executable,
                ["-p", directory.url.path, "-c", path, "-e", directory.path("error.log"), "-g", "daemon off;"],
                seconds: 60)
            do {
                for port in [rtmpPort, httpPort] where port != 0 {
                    try waitUntilBound(.tcp, port: port, by: peer)
                }
                self.peer = peer
                self.rtmpPort = rtmpPort
                self.httpPort = httpPort
                return
            } catch {
                peer.stop()
                lastError = "\(error) \(Self.readLog(in: directory))"
            }
        }
        throw ProcessError("nginx did not start in three tries: \(lastError)")
    }

    /// nginx's error log (at level `info`: the RTMP module logs every
    /// `play` and `publish` there).
    var errorLog: String { Self.readLog(in: directory) }

    private static func readLog(in directory: TemporaryDirectory) -> String {
        (try? String(contentsOfFile: directory.path("error.log"), encoding: .utf8)) ?? ""
    }

    /// Waits (up to 10 s) until the error log has `count` lines containing `text`.
    func waitForLog(_ text: String, count: Int = 1) -> Bool {
        for _ in 0..<500 {
            if errorLog.components(separatedBy: "\n").filter({ $0.contains(text) }).count >= count { return true }
            if !peer.process.isRunning { return false }
            usleep(20_000)
        }
        return false
    }

    /// Ends nginx (`SIGKILL`: one process, nothing left behind) and removes its directory.
    func stop() {
        peer.stop()
        peer.waitForExit()
        directory.remove()
    }

    /// The configuration: everything nginx writes goes under `directory`.
    static func configuration(
        directory: String, rtmp: (application: String, body: String, port: Int)?, http: (root: String, port: Int)?
    ) -> String {
        var lines = [
            rtmp == nil ? "" : "load_module \(rtmpModule);",
            "master_process off;",
            "worker_processes 1;",
            "pid \(directory)/nginx.pid;",
            "error_log \(directory)/error.log info;",
            "events { worker_connections 64; }",
        ]
        if let rtmp {
            lines += [
                "rtmp {",
                "    server {",
                "        listen 127.0.0.1:\(rtmp.port);",
                "        application \(rtmp.application) { \(rtmp.body) }",
                "    }",
                "}",
            ]
        }
        if let http {
            lines += [
                "http {",
                "    access_log \(directory)/access.log;",
                "    client_body_temp_path \(directory)/client_body;",
                "    proxy_temp_path \(directory)/proxy;",
                "    fastcgi_temp_path \(directory)/fastcgi;",
                "    uwsgi_temp_path \(directory)/uwsgi;",
                "    scgi_temp_path \(directory)/scgi;",
                "    types {",
                "        application/vnd.apple.mpegurl m3u8;",
                "        video/mp2t ts;",
                "        video/mp4 mp4 m4s;",
                "    }",
                "    server {",
                "        listen 127.0.0.1:\(http.port);",
                "        location / { root \(http.root); }",
                "    }",
                "}",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Waits until every player's output holds its first frame (a framemd5
/// line, or a Y4M `FRAME`), or
/// until `sender` ends and 5 s more have passed; returns, for each player,
/// the seconds from `start` to the first frame it printed (nil: none).
func firstFrameSeconds(of players: [Peer], since start: Date, sender: Peer) -> [Double?] {
    var seconds = [Double?](repeating: nil, count: players.count)
    var senderEnded: Date?
    while seconds.contains(where: { $0 == nil }) {
        for (index, player) in players.enumerated() where seconds[index] == nil {
            let output = player.standardOutput
            if !frameHashes(output).isEmpty || output.range(of: Data("FRAME\n".utf8)) != nil {
                seconds[index] = Date().timeIntervalSince(start)
            }
        }
        if !sender.process.isRunning {
            if let ended = senderEnded {
                if Date().timeIntervalSince(ended) > 5 { break }
            } else {
                senderEnded = Date()
            }
        }
        usleep(5_000)
    }
    return seconds
}
