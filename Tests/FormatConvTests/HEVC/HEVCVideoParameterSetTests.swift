import FormatConv
import Testing

struct HEVCVideoParameterSetTests {
    @Test("VPS ids 0...15 and sub-layer counts", arguments: [0, 1, 15])
    func ids(id: Int) throws {
        let vps = try HEVCVideoParameterSet(nal: hevcVPS(id: id, subLayersMinus1: 2))
        #expect(vps.vps_video_parameter_set_id == id)
        #expect(vps.vps_max_sub_layers_minus1 == 2)
        #expect(!vps.vps_temporal_id_nesting_flag)
    }

    @Test("wrong header, reserved bits or sub-layer count are errors")
    func invalid() {
        var bad = hevcVPS()
        bad[0] = 0x42  // SPS type
        #expect(throws: MediaError.self) { try HEVCVideoParameterSet(nal: bad) }
        #expect(throws: MediaError.self) { try HEVCVideoParameterSet(nal: [0x40]) }
        #expect(throws: MediaError.self) { try HEVCVideoParameterSet(nal: [0x40, 0x00, 0x0C]) }  // temporal id 0
        #expect(throws: MediaError.self) { try HEVCVideoParameterSet(nal: hevcVPS(subLayersMinus1: 7)) }
        for bytes in mutations(of: hevcVPS(subLayersMinus1: 3)) {
            _ = try? HEVCVideoParameterSet(nal: bytes)
        }
    }
}
