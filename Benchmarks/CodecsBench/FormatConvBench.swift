import CBenchSupport
import CFFmpeg
import FormatConv
import Foundation
import MediaCore

/// Length-prefixed ⇄ Annex-B and start-code scanning, against FFmpeg's
/// `*_mp4toannexb` bitstream filter, a converter built on libavcodec's
/// start-code finder, memchr, and memcpy of the same bytes.
func benchmarkFormatConv(_ stream: CodedStream, quick: Bool, report: Report) throws {
    let label = stream.label
    let inputBytes = stream.sampleBytes
    // Repeat each pass until enough bytes went through to time it well.
    let targetBytes = quick ? 40_000_000 : 200_000_000
    let passes = max(1, targetBytes / max(1, inputBytes))
    let rounds = quick ? 2 : 3
    let megabytes = Double(inputBytes * passes) / 1e6

    // Length-prefixed → Annex-B: ours, into one reused buffer (a sender's loop).
    var sink = 0
    var reused: [UInt8] = []
    let ours: () throws -> Void = {
        for _ in 0..<passes {
            var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
            for sample in stream.samples {
                try writer.write(sample, into: &reused)
                sink &+= reused.count
            }
        }
    }
    // The allocating form, one new array per sample.
    let oursAllocating: () throws -> Void = {
        for _ in 0..<passes {
            var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
            for sample in stream.samples { sink &+= try writer.write(sample).count }
        }
    }
    // FFmpeg's filter, fed packets that reference pre-built buffers (no copy).
    let filter = try BitstreamFilter(codec: stream.codec, record: stream.description.record)
    let packets = try PacketBank(stream.samples.map(\.data))
    let reference: () throws -> Void = {
        for _ in 0..<passes { sink &+= try filter.run(packets) }
    }
    let (oursTime, filterTime) = try interleaved(rounds, ours: ours, reference: reference)
    let filterName = "\(stream.codec == .h264 ? "h264" : "hevc")_mp4toannexb (av_bsf)"
    report.add(
        Figure(
            name: "\(label) length-prefixed→Annex-B", ours: megabytes / oursTime, reference: megabytes / filterTime,
            referenceName: filterName, unit: "MB/s", higherIsBetter: true, target: "≥ 2.0"))
    let allocatingTime = try fastest(rounds, oursAllocating)
    report.add(
        Figure(
            name: "\(label) length-prefixed→Annex-B, new array each", ours: megabytes / allocatingTime,
            reference: megabytes / filterTime, referenceName: filterName, unit: "MB/s", higherIsBetter: true,
            target: nil))

    // The physical limit: memcpy of every sample into one buffer.
    var destination = [UInt8](repeating: 0, count: inputBytes)
    let copyTime = fastest(rounds) {
        destination.withUnsafeMutableBytes { out in
            for _ in 0..<passes {
                var offset = 0
                for sample in stream.samples {
                    _ = sample.data.withUnsafeBytes { source in
                        memcpy(out.baseAddress! + offset, source.baseAddress!, source.count)
                    }
                    offset += sample.data.count
                }
            }
        }
    }
    report.add(
        Figure(
            name: "\(label) length-prefixed→Annex-B vs memcpy", ours: megabytes / oursTime,
            reference: megabytes / copyTime, referenceName: "memcpy of the same bytes", unit: "MB/s",
            higherIsBetter: true, target: "≥ 0.6"))

    // The zero-copy forms, on private copies of the samples so that their
    // bytes are uniquely owned: the gather list (4-byte lengths rewritten in
    // place, parameter sets as ranges of their own) and the bare in-place
    // rewrite. Only the conversions are timed; making the copies is not.
    if stream.description.nalUnitHeaderLength == 4 {
        var gatherBest = Double.infinity
        var inPlaceBest = Double.infinity
        let placeholder = CompressedSample(
            data: [], formatDescription: stream.description, pts: .zero, dts: .zero, duration: .zero,
            isKeyframe: false)
        for _ in 0..<rounds {
            var gatherTotal = 0.0
            var inPlaceTotal = 0.0
            for _ in 0..<passes {
                var copies = stream.samples.map { sample in
                    var copy = sample
                    copy.data = distinctCopy(sample.data)
                    return copy
                }
                var lists: [AnnexBGatherList] = []
                lists.reserveCapacity(copies.count)
                var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
                var start = ContinuousClock.now
                for index in copies.indices {
                    var sample = placeholder
                    swap(&sample, &copies[index])
                    lists.append(try writer.gather(consume sample))
                }
                gatherTotal += seconds(start.duration(to: .now))
                sink &+= lists.count
                var datas = stream.samples.map { distinctCopy($0.data) }
                start = ContinuousClock.now
                for index in datas.indices { sink &+= try LengthPrefixed.convertToAnnexBInPlace(&datas[index]) }
                inPlaceTotal += seconds(start.duration(to: .now))
            }
            gatherBest = min(gatherBest, gatherTotal)
            inPlaceBest = min(inPlaceBest, inPlaceTotal)
        }
        report.add(
            Figure(
                name: "\(label) length-prefixed→Annex-B gather list (in place)", ours: megabytes / gatherBest,
                reference: megabytes / filterTime, referenceName: filterName, unit: "MB/s", higherIsBetter: true,
                target: nil))
        report.add(
            Figure(
                name: "\(label) length-prefixed→Annex-B in place", ours: megabytes / inPlaceBest,
                reference: megabytes / filterTime, referenceName: filterName, unit: "MB/s", higherIsBetter: true,
                target: nil))
    }

    // Annex-B → length-prefixed, access unit by access unit, into one reused
    // buffer; the reference is the same job in C (memchr scan, reused buffers).
    let annexBBytes = stream.annexBUnits.reduce(0) { $0 + $1.count }
    let annexBPasses = max(1, targetBytes / max(1, annexBBytes))
    let annexBMegabytes = Double(annexBBytes * annexBPasses) / 1e6
    let codec = stream.codec
    let cConverter = CConverter(codec: codec)
    // Both sides must produce the same bytes.
    for unit in stream.annexBUnits {
        _ = try unit.withUnsafeBytes { try AnnexB.lengthPrefixed(from: $0, codec: codec, into: &reused) }
        _ = cConverter.convert(unit)
        if cConverter.lastOutput != reused {
            report.notes.append("\(label): the C converter's output differs from ours")
            break
        }
    }
    let (toLengthTime, cTime) = try interleaved(
        rounds,
        ours: {
            for _ in 0..<annexBPasses {
                for unit in stream.annexBUnits {
                    _ = try unit.withUnsafeBytes { input in
                        try AnnexB.lengthPrefixed(from: input, codec: codec, into: &reused)
                    }
                    sink &+= reused.count
                }
            }
        },
        reference: {
            for _ in 0..<annexBPasses {
                for unit in stream.annexBUnits { sink &+= cConverter.convert(unit) }
            }
        })
    report.add(
        Figure(
            name: "\(label) Annex-B→length-prefixed", ours: annexBMegabytes / toLengthTime,
            reference: annexBMegabytes / cTime, referenceName: CConverter.name, unit: "MB/s", higherIsBetter: true,
            target: nil))
    let scannerTime = fastest(rounds) {
        for _ in 0..<annexBPasses {
            for unit in stream.annexBUnits { sink &+= libavcodecScannerToLengthPrefixed(unit, codec: codec).count }
        }
    }
    report.add(
        Figure(
            name: "\(label) Annex-B→length-prefixed vs libavcodec's scanner", ours: annexBMegabytes / toLengthTime,
            reference: annexBMegabytes / scannerTime, referenceName: "avpriv_find_start_code + copy",
            unit: "MB/s", higherIsBetter: true, target: "≥ 2.0"))

    // Annex-B → length-prefixed in place (every start code here is 4 bytes;
    // all NAL units kept, parameter sets included), on private copies.
    var inPlaceToLengthBest = Double.infinity
    for _ in 0..<rounds {
        var total = 0.0
        for _ in 0..<annexBPasses {
            var units = stream.annexBUnits.map { distinctCopy($0) }
            let start = ContinuousClock.now
            for index in units.indices { sink &+= AnnexB.convertToLengthPrefixedInPlace(&units[index]) ?? -1 }
            total += seconds(start.duration(to: .now))
        }
        inPlaceToLengthBest = min(inPlaceToLengthBest, total)
    }
    report.add(
        Figure(
            name: "\(label) Annex-B→length-prefixed in place (all NAL units kept)",
            ours: annexBMegabytes / inPlaceToLengthBest, reference: annexBMegabytes / cTime,
            referenceName: CConverter.name, unit: "MB/s", higherIsBetter: true, target: nil))

    // The streaming assembler over 64 KiB chunks (what a receiver runs).
    let assemblerTime = fastest(rounds) {
        for _ in 0..<annexBPasses {
            var assembler = AccessUnitAssembler(codec: codec)
            var offset = 0
            stream.annexB.withUnsafeBufferPointer { all in
                while offset < all.count {
                    let end = min(offset + 65536, all.count)
                    sink &+= assembler.append(UnsafeBufferPointer(rebasing: all[offset..<end])).count
                    offset = end
                }
            }
            sink &+= assembler.finish().count
        }
    }
    report.add(
        Figure(
            name: "\(label) AccessUnitAssembler (64 KiB chunks)", ours: annexBMegabytes / assemblerTime,
            reference: annexBMegabytes / scannerTime, referenceName: "avpriv_find_start_code + copy",
            unit: "MB/s", higherIsBetter: true, target: "≥ 2.0"))
    report.add(
        Figure(
            name: "\(label) AccessUnitAssembler vs the C converter", ours: annexBMegabytes / assemblerTime,
            reference: annexBMegabytes / cTime, referenceName: CConverter.name, unit: "MB/s", higherIsBetter: true,
            target: nil))

    // Start-code scanning alone over the whole stream.
    let whole = stream.annexB
    let scanPasses = max(1, targetBytes / max(1, whole.count))
    let scanMegabytes = Double(whole.count * scanPasses) / 1e6
    var oursCount = 0
    var avCount = 0
    var memchrCount = 0
    let scanTimes = interleaved(
        rounds,
        ours: {
            for _ in 0..<scanPasses {
                whole.withUnsafeBytes { buffer in AnnexB.forEachNALUnit(in: buffer) { _ in oursCount += 1 } }
            }
        },
        reference: {
            for _ in 0..<scanPasses { avCount += libavcodecStartCodeCount(whole) }
        })
    let memchrTime = fastest(rounds) {
        for _ in 0..<scanPasses { memchrCount += memchrStartCodeCount(whole) }
    }
    var scanCopy = [UInt8](repeating: 0, count: whole.count)
    let scanCopyTime = fastest(rounds) {
        for _ in 0..<scanPasses {
            scanCopy.withUnsafeMutableBytes { out in
                _ = whole.withUnsafeBytes { source in memcpy(out.baseAddress!, source.baseAddress!, source.count) }
            }
        }
    }
    if oursCount / rounds != avCount / rounds || avCount != memchrCount {
        report.notes.append(
            "\(label): start-code counts differ (ours \(oursCount / rounds / scanPasses), libavcodec \(avCount / rounds / scanPasses), memchr \(memchrCount / rounds / scanPasses)) — a zero-length or trailing-zero NAL is counted differently"
        )
    }
    report.add(
        Figure(
            name: "\(label) start-code scan", ours: scanMegabytes / scanTimes.ours,
            reference: scanMegabytes / scanTimes.reference, referenceName: "avpriv_find_start_code", unit: "MB/s",
            higherIsBetter: true, target: nil))
    report.add(
        Figure(
            name: "\(label) start-code scan vs memchr", ours: scanMegabytes / scanTimes.ours,
            reference: scanMegabytes / memchrTime, referenceName: "memchr(0x01) + check", unit: "MB/s",
            higherIsBetter: true, target: "≥ 0.8"))
    report.add(
        Figure(
            name: "\(label) start-code scan vs memcpy", ours: scanMegabytes / scanTimes.ours,
            reference: scanMegabytes / scanCopyTime, referenceName: "memcpy of the same bytes", unit: "MB/s",
            higherIsBetter: true, target: nil))
    if sink == 42 { print("") }  // keeps the results alive
}

