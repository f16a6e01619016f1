import Foundation
import TestSupport
import Testing

/// `codecs inspect` of a file that holds no NAL unit says so on standard
/// error and exits 1.
struct InspectNoNALUnitTests {
    @Test(arguments: [
        ("noise.h264", [], "H.264"), ("noise.hevc", [], "HEVC"), ("noise.bin", ["--codec", "h264"], "H.264"),
    ])
    func aFileWithoutNALUnitsIsAnError(name: String, options: [String], codec: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path(name)
        let bytes = Array("no start code in here, only text\n".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let result = try runProcess(TestPaths.codecsExecutable.path, ["inspect", path] + options)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "codecs inspect: \(path): the file holds no NAL unit (no Annex-B start code 00 00 01 in its "
                + "\(bytes.count) bytes; is it an Annex-B \(codec) stream?)\n")
    }
}
