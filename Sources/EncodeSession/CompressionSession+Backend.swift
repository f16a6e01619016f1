import FormatConv
import MediaCore
import NativeCodecs

// Which encoder the session opens, and what its parameter sets say.
extension CompressionSession {
    /// The most frames the encoder in use holds before it returns one (0:
    /// one frame in, one out): x264's own count; for x265 its look-ahead,
    /// B-frames and frame threads; for VA-API the B-frames and the packet
    /// libavcodec keeps back outside low-latency mode.
    public var maxFrameDelayCount: Int { engine?.maxFrameDelayCount ?? 0 }

    /// The description of an encoder's parameter sets; in low-latency mode an
    /// H.264 SPS says the stream has no reordering (``FormatDescription/withoutReordering()``);
    /// it carries the HDR10 metadata the encoder writes as SEI; and for Constrained High it carries `constraint_set4_flag` and
    /// `constraint_set5_flag` (the constraint byte follows `profile_idc`; the
    /// bytes before it are not zero, so no emulation prevention changes).
    static func description(
        _ codec: CodecType, _ parameterSets: [[UInt8]], properties: CompressionProperties
    ) throws(MediaError) -> FormatDescription {
        var description: FormatDescription
        switch codec {
        case .h264:
            var sets = parameterSets
            if properties.profile == .constrainedHigh {
                for index in sets.indices where sets[index].count > 3 && H264NALUnitHeader(sets[index][0]).type == .sps
                {
                    sets[index][2] |= 0x08 | 0x04
                }
            }
            description = try FormatDescription(h264ParameterSets: sets)
            if properties.lowLatency { description = try description.withoutReordering() }
        case .hevc:
            description = try FormatDescription(hevcParameterSets: parameterSets)
        }
        // Every backend that accepts `hdr10` writes it as SEI (the others
        // refuse it), so the description states what the stream carries.
        description.hdr10 = properties.hdr10
        return description
    }

    /// Opens the encoder `choice` asks for: the factory's hardware encoder
    /// for `.hardware` and `.vaapi` (which throw when it fails), its hardware
    /// encoder else software for `.automatic`, software for `.software`;
    /// `.nvdec` is refused (NVDEC only decodes). The second value says why
    /// hardware is not in use when `.automatic` allowed it. The decode side
    /// mirrors this in `DecompressionSession.makeDecoder`.
    static func makeEncoder(
        _ choice: CodecBackend, _ configuration: EncoderConfiguration, factory: EncoderFactory
    ) throws(MediaError) -> (any EncoderBackend, String?) {
        let noHardware = "no hardware encoder backend is built into this library"
        switch choice {
        case .software:
            return (try factory.software(configuration), nil)
        case .hardware, .vaapi, .nvdec:
            guard let hardware = factory.hardware else { throw .unavailable("hardware encoding: \(noHardware)") }
            switch choice {
            case .vaapi(let path): return (try hardware(configuration, .vaapi(path: path)), nil)
            case .nvdec(let index): return (try hardware(configuration, .nvdec(index: index)), nil)
            default: return (try hardware(configuration, .vaapi(path: nil)), nil)
            }
        case .automatic:
            guard let hardware = factory.hardware else { return (try factory.software(configuration), noHardware) }
            do throws(MediaError) {
                return (try hardware(configuration, .vaapi(path: nil)), nil)
            } catch {
                return (try factory.software(configuration), error.message)
            }
        }
    }
}