/// A copy of `bytes` in storage of its own (`Array(bytes[...])` may share it).
func distinctCopy(_ bytes: [UInt8]) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: bytes.count) { output, initialized in
        _ = output.initialize(from: bytes)
        initialized = bytes.count
    }
}

/// A duration in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// FFmpeg's `h264_mp4toannexb` / `hevc_mp4toannexb` filter through `av_bsf_*`.
final class BitstreamFilter {
    private var context: UnsafeMutablePointer<AVBSFContext>?
    private let output: UnsafeMutablePointer<AVPacket>
    private let input: UnsafeMutablePointer<AVPacket>

    init(codec: CodecType, record: [UInt8]) throws {
        let name = codec == .h264 ? "h264_mp4toannexb" : "hevc_mp4toannexb"
        guard let filter = av_bsf_get_by_name(name) else { throw MediaError.unavailable("\(name) not built in") }
        var context: UnsafeMutablePointer<AVBSFContext>?
        guard av_bsf_alloc(filter, &context) >= 0, let context else { throw MediaError.unavailable("av_bsf_alloc") }
        context.pointee.par_in.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        context.pointee.par_in.pointee.codec_id = codec == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC
        let padding = Int(CFFmpeg_AV_INPUT_BUFFER_PADDING_SIZE())
        let extradata = av_mallocz(record.count + padding)!.assumingMemoryBound(to: UInt8.self)
        record.withUnsafeBytes {
            extradata.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: record.count)
        }
        context.pointee.par_in.pointee.extradata = extradata
        context.pointee.par_in.pointee.extradata_size = Int32(record.count)
        guard av_bsf_init(context) >= 0 else {
            var doomed: UnsafeMutablePointer<AVBSFContext>? = context
            av_bsf_free(&doomed)
            throw MediaError.backendFailure("av_bsf_init(\(name)) failed")
        }
        self.context = context
        self.output = av_packet_alloc()
        self.input = av_packet_alloc()
    }

    deinit {
        av_bsf_free(&context)
        var packet: UnsafeMutablePointer<AVPacket>? = output
        av_packet_free(&packet)
        packet = input
        av_packet_free(&packet)
    }

    /// Filters every packet of `bank`; returns the bytes produced.
    func run(_ bank: PacketBank) throws -> Int {
        var produced = 0
        for packet in bank.packets {
            av_packet_ref(input, packet)
            // On success the filter takes the reference and leaves `input` blank.
            var status = av_bsf_send_packet(context, input)
            av_packet_unref(input)
            guard status >= 0 else { throw MediaError.backendFailure("av_bsf_send_packet: \(status)") }
            while true {
                status = av_bsf_receive_packet(context, output)
                if status == CFFmpeg_AVERROR_EAGAIN() { break }
                guard status >= 0 else { throw MediaError.backendFailure("av_bsf_receive_packet: \(status)") }
                produced += Int(output.pointee.size)
                av_packet_unref(output)
            }
        }
        return produced
    }
}

