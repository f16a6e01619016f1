import FormatConv
import Foundation
import TestSupport
import Testing

/// Replays every input the fuzz targets (Fuzz/, `make fuzz`) ever crashed on,
/// from Tests/Fixtures/fuzz/<Target>/, through the same entry points, and
/// checks the same invariants the harnesses check.
struct FuzzRegressionTests {
    static func inputs(_ target: String) -> [(name: String, bytes: [UInt8])] {
        let folder = TestPaths.fixture("fuzz/\(target)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().compactMap { name in
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
                return nil
            }
            return (name, Array(data))
        }
    }

    static let targets = [
        "AVCC", "HVCC", "ParameterSets", "AnnexBToLengthPrefixed", "LengthPrefixedToAnnexB", "AccessUnitAssembler",
    ]

    @Test(arguments: targets)
    func replay(_ target: String) throws {
        for (name, input) in Self.inputs(target) where input.count > 1 {
            let selector = input[0]
            let bytes = Array(input.dropFirst())
            let codec: CodecType = selector & 1 == 0 ? .h264 : .hevc
            switch target {
            case "AVCC":
                if let description = try? FormatDescription(avcC: input) {
                    #expect((try? FormatDescription(avcC: description.record)) != nil, "\(name)")
                }
            case "HVCC":
                if let description = try? FormatDescription(hvcC: input) {
                    #expect((try? FormatDescription(hvcC: description.record)) != nil, "\(name)")
                }
            case "ParameterSets":
                var store = ParameterSetStore(codec: codec)
                for location in AnnexB.nalUnits(in: bytes) { _ = try? store.update(nal: bytes[location.range]) }
                if store.isComplete { _ = try? store.makeDescription() }
            case "AnnexBToLengthPrefixed":
                let lengthSize = [1, 2, 4, 4][Int(selector >> 1 & 3)]
                if let unit = try? AnnexB.lengthPrefixed(from: bytes, codec: codec, lengthSize: lengthSize) {
                    let read = try LengthPrefixed.nalUnits(in: unit.data, lengthSize: lengthSize, codec: codec)
                    #expect(read.count == unit.nalUnitCount, "\(name)")
                }
            case "LengthPrefixedToAnnexB":
                let source = [1, 2, 3, 4][Int(selector & 3)]
                let target = [1, 2, 4, 4][Int(selector >> 2 & 3)]
                if let converted = try? LengthPrefixed.convert(bytes, from: source, to: target) {
                    #expect((try? LengthPrefixed.nalUnits(in: converted, lengthSize: target)) != nil, "\(name)")
                }
                if source != 3, codec == .h264 {
                    let description = try FormatDescription(
                        h264ParameterSets: [seedSPS, seedPPS], nalUnitHeaderLength: source)
                    var writer = AnnexBWriter(policy: .beforeEveryKeyframe, insertAccessUnitDelimiters: true)
                    let sample = CompressedSample(
                        data: bytes, formatDescription: description, pts: .zero, dts: .zero, duration: .invalid,
                        isKeyframe: true)
                    let valid = (try? LengthPrefixed.nalUnits(in: bytes, lengthSize: source, codec: codec)) != nil
                    #expect(((try? writer.write(sample)) != nil) == valid, "\(name)")
                }
            case "AccessUnitAssembler":
                let chunk = Int(selector >> 1) * 3 + 1
                let whole = assemble([bytes[...]], codec: codec).map(Emitted.init)
                let parts = stride(from: 0, to: bytes.count, by: chunk).map {
                    bytes[$0..<min(bytes.count, $0 + chunk)]
                }
                #expect(assemble(parts, codec: codec).map(Emitted.init) == whole, "\(name)")
            default:
                Issue.record("unknown fuzz target \(target)")
            }
        }
    }

    /// The fixture folders exist for the targets that found something, and
    /// every target has a harness.
    @Test func everyTargetHasAHarness() {
        let root = TestPaths.repositoryRoot.appendingPathComponent("Fuzz")
        for target in Self.targets {
            let harness = root.appendingPathComponent(target).appendingPathComponent("Harness.swift")
            #expect(FileManager.default.fileExists(atPath: harness.path), "\(target)")
        }
    }
}
