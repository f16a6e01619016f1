import CFFmpeg
import CVAAPI
import FormatConv
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the first steps of an encode session straight through libva so that a
/// failure names its call and VA status (libavcodec reports them all as EIO).
enum VAAPIPreflight {
    /// What the driver offers for the stream's profile.
    struct Outcome {
        /// Whether the driver accepts packed sequence headers
        /// (`VAConfigAttribEncPackedHeaders` includes `VA_ENC_PACKED_HEADER_SEQUENCE`).
        var packedSequenceHeaders: Bool
        /// Whether only the low-power entrypoint (`EncSliceLP`) is offered, so
        /// libavcodec must be opened with `low_power=1`.
        var lowPower: Bool
        /// Whether the driver takes list-1 references (`VAConfigAttribEncMaxRefFrames`
        /// high half above 0); libavcodec codes no B-frames without them.
        var bFrames = false
    }

    static func run(devicePath: String, settings: VAAPIEncoderSettings) throws(MediaError) -> Outcome {
        let display = try VAAPIDisplay(path: devicePath, kind: .vaapiEncoderDisplay)
        let entrypoints = try display.entrypoints(for: settings.vaProfile, name: settings.profileName)
        let entrypoint: VAEntrypoint
        let entrypointName: String
        if entrypoints.contains(VAEntrypointEncSlice) {
            (entrypoint, entrypointName) = (VAEntrypointEncSlice, "EncSlice")
        } else if entrypoints.contains(VAEntrypointEncSliceLP) {
            (entrypoint, entrypointName) = (VAEntrypointEncSliceLP, "EncSliceLP")
        } else {
            let software = settings.codec == .h264 ? "x264" : "x265"
            throw .unavailable(
                "the VA-API device \(devicePath) (\(display.vendor ?? "unknown driver")) offers no "
                    + "\(settings.profileName) encode entrypoint (\(settings.vaProfileName) with neither EncSlice nor "
                    + "the low-power EncSliceLP); use \(software)")
        }
        let layout = settings.surfaceLayout
        let dpy = display.display
        var rtFormats = VAConfigAttrib(type: VAConfigAttribRTFormat, value: 0)
        try VAStatusError.check(
            vaGetConfigAttributes(dpy, settings.vaProfile, entrypoint, &rtFormats, 1),
            "vaGetConfigAttributes(\(settings.profileName), \(entrypointName))", device: devicePath, as: .unavailable)
        guard rtFormats.value != VA_ATTRIB_NOT_SUPPORTED, rtFormats.value & layout.rtFormat != 0 else {
            throw .unavailable(
                "the VA-API device \(devicePath) offers \(settings.profileName) encode but no \(layout.name) surfaces "
                    + "(its RTFormat lacks \(layout.rtFormatName))")
        }
        var packedHeaders = VAConfigAttrib(type: VAConfigAttribEncPackedHeaders, value: 0)
        try VAStatusError.check(
            vaGetConfigAttributes(dpy, settings.vaProfile, entrypoint, &packedHeaders, 1),
            "vaGetConfigAttributes(\(settings.profileName), \(entrypointName))", device: devicePath, as: .unavailable)
        let packedSequenceHeaders =
            packedHeaders.value != VA_ATTRIB_NOT_SUPPORTED
            && (packedHeaders.value & UInt32(VA_ENC_PACKED_HEADER_SEQUENCE)) != 0
        var references = VAConfigAttrib(type: VAConfigAttribEncMaxRefFrames, value: 0)
        try VAStatusError.check(
            vaGetConfigAttributes(dpy, settings.vaProfile, entrypoint, &references, 1),
            "vaGetConfigAttributes(\(settings.profileName), \(entrypointName))", device: devicePath, as: .unavailable)
        let bFrames = references.value != VA_ATTRIB_NOT_SUPPORTED && (references.value >> 16) & 0xFFFF > 0
        var attribute = VAConfigAttrib(type: VAConfigAttribRTFormat, value: layout.rtFormat)
        var config = VAConfigID(VA_INVALID_ID)
        try VAStatusError.check(
            vaCreateConfig(dpy, settings.vaProfile, entrypoint, &attribute, 1, &config),
            "vaCreateConfig(\(settings.profileName), \(entrypointName))", device: devicePath, as: .unavailable)
        defer { vaDestroyConfig(dpy, config) }
        let layouts = try surfaceFourccs(dpy, config: config, device: devicePath)
        guard layouts.isEmpty || layouts.contains(layout.fourcc) else {
            throw .unavailable(
                "the VA-API device \(devicePath) offers \(settings.profileName) encode but its surfaces for it are not "
                    + "\(layout.name) (vaQuerySurfaceAttributes)")
        }
        var surface = VASurfaceID(VA_INVALID_SURFACE)
        let surfaceName = layout.rtFormatName.dropFirst("VA_RT_FORMAT_".count)
        try VAStatusError.check(
            vaCreateSurfaces(
                dpy, layout.rtFormat, UInt32(settings.width), UInt32(settings.height), &surface, 1, nil, 0),
            "vaCreateSurfaces(\(settings.width)x\(settings.height) \(surfaceName))", device: devicePath,
            as: .unavailable)
        defer { vaDestroySurfaces(dpy, &surface, 1) }
        var context = VAContextID(VA_INVALID_ID)
        try VAStatusError.check(
            vaCreateContext(
                dpy, config, Int32(settings.width), Int32(settings.height), Int32(VA_PROGRESSIVE), &surface, 1,
                &context),
            "vaCreateContext", device: devicePath, as: .unavailable)
        vaDestroyContext(dpy, context)
        return Outcome(
            packedSequenceHeaders: packedSequenceHeaders, lowPower: entrypoint == VAEntrypointEncSliceLP,
            bFrames: bFrames)
    }

    /// The pixel formats (fourccs) `vaQuerySurfaceAttributes` lists for
    /// `config`; empty when the driver lists none.
    private static func surfaceFourccs(_ dpy: VADisplay, config: VAConfigID, device: String) throws(MediaError)
        -> [UInt32]
    {
        var count: UInt32 = 0
        try VAStatusError.check(
            vaQuerySurfaceAttributes(dpy, config, nil, &count), "vaQuerySurfaceAttributes", device: device,
            as: .unavailable)
        guard count > 0 else { return [] }
        var attributes = [VASurfaceAttrib](repeating: VASurfaceAttrib(), count: Int(count))
        try VAStatusError.check(
            vaQuerySurfaceAttributes(dpy, config, &attributes, &count), "vaQuerySurfaceAttributes", device: device,
            as: .unavailable)
        return attributes.prefix(Int(count)).filter { $0.type == VASurfaceAttribPixelFormat }.map {
            UInt32(bitPattern: $0.value.value.i)
        }
    }
}
