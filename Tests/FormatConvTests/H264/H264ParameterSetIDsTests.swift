import FormatConv
import Testing

struct H264ParameterSetIDsTests {
    @Test("PPS ids: every pic_parameter_set_id 0...255 with its SPS id", arguments: [0, 1, 31, 32, 127, 255])
    func ppsIDs(id: Int) throws {
        let ids = try H264PictureParameterSetIDs(nal: h264PPS(id: id, spsID: id % 32))
        #expect(ids.pic_parameter_set_id == id)
        #expect(ids.seq_parameter_set_id == id % 32)
    }

    @Test("out-of-range ids and wrong NAL types are errors")
    func invalid() {
        #expect(throws: MediaError.self) { try H264PictureParameterSetIDs(nal: h264PPS(id: 256)) }
        #expect(throws: MediaError.self) { try H264PictureParameterSetIDs(nal: h264PPS(id: 0, spsID: 32)) }
        #expect(throws: MediaError.self) { try H264PictureParameterSetIDs(nal: [0x68]) }
        #expect(throws: MediaError.self) { try H264PictureParameterSetIDs(nal: [0x67, 0x80]) }
        #expect(throws: MediaError.self) { try H264SequenceParameterSetExtensionID(nal: [0x68, 0x80]) }
    }

    @Test("SPS extension id")
    func extensionID() throws {
        var w = BitWriter()
        w.ue(17)
        w.ue(0)
        #expect(try H264SequenceParameterSetExtensionID(nal: w.nal(header: [0x6D])).seq_parameter_set_id == 17)
    }
}
