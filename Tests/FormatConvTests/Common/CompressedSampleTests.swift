import FormatConv
import Testing

struct CompressedSampleTests {
    @Test("a sample keeps what it was given; dependsOnOthers defaults to true")
    func storesFields() throws {
        let description = try FormatDescription(avcC: AVCDecoderConfigurationRecordTests.seed)
        let sample = CompressedSample(
            data: [0, 0, 0, 2, 0x65, 0x88], formatDescription: description, pts: MediaTime(value: 3, timescale: 30),
            dts: MediaTime(value: 2, timescale: 30), duration: MediaTime(value: 1, timescale: 30), isKeyframe: true)
        #expect(sample.data == [0, 0, 0, 2, 0x65, 0x88])
        #expect(sample.formatDescription == description)
        #expect(sample.pts == MediaTime(value: 3, timescale: 30))
        #expect(sample.dts == MediaTime(value: 2, timescale: 30))
        #expect(sample.isKeyframe)
        #expect(sample.dependsOnOthers)
        let disposable = CompressedSample(
            data: [], formatDescription: description, pts: .zero, dts: .zero, duration: .invalid, isKeyframe: false,
            dependsOnOthers: false)
        #expect(!disposable.dependsOnOthers)
    }
}
