import Foundation
import TestSupport
import Testing

/// Runs the built `codecs probe` and checks its report against this machine.
@Suite struct ProbeCommandTests {
    private func probe(_ arguments: [String] = ["--json"], environment: [String: String] = [:]) throws -> (
        status: Int32, json: [String: Any], stderr: String
    ) {
        let tool = TestPaths.codecsExecutable.path
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw ProcessError("the codecs tool is not built at \(tool); run `swift build` first")
        }
        let result = try runProcess(tool, ["probe"] + arguments, environment: environment)
        let object = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        return (result.status, object ?? [:], result.stderr)
    }

    private func entries(_ json: [String: Any], _ key: String) -> [[String: Any]] {
        json[key] as? [[String: Any]] ?? []
    }

    private func entry(_ json: [String: Any], _ key: String, name: String, codec: String) -> [String: Any]? {
        entries(json, key).first { $0["name"] as? String == name && $0["codec"] as? String == codec }
    }

    /// Whether this machine has a DRM render node (CI containers usually do not).
    private var hasRenderNode: Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []
        return names.contains { $0.hasPrefix("renderD") }
    }

    @Test func keysAreTheDocumentedOnes() throws {
        let (status, json, _) = try probe()
        #expect(status == 0)
        #expect(Set(json.keys) == ["libraries", "libraryBuilds", "encoders", "decoders", "vaapi"])
        let libraries = json["libraries"] as? [String: String] ?? [:]
        #expect(
            Set(libraries.keys) == ["x264", "x265", "libavcodec", "libavformat", "libavutil", "libswscale", "libva"])
        for list in ["encoders", "decoders"] {
            for item in entries(json, list) {
                // Encoders add their property dictionary, and "lowPower" on an EncSliceLP-only device.
                let keys: Set<String> = ["name", "codec", "kind", "available", "reason", "pixelFormats"]
                let extra: Set<String> = list == "encoders" ? ["properties"] : []
                #expect(Set(item.keys).subtracting(["lowPower"]) == keys.union(extra), "\(list): \(item)")
                let available = item["available"] as? Bool
                #expect(available != nil)
                // A reason exactly when unavailable.
                #expect((item["reason"] is NSNull) == (available == true), "\(item)")
            }
        }
        #expect(
            entries(json, "encoders").map { $0["name"] as? String ?? "" } == [
                "x264", "x265", "vaapi", "vaapi",
            ])
        let vaapi = json["vaapi"] as? [String: Any] ?? [:]
        #expect(Set(vaapi.keys) == ["available", "reason", "devices"])
    }

    /// Library versions agree with what the command-line tools of the same
    /// installation print.
    @Test func versionsMatchTheInstalledTools() throws {
        let (_, json, _) = try probe()
        let libraries = json["libraries"] as? [String: String] ?? [:]
        let builds = json["libraryBuilds"] as? [String: String] ?? [:]

        let x264 = String(decoding: try runChecked("x264", ["--version"]), as: UTF8.self)
        let x264Line = x264.split(separator: "\n").first.map(String.init) ?? ""
        #expect(x264Line == "x264 \(builds["x264"] ?? "?")")
        #expect(builds["x264"]?.hasPrefix(libraries["x264"] ?? "?") == true)
        #expect(libraries["x264"]?.split(separator: ".").count == 3)

        let x265 = try runProcess("x265", ["--version"])
        #expect(x265.stderr.contains("version \(builds["x265"] ?? "?")"))
        #expect(builds["x265"]?.hasPrefix(libraries["x265"] ?? "?") == true)

        let ffmpeg = String(decoding: try runChecked("ffmpeg", ["-hide_banner", "-version"]), as: UTF8.self)
        for library in ["libavcodec", "libavformat", "libavutil", "libswscale"] {
            let line = ffmpeg.split(separator: "\n").first { $0.hasPrefix(library + " ") } ?? ""
            // "libavcodec     59. 37.100 / 59. 37.100": the run-time half after the slash.
            let runtime = line.split(separator: "/").last.map { $0.replacingOccurrences(of: " ", with: "") } ?? ""
            #expect(runtime == libraries[library], "\(library): ffmpeg says \(line)")
        }
        let libva = libraries["libva"] ?? ""
        #expect(libva.split(separator: ".").count >= 2 && libva.split(separator: ".").allSatisfy { Int($0) != nil })
    }

    @Test func softwareCodecsAreAvailable() throws {
        let (_, json, _) = try probe()
        for (list, name, codec) in [
            ("encoders", "x264", "h264"), ("encoders", "x265", "hevc"), ("decoders", "libavcodec", "h264"),
            ("decoders", "libavcodec", "hevc"),
        ] {
            let item = entry(json, list, name: name, codec: codec)
            #expect(item?["available"] as? Bool == true, "\(list) \(name) \(codec): \(String(describing: item))")
            #expect(item?["kind"] as? String == "software")
        }
    }

    @Test func vaapiWithoutRenderNodeIsUnavailableWithAReason() throws {
        let (status, json, _) = try probe()
        #expect(status == 0)
        let vaapi = json["vaapi"] as? [String: Any] ?? [:]
        if hasRenderNode {
            let paths = (vaapi["devices"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
            #expect(paths.allSatisfy { $0.hasPrefix("/dev/dri/renderD") } && !paths.isEmpty)
            return
        }
        #expect(vaapi["available"] as? Bool == false)
        let reason = vaapi["reason"] as? String ?? ""
        #expect(reason.contains("no VA-API render node"), "\(reason)")
        #expect((vaapi["devices"] as? [Any])?.isEmpty == true)
        for (list, name, codec) in [
            ("encoders", "vaapi", "h264"), ("encoders", "vaapi", "hevc"), ("decoders", "vaapi", "h264"),
            ("decoders", "vaapi", "hevc"),
        ] {
            let item = entry(json, list, name: name, codec: codec)
            #expect(item?["available"] as? Bool == false)
            #expect(item?["kind"] as? String == "hardware")
            let itemReason = item?["reason"] as? String ?? ""
            #expect(itemReason.contains("VA-API"), "\(String(describing: item))")
        }
    }

    @Test func explicitDeviceFromEnvironmentOrOption() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("renderD999")
        let (status, json, _) = try probe(environment: ["CODECS_VAAPI_DEVICE": missing])
        #expect(status == 0)
        let vaapi = json["vaapi"] as? [String: Any] ?? [:]
        #expect(vaapi["available"] as? Bool == false)
        let devices = vaapi["devices"] as? [[String: Any]] ?? []
        #expect(devices.count == 1)
        #expect(devices.first?["path"] as? String == missing)
        let error = devices.first?["error"] as? String ?? ""
        #expect(error.contains("cannot open \(missing)") && error.contains("No such file or directory"), "\(error)")

        // A file that is not a DRM device: libva gets no display from it.
        let (_, other, _) = try probe(["--json", "--device", "/dev/null"])
        let device = ((other["vaapi"] as? [String: Any])?["devices"] as? [[String: Any]])?.first
        #expect(device?["path"] as? String == "/dev/null")
        let deviceError = device?["error"] as? String ?? ""
        #expect(deviceError.contains("vaGetDisplayDRM"), "\(String(describing: device))")
        #expect(device?["profiles"] as? [Any] != nil)
    }

    @Test func textReportAndUsageErrors() throws {
        let tool = TestPaths.codecsExecutable.path
        let text = try runProcess(tool, ["probe"])
        #expect(text.status == 0)
        let output = String(decoding: text.stdout, as: UTF8.self)
        for needle in ["libraries", "x264", "encoders", "decoders", "VA-API: "] {
            #expect(output.contains(needle), "missing \(needle) in:\n\(output)")
        }
        let unknown = try runProcess(tool, ["probe", "--frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("--frobnicate"))
        let stray = try runProcess(tool, ["probe", "extra"])
        #expect(stray.status == 2 && stray.stderr.contains("extra"))
        let help = try runProcess(tool, ["probe", "--help"])
        #expect(help.status == 0 && String(decoding: help.stdout, as: UTF8.self).contains("--device"))
    }
}