/// AVPackets built once (with FFmpeg's input padding) so that filters can be
/// fed without copying inside the timed loop.
final class PacketBank {
    let packets: [UnsafeMutablePointer<AVPacket>]

    init(_ payloads: [[UInt8]]) throws {
        var packets: [UnsafeMutablePointer<AVPacket>] = []
        for payload in payloads {
            let packet = av_packet_alloc()!
            guard av_new_packet(packet, Int32(payload.count)) >= 0 else {
                throw MediaError.backendFailure("av_new_packet")
            }
            payload.withUnsafeBytes {
                packet.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: payload.count)
            }
            packets.append(packet)
        }
        self.packets = packets
    }

    deinit {
        for packet in packets {
            var doomed: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&doomed)
        }
    }
}

/// The C reference for Annex-B → length-prefixed
/// (`cbench_annexb_to_length_prefixed`): a memchr scan and two buffers
/// reused across calls, freed at the end.
final class CConverter {
    static let name = "C: memchr scan + reused buffer"
    private let hevc: Int32
    private var output = cbench_buffer()
    private var parameterSets = cbench_buffer()

    init(codec: CodecType) { hevc = codec == .hevc ? 1 : 0 }

    deinit {
        cbench_buffer_free(&output)
        cbench_buffer_free(&parameterSets)
    }

