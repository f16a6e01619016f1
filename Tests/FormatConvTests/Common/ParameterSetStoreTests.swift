import FormatConv
import Testing

struct ParameterSetStoreTests {
    static func sps(id: Int, widthInMbs: Int = 20) -> [UInt8] {
        var b = H264SPSBuilder()
        b.seq_parameter_set_id = id
        b.widthInMbs = widthInMbs
        return b.nal()
    }

    static func hevcSPS(id: Int, vps: Int = 0, width: Int = 64) -> [UInt8] {
        var b = HEVCSPSBuilder()
        b.id = id
        b.vpsID = vps
        b.width = width
        return b.nal()
    }

    /// CONFORMANCE 9: every id the spec allows is kept, the next one is an error.
    @Test("CONFORMANCE 9: H.264 limits, 32 SPS and 256 PPS")
    func h264Limits() throws {
        var store = ParameterSetStore(codec: .h264)
        for id in 0..<32 { #expect(try store.update(nal: Self.sps(id: id))) }
        for id in 0..<256 { #expect(try store.update(nal: h264PPS(id: id, spsID: id % 32))) }
        #expect(store.sequenceParameterSetIDs.count == 32)
        #expect(store.pictureParameterSetIDs.count == 256)
        #expect(throws: MediaError.self) { try store.update(nal: Self.sps(id: 32)) }
        #expect(throws: MediaError.self) { try store.update(nal: h264PPS(id: 256)) }
        #expect(store.sequenceParameterSetIDs.count == 32)
        // avcC counts SPSs in 5 bits and PPSs in 8: a description holds at most
        // 31 SPS and 255 PPS.
        do {
            _ = try store.makeDescription()
            Issue.record("32 SPS do not fit an avcC")
        } catch {
            #expect(error.message.contains("at most 31"))
        }
        var smaller = ParameterSetStore(codec: .h264)
        for id in 0..<31 { _ = try smaller.update(nal: Self.sps(id: id)) }
        for id in 0..<255 { _ = try smaller.update(nal: h264PPS(id: id, spsID: id % 31)) }
        let description = try smaller.makeDescription()
        #expect(description.parameterSetCount == 31 + 255)
        #expect(try FormatDescription(avcC: description.record).parameterSets == description.parameterSets)
    }

    @Test("CONFORMANCE 9: HEVC limits, 16 VPS, 16 SPS, 64 PPS")
    func hevcLimits() throws {
        var store = ParameterSetStore(codec: .hevc)
        for id in 0..<16 { #expect(try store.update(nal: hevcVPS(id: id))) }
        for id in 0..<16 { #expect(try store.update(nal: Self.hevcSPS(id: id, vps: id))) }
        for id in 0..<64 { #expect(try store.update(nal: hevcPPS(id: id, spsID: id % 16))) }
        #expect(store.videoParameterSetIDs.count == 16)
        #expect(store.sequenceParameterSetIDs.count == 16)
        #expect(store.pictureParameterSetIDs.count == 64)
        #expect(throws: MediaError.self) { try store.update(nal: Self.hevcSPS(id: 16)) }
        #expect(throws: MediaError.self) { try store.update(nal: hevcPPS(id: 64)) }
        #expect(try store.makeDescription().parameterSetCount == 96)
    }

    @Test("CONFORMANCE 9: several ids, more PPS than SPS, updates by id")
    func updatesByID() throws {
        var store = ParameterSetStore(codec: .h264)
        #expect(!store.isComplete)
        #expect(throws: MediaError.self) { try store.makeDescription() }
        #expect(try store.update(nal: Self.sps(id: 0)))
        #expect(try store.update(nal: h264PPS(id: 0)))
        #expect(try store.update(nal: h264PPS(id: 1)))
        #expect(try store.update(nal: h264PPS(id: 2, spsID: 1)))
        #expect(store.isComplete)
        #expect(store.canDecodeSlice(referringToPictureParameterSet: 1))
        #expect(!store.canDecodeSlice(referringToPictureParameterSet: 2))  // SPS 1 missing
        #expect(!store.canDecodeSlice(referringToPictureParameterSet: 3))
        #expect(try store.update(nal: Self.sps(id: 1)))
        #expect(store.canDecodeSlice(referringToPictureParameterSet: 2))
        // The same bytes again change nothing.
        #expect(try !store.update(nal: Self.sps(id: 0)))
        #expect(try !store.update(nal: h264PPS(id: 1)))
        let description = try store.makeDescription(activeSequenceParameterSetID: 0)
        #expect(
            description.parameterSets == [
                Self.sps(id: 0), Self.sps(id: 1), h264PPS(id: 0), h264PPS(id: 1), h264PPS(id: 2, spsID: 1),
            ])
        #expect(throws: MediaError.self) { try store.update(nal: [0x65, 0x88]) }
        #expect(throws: MediaError.self) { try store.update(nal: [UInt8]()) }
        store.removeAll()
        #expect(!store.isComplete)
    }

    /// CONFORMANCE 11: a mid-stream SPS with a new resolution replaces the old
    /// one, yields a new description, and that description cannot be accepted.
    @Test("CONFORMANCE 11: a mid-stream SPS change yields a new description", arguments: [CodecType.h264, .hevc])
    func midStreamChange(codec: CodecType) throws {
        var store = ParameterSetStore(codec: codec, nalUnitHeaderLength: 2)
        let first: [[UInt8]] =
            codec == .h264 ? [Self.sps(id: 0), h264PPS(id: 0)] : [hevcVPS(), Self.hevcSPS(id: 0), hevcPPS()]
        for nal in first { _ = try store.update(nal: nal) }
        let before = try store.makeDescription()
        #expect(before.nalUnitHeaderLength == 2)
        for nal in first { #expect(try !store.update(nal: nal)) }
        #expect(try store.makeDescription() == before)

        let bigger = codec == .h264 ? Self.sps(id: 0, widthInMbs: 40) : Self.hevcSPS(id: 0, width: 128)
        #expect(try store.update(nal: bigger))
        let after = try store.makeDescription()
        #expect(after != before)
        #expect(after.width == 2 * before.width)
        #expect(!before.canAccept(after))
        #expect(!after.canAccept(before))
    }

    @Test("the SPS stored last leads the description, so its size is reported")
    func activeSPS() throws {
        var store = ParameterSetStore(codec: .h264)
        _ = try store.update(nal: Self.sps(id: 0))
        _ = try store.update(nal: h264PPS(id: 0))
        _ = try store.update(nal: Self.sps(id: 5, widthInMbs: 10))
        #expect(store.lastUpdatedSequenceParameterSetID == 5)
        #expect(try store.makeDescription().width == 160)
        #expect(try store.makeDescription(activeSequenceParameterSetID: 0).width == 320)
    }

    @Test("HEVC slices need the PPS, its SPS and that SPS's VPS")
    func hevcChain() throws {
        var store = ParameterSetStore(codec: .hevc)
        _ = try store.update(nal: Self.hevcSPS(id: 2, vps: 1))
        _ = try store.update(nal: hevcPPS(id: 7, spsID: 2))
        #expect(!store.canDecodeSlice(referringToPictureParameterSet: 7))
        _ = try store.update(nal: hevcVPS(id: 1))
        #expect(store.canDecodeSlice(referringToPictureParameterSet: 7))
        #expect(throws: MediaError.self) { try store.update(nal: hevcPrefixSEI()) }
    }
}
