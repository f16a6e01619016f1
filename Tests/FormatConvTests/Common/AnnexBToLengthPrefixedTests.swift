import FormatConv
import Testing

struct AnnexBToLengthPrefixedTests {
    /// CONFORMANCE 7: AUD first, SEI between SPS and PPS, SPS extension,
    /// filler, end of sequence and end of stream.
    @Test(arguments: [3, 4], [1, 2, 4])
    func delimitersStrippedSetsLiftedRestKept(_ startCodeLength: Int, _ lengthSize: Int) throws {
        let aud: [UInt8] = [0x09, 0xF0]
        let sei: [UInt8] = [0x06, 0x05, 0x02, 0xAA, 0xBB, 0x80]
        let spsExtension: [UInt8] = [0x6D, 0xC8, 0x80]
        let filler: [UInt8] = [0x0C, 0xFF, 0xFF, 0x80]
        let idr = h264Slice(idr: true)
        let endOfSequence: [UInt8] = [0x0A]
        let endOfStream: [UInt8] = [0x0B]
        let stream = annexB(
            [aud, seedSPS, sei, seedPPS, spsExtension, idr, filler, endOfSequence, endOfStream],
            startCodeLength: startCodeLength)
        let unit = try AnnexB.lengthPrefixed(from: stream, codec: .h264, lengthSize: lengthSize)
        #expect(unit.parameterSets == [seedSPS, seedPPS, spsExtension])
        #expect(unit.removedDelimiterCount == 1)
        #expect(unit.nalUnitCount == 5)
        #expect(unit.data == lengthPrefixed([sei, idr, filler, endOfSequence, endOfStream], lengthSize: lengthSize))
    }

    /// CONFORMANCE 5: `00 00 03` inside payloads survives byte for byte, at
    /// the start, in the middle and at the end of a NAL unit.
    @Test(arguments: [3, 4], [1, 2, 4])
    func emulationPreventionRoundTrips(_ startCodeLength: Int, _ lengthSize: Int) throws {
        let units: [[UInt8]] = [
            [0x41, 0x00, 0x00, 0x03, 0x01, 0x9A],
            [0x41, 0x9A, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03],
            [0x01, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x02, 0x00, 0x00, 0x03, 0x03],
        ]
        let stream = annexB(units, startCodeLength: startCodeLength)
        let unit = try AnnexB.lengthPrefixed(from: stream, codec: .h264, lengthSize: lengthSize)
        #expect(unit.data == lengthPrefixed(units, lengthSize: lengthSize))
        let back = try AnnexBWriter.annexB(fromLengthPrefixed: unit.data, lengthSize: lengthSize)
        #expect(back == annexB(units))
    }

    @Test func hevcNALUnitShorterThanItsHeaderIsAnError() {
        let stream: [UInt8] = [0, 0, 0, 1, 0x26, 0x01, 0xAF, 0, 0, 1, 0x02]
        let error = #expect(throws: MediaError.self) { _ = try AnnexB.lengthPrefixed(from: stream, codec: .hevc) }
        #expect(error?.code == .invalidData)
        #expect(error?.message.contains("offset 10") == true)
    }

    @Test func hevcParameterSetsAreLiftedAndLayeredOnesKept() throws {
        let layeredSPS: [UInt8] = [0x42, 0x09, 0x01, 0x80]  // nuh_layer_id 1
        let sei = hevcNAL(.prefixSEI)
        let slice = hevcSlice(type: .idrWithRADL)
        let stream = annexB([hevcNAL(.accessUnitDelimiter), x265VPS, x265SPS, x265PPS, layeredSPS, sei, slice])
        let unit = try AnnexB.lengthPrefixed(from: stream, codec: .hevc)
        #expect(unit.parameterSets == [x265VPS, x265SPS, x265PPS])
        #expect(unit.data == lengthPrefixed([layeredSPS, sei, slice]))
    }

