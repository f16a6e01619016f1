import Foundation

/// Where the decoder of a `codecs` child process gets its pictures, so that
/// each command-line decode test runs both ways and hardware output is an
/// ordinary case, not a special test:
///
/// - ``software``: no VA-API device, so `auto` decodes with libavcodec
///   (planar I420, I010 …).
/// - ``hardware``: through `scripts/with-test-vaapi` with a device file of
///   the test's own whose `decode=` line names the stream, so the VA-API
///   path delivers every picture as a GPU would (NV12, or P010 on a
///   `main10` device), or fails from a chosen picture on (`failures`).
public enum DecodePath: String, Sendable, CaseIterable, CustomStringConvertible {
    case software
    case hardware

    /// `"software"` or `"hardware"`, as test names and messages print it.
    public var description: String { rawValue }

    /// The backend the tool's summary names when every picture came this way.
    public var backendName: String { self == .software ? "libavcodec" : "vaapi" }

    /// Runs `codecs ARGUMENTS`. `reference` is the stream as Annex-B (what
    /// the test driver decodes for the hardware path); `failures` are test
    /// driver items (`decode-after:99`, `main10`, …; Tests/TestVADriver).
    public func runCodecs(
        _ arguments: [String], reference: String, in directory: TemporaryDirectory, failures: [String] = [],
        stdin: Data? = nil, environment: [String: String] = [:]
    ) throws -> (status: Int32, stdout: Data, stderr: String) {
        switch self {
        case .software:
            return try runProcess(
                TestPaths.codecsExecutable.path, arguments, stdin: stdin, environment: environment)
        case .hardware:
            let device = try TestVADriver.makeDevice(
                in: directory, name: "device-\(UUID().uuidString)", failures: failures, decodeReference: reference)
            return try runProcess(
                "/bin/sh", [TestVADriver.script, TestPaths.codecsExecutable.path] + arguments, stdin: stdin,
                environment: environment.merging(["CODECS_TEST_VAAPI_DEVICE": device]) { _, new in new })
        }
    }

    /// The command line that runs `codecs` this way, for a shell pipeline
    /// (device file made in `directory`).
    public func shellCommand(reference: String, in directory: TemporaryDirectory, failures: [String] = [])
        throws -> String
    {
        let codecs = TestPaths.codecsExecutable.path
        switch self {
        case .software:
            return "'\(codecs)'"
        case .hardware:
            let device = try TestVADriver.makeDevice(
                in: directory, name: "device-\(UUID().uuidString)", failures: failures, decodeReference: reference)
            return "CODECS_TEST_VAAPI_DEVICE='\(device)' /bin/sh '\(TestVADriver.script)' '\(codecs)'"
        }
    }
}

/// The video of `path` (a container or an elementary stream) as an Annex-B
/// file, by FFmpeg's stream copy: the reference the test VA-API driver
/// decodes.
public func annexBCopy(of path: String, codec: String, in directory: TemporaryDirectory) throws -> String {
    let output = directory.path("reference-\(UUID().uuidString).\(codec)")
    try runChecked(
        "ffmpeg",
        [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-i", path, "-map", "0:v:0", "-c", "copy", "-f", codec,
            output,
        ]
    )
    return output
}
