/// What VA-API offers on this machine: each device tried, with its vendor and
/// its profile × entrypoint table for H.264 and HEVC, or the exact reason it
/// cannot be used. Returned by `CompressionSession.vaapiDevices(explicitDevice:)`
/// and `DecompressionSession.vaapiDevices(explicitDevice:)`.
public struct VAAPIReport: Sendable, Hashable {
    /// The devices the device rule named (`device:`, else `CODECS_VAAPI_DEVICE`,
    /// else the first DRM render node), each opened or with its reason.
    public var devices: [VAAPIDeviceInfo] = []
    /// Why no device could be used; nil when at least one answered.
    public var unavailableReason: String?

    /// Creates a report of `devices`, with `unavailableReason` saying why none could be used.
    public init(devices: [VAAPIDeviceInfo] = [], unavailableReason: String? = nil) {
        self.devices = devices
        self.unavailableReason = unavailableReason
    }

    /// Whether at least one device opened.
    public var isAvailable: Bool { devices.contains { $0.unavailableReason == nil } }

    /// The first device that opened and offers `entrypoint` for a profile of
    /// `codec`, if any.
    public func device(offering entrypoint: String, for codec: CodecType) -> VAAPIDeviceInfo? {
        devices.first { device in
            device.unavailableReason == nil
                && device.profiles.contains { $0.codec == codec && $0.entrypoints.contains(entrypoint) }
        }
    }

    /// The surface layouts the first device that opened offers for `codec`
    /// with any of `entrypoints` (`["VLD"]` for decode, `["EncSlice",
    /// "EncSliceLP"]` for encode), in profile order; nil when no device opened.
    public func surfaceFormats(for codec: CodecType, entrypoints: [String]) -> [PixelFormat]? {
        guard let device = devices.first(where: { $0.unavailableReason == nil }) else { return nil }
        var formats: [PixelFormat] = []
        for profile in device.profiles where profile.codec == codec {
            guard profile.entrypoints.contains(where: entrypoints.contains) else { continue }
            for format in profile.pixelFormats where !formats.contains(format) { formats.append(format) }
        }
        return formats
    }
}

/// One VA-API device as the probe saw it.
public struct VAAPIDeviceInfo: Sendable, Hashable {
    /// The DRM render node's path.
    public var path: String
    /// The driver's vendor string.
    public var vendor: String?
    /// The VA-API version the driver speaks (`vaInitialize`'s major.minor).
    public var apiVersion: String?
    /// The H.264 and HEVC profiles the driver offers, with their entrypoints.
    public var profiles: [VAAPIProfileInfo] = []
    /// Why the device could not be opened; nil when it answered.
    public var unavailableReason: String?

    /// Creates the entry for the render node at `path`, with nothing probed yet.
    public init(path: String) { self.path = path }
}

/// One profile of a VA-API device and the entrypoints it offers for it.
public struct VAAPIProfileInfo: Sendable, Hashable {
    /// Whether the profile is an H.264 or an HEVC one.
    public var codec: CodecType
    /// The profile's name without its codec (`"High"`, `"Main10"`).
    public var profile: String
    /// `"VLD"` (decode), `"EncSlice"`, `"EncSliceLP"` (low-power encode).
    public var entrypoints: [String]
    /// The surface layouts the device takes and gives for this profile, from
    /// its `RTFormat` attribute: `.nv12` (`VA_RT_FORMAT_YUV420`), `.p010`
    /// (`VA_RT_FORMAT_YUV420_10`, HEVC Main10); for HEVC Main422_10 (probed
    /// for encoding) `.i422` (`VA_RT_FORMAT_YUV422`) and `.i210`
    /// (`VA_RT_FORMAT_YUV422_10`), the planar formats the encoder uploads as
    /// YUY2 and Y210 surfaces.
    public var pixelFormats: [PixelFormat]

    /// Creates the entry for `profile` of `codec` with the entrypoints and surface layouts the device offers for it.
    public init(codec: CodecType, profile: String, entrypoints: [String], pixelFormats: [PixelFormat] = []) {
        self.codec = codec
        self.profile = profile
        self.entrypoints = entrypoints
        self.pixelFormats = pixelFormats
    }
}

/// One encoder or decoder CodecSessions can drive, and whether a session can
/// open it on this machine now (modelled on `VTCopyVideoEncoderList`).
///
/// "Available" means exactly that a session opens: the capability functions
/// open the same backend a session would (a 64×64 encoder, the decoder with
/// its device), so a probe and a session never disagree.
public struct CodecBackendInfo: Sendable, Hashable {
    /// The backend's name, the one its sessions report as their `backend`:
    /// encoders `"x264"`, `"x265"`, `"vaapi"`; decoders `"libavcodec"`,
    /// `"vaapi"`, `"nvdec"`. A software backend is named for its library, a
    /// hardware one for its device interface (the ``CodecBackend`` case that
    /// chooses it); ``codec`` tells the two `"vaapi"` encoders apart.
    public var name: String
    /// The codec it encodes or decodes.
    public var codec: CodecType
    /// Whether it runs on the CPU or on a device.
    public var isHardware: Bool
    /// Why a session cannot open it now; nil when it can.
    public var unavailableReason: String?
    /// The pixel formats it handles. For an encoder, the layouts it codes
    /// (the values `CompressionProperties.pixelFormat` may take): the
    /// stream's chroma format and bit depth. For a decoder, the layouts its
    /// pictures come out in without conversion.
    public var pixelFormats: [PixelFormat] = []
    /// For VA-API encoders on a device that offers only the low-power
    /// entrypoint (`EncSliceLP`): the session opens libavcodec's `low_power` mode.
    public var usesLowPowerEntrypoint = false

    /// Creates the entry for the backend `name`; pass nil for `unavailableReason` when a session can open it.
    public init(name: String, codec: CodecType, isHardware: Bool, unavailableReason: String?) {
        self.name = name
        self.codec = codec
        self.isHardware = isHardware
        self.unavailableReason = unavailableReason
    }

    /// Whether a session can open it now (``unavailableReason`` is nil).
    public var isAvailable: Bool { unavailableReason == nil }
}

/// The versions of the C libraries this build runs on.
public struct LibraryVersions: Sendable, Hashable {
    /// `[("x264", "0.164.3095"), ("x265", "3.5"), ("libavcodec", "59.37.100"), …]`
    /// in a fixed order: x264, x265, libavcodec, libavformat, libavutil,
    /// libswscale, libva.
    public var versions: [Entry]
    /// The full build strings where a library has one (x264's and x265's).
    public var builds: [Entry]

    /// A library's name and its version or build string.
    public struct Entry: Sendable, Hashable {
        /// The library's name (`"x264"`, `"libavcodec"`, …).
        public var library: String
        /// The version the library reports at run time (`"59.37.100"`), or its full build string.
        public var version: String
        /// Creates an entry for `library` at `version`.
        public init(library: String, version: String) {
            self.library = library
            self.version = version
        }
    }

    /// Creates the table from the libraries' versions and build strings.
    public init(versions: [Entry], builds: [Entry]) {
        self.versions = versions
        self.builds = builds
    }
}