    /// The in-place path (4-byte start codes, 4-byte lengths, nothing removed)
    /// gives the same bytes as the copying path.
    @Test func inPlaceRewriteMatchesCopy() throws {
        let units = [h264Slice(idr: true, payload: 40), h264Slice(firstMb: 5, payload: 3), [0x06, 0x01, 0x80]]
        let stream = annexB(units)
        let kept = stream
        let inPlace = try AnnexB.lengthPrefixed(from: stream, codec: .h264)
        #expect(inPlace.data == lengthPrefixed(units))
        #expect(kept == annexB(units), "the caller's copy is untouched")
        let copied = try AnnexB.lengthPrefixed(from: annexB(units, startCodeLength: 3), codec: .h264)
        #expect(copied.data == inPlace.data)
    }

    /// The exhaustive small space: start code 3/4 × length size 1/2/4 ×
    /// emulation-prevention bytes at the buffer's edges × empty and
    /// trailing-zero NAL units. Annex-B → length-prefixed → Annex-B is the
    /// identity on the NAL units.
    @Test func exhaustiveSmallSpace() throws {
        let payloads: [(String, [UInt8])] = [
            ("plain", [0x41, 0x9A]),
            ("epb first", [0x41, 0x00, 0x00, 0x03, 0x01]),
            ("epb last", [0x41, 0x9A, 0x00, 0x00, 0x03]),
            ("epb only", [0x01, 0x00, 0x00, 0x03]),
            ("one byte", [0x41]),
        ]
        let layouts: [(String, (_ unit: [UInt8], _ code: [UInt8]) -> [UInt8])] = [
            ("alone", { unit, code in code + unit }),
            ("empty NAL before", { unit, code in code + code + unit }),
            ("empty NAL after", { unit, code in code + unit + code }),
            ("trailing zeros", { unit, code in code + unit + [0, 0, 0] }),
            ("trailing zeros then NAL", { unit, code in code + unit + [0, 0] + code + [0x0C, 0x80] }),
            ("junk before", { unit, code in [0xFF, 0x00] + code + unit }),
        ]
        for startCodeLength in [3, 4] {
            let code: [UInt8] = startCodeLength == 4 ? [0, 0, 0, 1] : [0, 0, 1]
            for lengthSize in [1, 2, 4] {
                for (payloadName, payload) in payloads {
                    for (layoutName, layout) in layouts {
                        let combination =
                            "start code \(startCodeLength), length \(lengthSize), \(payloadName), \(layoutName)"
                        let stream = layout(payload, code)
                        let expected = scanned(stream)
                        #expect(expected.first == payload, "\(combination)")
                        let unit = try AnnexB.lengthPrefixed(from: stream, codec: .h264, lengthSize: lengthSize)
                        #expect(unit.data == lengthPrefixed(expected, lengthSize: lengthSize), "\(combination)")
                        let back = try AnnexBWriter.annexB(fromLengthPrefixed: unit.data, lengthSize: lengthSize)
                        #expect(scanned(back) == expected, "\(combination)")
                        let again = try AnnexB.lengthPrefixed(from: back, codec: .h264, lengthSize: lengthSize)
                        #expect(again.data == unit.data, "\(combination)")
                    }
                }
            }
        }
    }

    /// CONFORMANCE 4: a stream with only 3-byte start codes gets an output of
    /// the exact size (each start code grows by one byte for 4-byte lengths).
    @Test(arguments: [1, 2, 4])
    func outputSizedExactlyForThreeByteStartCodes(_ lengthSize: Int) throws {
        let units = (0..<50).map { h264Slice(firstMb: $0, payload: $0 % 7) }
        let stream = annexB(units, startCodeLength: 3)
        let unit = try AnnexB.lengthPrefixed(from: stream, codec: .h264, lengthSize: lengthSize)
        #expect(unit.data.count == stream.count + 50 * (lengthSize - 3))
        #expect(unit.data == lengthPrefixed(units, lengthSize: lengthSize))
    }
}