    /// Converts one access unit; returns the bytes written.
    func convert(_ unit: [UInt8]) -> Int {
        unit.withUnsafeBufferPointer { input in
            _ = cbench_annexb_to_length_prefixed(input.baseAddress, input.count, hevc, &output, &parameterSets)
        }
        return output.count
    }

    /// The bytes of the last conversion.
    var lastOutput: [UInt8] { Array(UnsafeBufferPointer(start: output.bytes, count: output.count)) }
}

/// A converter built the obvious way on libavcodec's start-code finder: find
/// each NAL unit, drop AUDs and parameter sets, write 4-byte lengths, one
/// output buffer of the exact size.
func libavcodecScannerToLengthPrefixed(_ unit: [UInt8], codec: CodecType) -> [UInt8] {
    unit.withUnsafeBufferPointer { buffer -> [UInt8] in
        let base = buffer.baseAddress!
        let end = base + buffer.count
        var ranges: [(Int, Int)] = []
        ranges.reserveCapacity(8)
        var state: UInt32 = 0xFFFF_FFFF
        var cursor = cbench_find_start_code(base, end, &state)!
        while cursor < end {
            let start = cursor - base - 1  // the NAL header byte
            state = 0xFFFF_FFFF
            let next = cbench_find_start_code(cursor, end, &state)!
            var stop = next < end ? next - base - 4 : buffer.count
            while stop > start && buffer[stop - 1] == 0 { stop -= 1 }
            if stop > start {
                let type = codec == .h264 ? Int(buffer[start] & 0x1F) : Int((buffer[start] >> 1) & 0x3F)
                let skip = codec == .h264 ? (type == 7 || type == 8 || type == 9) : (type >= 32 && type <= 35)
                if !skip { ranges.append((start, stop)) }
            }
            cursor = next
        }
        let total = ranges.reduce(0) { $0 + 4 + $1.1 - $1.0 }
        return [UInt8](unsafeUninitializedCapacity: total) { out, count in
            var offset = 0
            for (start, stop) in ranges {
                let length = UInt32(stop - start).bigEndian
                withUnsafeBytes(of: length) {
                    out.baseAddress!.advanced(by: offset).update(
                        from: $0.bindMemory(to: UInt8.self).baseAddress!, count: 4)
                }
                (out.baseAddress! + offset + 4).update(from: base + start, count: stop - start)
                offset += 4 + stop - start
            }
            count = offset
        }
    }
}

/// NAL units found by libavcodec's finder (start codes followed by a payload).
func libavcodecStartCodeCount(_ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBufferPointer { buffer in
        let base = buffer.baseAddress!
        let end = base + buffer.count
        var state: UInt32 = 0xFFFF_FFFF
        var cursor = base
        var count = 0
        while true {
            cursor = cbench_find_start_code(cursor, end, &state)!
            if cursor >= end && (state & 0xFFFF_FF00) != 0x100 { break }
            count += 1
            if cursor >= end { break }
        }
        return count
    }
}

/// NAL units found by memchr for the 0x01 of each `00 00 01`.
func memchrStartCodeCount(_ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBufferPointer { buffer in
        let base = UnsafeRawPointer(buffer.baseAddress!)
        var offset = 2
        var count = 0
        while offset < buffer.count {
            guard let hit = cbench_memchr(base + offset, 1, buffer.count - offset) else { break }
            let position = hit - base
            if buffer[position - 1] == 0 && buffer[position - 2] == 0 && position + 1 < buffer.count { count += 1 }
            offset = position + 1
        }
        return count
    }
}
