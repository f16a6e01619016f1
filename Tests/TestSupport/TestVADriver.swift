import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The test-only VA-API driver (`Tests/TestVADriver`, built by
/// `scripts/with-test-vaapi`) used inside the test process.
///
/// Child processes get the driver from `scripts/with-test-vaapi`, which also
/// preloads `rendernode_shim.so`. The test process cannot preload anything
/// after it has started, so it selects the driver in two steps instead:
///
/// 1. ``activate()`` builds the driver once and sets `LIBVA_DRIVERS_PATH` and
///    `LIBVA_DRIVER_NAME` before the first `vaInitialize` (libva reads them
///    on every initialization).
/// 2. The test executable itself defines `drmGetNodeTypeFromFd` (below). A
///    symbol of the executable that a linked library (libdrm, through
///    libva-drm) also defines takes precedence for the whole process, so
///    `vaGetDisplayDRM` accepts the fake device files this type makes; any
///    other descriptor is passed on to libdrm's own function.
///
/// Each ``makeDevice(in:failures:)`` call writes its own device file, whose
/// `fail=` line the driver reads at initialization, so tests running in
/// parallel inject failures without touching the shared environment.
public enum TestVADriver {
    /// The first line of every fake device file (see rendernode_shim.c).
    public static let deviceMagic = "codecs-test-vaapi-device"

    /// The driver needs a C compiler; scripts/bootstrap installs gcc, so in CI
    /// the driver tests always run.
    public static var compilerAvailable: Bool { findExecutable("gcc") != nil }

    /// `scripts/with-test-vaapi`.
    public static var script: String {
        TestPaths.repositoryRoot.appendingPathComponent("scripts/with-test-vaapi").path
    }

    /// The folder holding the built driver and shim.
    public static var buildDirectory: String {
        TestPaths.repositoryRoot.appendingPathComponent(".build/test-vaapi").path
    }

    private static let activation: Result<String, ProcessError> = {
        do {
            let result = try runProcess("/bin/sh", [script, "true"])
            guard result.status == 0 else {
                return .failure(ProcessError("scripts/with-test-vaapi failed: \(result.stderr)"))
            }
        } catch let error as ProcessError {
            return .failure(error)
        } catch {
            return .failure(ProcessError("scripts/with-test-vaapi: \(error)"))
        }
        setenv("LIBVA_DRIVERS_PATH", buildDirectory, 1)
        setenv("LIBVA_DRIVER_NAME", "codecs_test", 1)
        setenv("LIBVA_MESSAGING_LEVEL", "1", 1)  // errors only
        return .success(buildDirectory)
    }()

    /// Builds the driver (when stale) and selects it for this process; safe
    /// to call from many tests, the work happens once.
    @discardableResult
    public static func activate() throws -> String {
        try activation.get()
    }

    /// Writes a fake device file `name` in `directory` that fails the given
    /// stages (`init`, `config`, `surfaces`, `context`, `encode`, `encode:N`,
    /// `decode:N`, `decode-after:K`, `busy:N`, …; see Tests/TestVADriver/README.md).
    /// With `decodeReference` (an Annex-B file), the device decodes: each
    /// picture whose slices come from that stream is written to its surface,
    /// as libavcodec decodes it.
    public static func makeDevice(
        in directory: TemporaryDirectory, name: String = "renderD128", failures: [String] = [],
        decodeReference: String? = nil
    )
        throws -> String
    {
        try activate()
        let path = directory.path(name)
        var text = deviceMagic + "\n"
        if !failures.isEmpty { text += "fail=" + failures.joined(separator: ",") + "\n" }
        if let decodeReference { text += "decode=" + decodeReference + "\n" }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Whether `descriptor` is an open fake device file.
    public static func isFakeDevice(_ descriptor: Int32) -> Bool {
        var status = stat()
        guard descriptor >= 0, fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            return false
        }
        let magic = Array(deviceMagic.utf8)
        var head = [UInt8](repeating: 0, count: magic.count)
        return pread(descriptor, &head, magic.count, 0) == magic.count && head == magic
    }
}

/// libdrm's node type for a DRM render node (xf86drm.h `DRM_NODE_RENDER`).
private let drmNodeRender: Int32 = 2

/// Interposes libdrm's `drmGetNodeTypeFromFd` for this process: a fake test
/// device is a render node, everything else goes to libdrm.
@_cdecl("drmGetNodeTypeFromFd")
public func testVADriverNodeType(_ descriptor: Int32) -> Int32 {
    if TestVADriver.isFakeDevice(descriptor) { return drmNodeRender }
    typealias NodeType = @convention(c) (Int32) -> Int32
    // RTLD_NEXT is ((void *) -1) in dlfcn.h, a macro Swift does not import.
    guard let next = dlsym(UnsafeMutableRawPointer(bitPattern: -1), "drmGetNodeTypeFromFd") else { return -1 }
    return unsafeBitCast(next, to: NodeType.self)(descriptor)
}
