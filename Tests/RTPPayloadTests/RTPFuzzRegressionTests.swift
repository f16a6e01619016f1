import FormatConv
import Foundation
import MediaCore
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

extension RTPFuzzRegressionTests {
    /// Raw-mode inputs of the RTPReceiverSession target (selector bit 1):
    /// records of a kind byte (bit 7 RTCP, low bits the source address), a
    /// wait in milliseconds, a 16-bit length and the datagram.
    @Test func receiverSessionInputs() throws {
        let inputs = Self.inputs("RTPReceiverSession").filter { $0.bytes.count > 1 && $0.bytes[0] & 2 != 0 }
        #expect(!inputs.isEmpty)
        for (name, input) in inputs {
            let selector = input[0]
            let codec: CodecType = selector & 1 == 0 ? .h264 : .hevc
            var session = RTPReceiverSession<UInt8>(
                configuration: .init(
                    codec: codec, payloadType: selector & 0x10 != 0 ? 96 : nil, ssrc: 0x7777,
                    jitterBufferDelay: MediaTime(value: 30, timescale: 1000), jitterBufferCapacity: 64,
                    jitterBufferByteLimit: 256 << 10, nack: selector & 4 != 0 ? .init(maximumTracked: 32) : nil,
                    retransmission: selector & 8 != 0 ? RTPRetransmission(payloadType: 97) : nil,
                    minimumSequential: selector & 0x20 != 0 ? 1 : 2, historyCapacity: 8))
            var events: [RTPReceiverSession<UInt8>.Event] = []
            var now = MediaTime(value: 0, timescale: 1000)
            let bytes = Array(input.dropFirst())
            var offset = 0
            while offset + 4 <= bytes.count {
                let kind = bytes[offset]
                now = now + MediaTime(value: Int64(bytes[offset + 1]), timescale: 1000)
                let end = min(bytes.count, offset + 4 + (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])))
                let datagram = Array(bytes[(offset + 4)..<end])
                events += session.poll(at: now)
                events +=
                    kind & 0x80 != 0
                    ? session.receiveRTCP(datagram, from: kind & 3, at: now)
                    : session.receiveRTP(datagram, from: kind & 3, at: now)
                offset = end
            }
            events += session.poll(at: now + MediaTime(value: 5, timescale: 1))
            events += session.finish(at: now + MediaTime(value: 5, timescale: 1))
            var samples = 0
            for case .sample(let sample) in events {
                samples += 1
                #expect(throws: Never.self, "\(name)") {
                    try LengthPrefixed.nalUnitRanges(in: sample.data, lengthSize: 4, codec: codec)
                }
            }
            #expect(session.statistics.framesReceived == samples, "\(name)")
            #expect(session.bufferedPacketCount == 0, "\(name)")
        }
    }
}
