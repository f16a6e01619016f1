import FormatConv
import Foundation
import RTPPayload
import TestSupport
import Testing

/// Replays the inputs the RTP fuzz targets crashed on
/// (Tests/Fixtures/fuzz/<Target>/) and their seeds (Fuzz/<Target>/seeds/)
/// through the same entry points, with the harnesses' invariants.
struct RTPFuzzRegressionTests {
    static func inputs(_ target: String) -> [(name: String, bytes: [UInt8])] {
        let folders = [
            TestPaths.fixture("fuzz/\(target)"),
            TestPaths.repositoryRoot.appendingPathComponent("Fuzz/\(target)/seeds"),
        ]
        return folders.flatMap { folder in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.sorted().compactMap { name in
                FileManager.default.contents(atPath: folder.appendingPathComponent(name).path).map {
                    (name, Array($0))
                }
            }
        }
    }

    @Test func sdpInputs() throws {
        let inputs = Self.inputs("SDP")
        #expect(!inputs.isEmpty)
        for (name, bytes) in inputs {
            #expect(try Base64.decode(Base64.encode(bytes)) == bytes, "\(name)")
            guard let parsed = try? RTPSessionDescription(parsing: String(decoding: bytes, as: UTF8.self)) else {
                continue
            }
            let again = try RTPSessionDescription(parsing: parsed.text)
            #expect(try RTPSessionDescription(parsing: again.text).text == again.text, "\(name)")
            #expect(again.codec == parsed.codec && again.port == parsed.port, "\(name)")
        }
    }

    /// Raw-mode inputs (selector bit 1): a list of 16-bit-length packets.
    @Test func depacketizerInputs() throws {
        let inputs = Self.inputs("RTPDepacketizer").filter { $0.bytes.count > 1 && $0.bytes[0] & 2 != 0 }
        #expect(!inputs.isEmpty)
        for (name, input) in inputs {
            let selector = input[0]
            let codec: CodecType = selector & 1 == 0 ? .h264 : .hevc
            var depacketizer = RTPDepacketizer(
                configuration: RTPDepacketizer.Configuration(
                    codec: codec, reorderWindow: [1, 3, 8, 32][Int(selector >> 2) & 3],
                    maximumAccessUnitSize: 1 << 20,
                    maximumDONDifference: codec == .hevc && selector & 0x10 != 0 ? 2 : 0))
            let bytes = Array(input.dropFirst())
            var outputs: [RTPDepacketizerOutput] = []
            var received = 0
            var offset = 0
            while offset + 2 <= bytes.count {
                let end = min(bytes.count, offset + 2 + (Int(bytes[offset]) << 8 | Int(bytes[offset + 1])))
                outputs += depacketizer.receive(Array(bytes[(offset + 2)..<end]))
                received += 1
                offset = end
            }
            outputs += depacketizer.finish()
            for sample in emitted(outputs) {
                #expect(throws: Never.self, "\(name)") {
                    try LengthPrefixed.nalUnitRanges(in: sample.data, lengthSize: 4, codec: codec)
                }
            }
            let s = depacketizer.statistics
            #expect(s.received == received, "\(name)")
            #expect(s.received == s.duplicates + s.late + s.refusedBeforeProcessing + s.processed, "\(name)")
            #expect(s.samples == emitted(outputs).count, "\(name)")
        }
    }
}
