import FormatConv
import Testing

struct HEVCPictureParameterSetTests {
    @Test(
        "ids, tiles_enabled_flag and entropy_coding_sync_enabled_flag",
        arguments: [(0, 0, false, false), (63, 15, true, false), (5, 3, false, true), (9, 1, true, true)])
    func fields(id: Int, spsID: Int, tiles: Bool, wpp: Bool) throws {
        let pps = try HEVCPictureParameterSet(nal: hevcPPS(id: id, spsID: spsID, tiles: tiles, wpp: wpp))
        #expect(pps.pps_pic_parameter_set_id == id)
        #expect(pps.pps_seq_parameter_set_id == spsID)
        #expect(pps.tiles_enabled_flag == tiles)
        #expect(pps.entropy_coding_sync_enabled_flag == wpp)
    }

    @Test("ids beyond 63 / 15 are errors naming the field")
    func limits() {
        for (nal, field) in [
            (hevcPPS(id: 64), "pps_pic_parameter_set_id"), (hevcPPS(spsID: 16), "pps_seq_parameter_set_id"),
        ] {
            do {
                _ = try HEVCPictureParameterSet(nal: nal)
                Issue.record("\(field) out of range")
            } catch {
                #expect(error.message.contains(field))
            }
        }
        for bytes in mutations(of: hevcPPS(tiles: true, wpp: true)) {
            _ = try? HEVCPictureParameterSet(nal: bytes)
        }
    }
}
