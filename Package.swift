// swift-tools-version:6.0
import PackageDescription

let aptLibraries: [SystemPackageProvider] = [
    .apt([
        "libavcodec-dev", "libavformat-dev", "libavutil-dev", "libswscale-dev",
        "libx264-dev", "libx265-dev", "libva-dev", "pkg-config",
    ])
]
let webRTCLibraries: [SystemPackageProvider] = [.apt(["libssl-dev", "libsrtp2-dev", "pkg-config"])]

let package = Package(
    name: "CodecSessions",
    products: [
        .library(name: "MediaCore", targets: ["MediaCore"]),
        .library(name: "FormatConv", targets: ["FormatConv"]),
        .library(name: "RTPPayload", targets: ["RTPPayload"]),
        .library(name: "CongestionControl", targets: ["CongestionControl"]),
        .library(name: "EncodeSession", targets: ["EncodeSession"]),
        .library(name: "DecodeSession", targets: ["DecodeSession"]),
        .library(name: "PixelTransfer", targets: ["PixelTransfer"]),
        .library(name: "Sockets", targets: ["Sockets"]),
        .library(name: "MediaIO", targets: ["MediaIO"]),
        .library(name: "WebStreaming", targets: ["WebStreaming"]),
        .library(name: "WebRTC", targets: ["WebRTC"]),
        .library(name: "LiveStreaming", targets: ["LiveStreaming"]),
        .executable(name: "codecs", targets: ["codecs"]),
        .executable(name: "codecs-bench", targets: ["CodecsBench"]),
        .executable(name: "StreamRoundTrip", targets: ["StreamRoundTrip"]),
        .executable(name: "RTPRecorder", targets: ["RTPRecorder"]),
        .executable(name: "LiveSend", targets: ["LiveSend"]),
        .executable(name: "SRTRecorder", targets: ["SRTRecorder"]),
    ],
    targets: [
        // System libraries: one module map and one shim header each.
        // x264.pc adds -DX264_API_IMPORTS (a Windows dllimport switch) that SwiftPM
        // rejects with a warning; the header and library sit on the default paths.
        .systemLibrary(name: "CX264", providers: aptLibraries),
        .systemLibrary(name: "CX265", pkgConfig: "x265", providers: aptLibraries),
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavcodec libavformat libavutil libswscale",
            providers: aptLibraries),
        .systemLibrary(name: "CVAAPI", pkgConfig: "libva libva-drm", providers: aptLibraries),
        // DTLS (OpenSSL) and SRTP (libsrtp2) for WebRTC; only WebRTC/Secure/ calls them.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: webRTCLibraries),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: webRTCLibraries),

        // Pure Swift.
        .target(name: "MediaCore"),
        .target(name: "FormatConv", dependencies: ["MediaCore"]),
        .target(name: "RTPPayload", dependencies: ["MediaCore", "FormatConv"]),
        .target(name: "CongestionControl", dependencies: ["MediaCore"]),
        // The one network layer: UDP (batches, segmentation offload), TCP listen
        // and connect, one address type for IPv4 and IPv6; the only module that
        // calls socket(2).
        .target(name: "Sockets", dependencies: ["MediaCore"]),
        // HTTP, WebSocket (RFC 6455) and the stream's wire format for browsers;
        // Protocol/ has no I/O, Server/ owns the sockets, Page/ the player page.
        .target(
            name: "WebStreaming", dependencies: ["MediaCore", "FormatConv", "Sockets"],
            resources: [.embedInCode("Page/player.html")]),
        // WebRTC: Protocol/ (STUN, ICE-lite, SDP offer/answer, demultiplexing)
        // is pure Swift; Secure/ holds the DTLS (OpenSSL) and SRTP (libsrtp2)
        // owners; Server/ the WHEP endpoint over one UDP socket.
        .target(
            name: "WebRTC",
            dependencies: [
                "MediaCore", "FormatConv", "RTPPayload", "WebStreaming", "Sockets", "COpenSSL", "CSRTP",
                "CongestionControl",
            ]),

        // The package-internal C boundary: error mapping per C library, the
        // VA-API device rule, hardware device and display owners, log capture,
        // library versions. Nothing in it is public.
        .target(
            name: "NativeCodecs", dependencies: ["MediaCore", "FormatConv", "CX264", "CX265", "CFFmpeg", "CVAAPI"]),

        // Sessions and I/O over the C libraries.
        .target(name: "PixelTransfer", dependencies: ["MediaCore", "NativeCodecs"]),
        .target(
            name: "EncodeSession",
            dependencies: ["MediaCore", "FormatConv", "PixelTransfer", "NativeCodecs"]),
        .target(
            name: "DecodeSession",
            dependencies: ["MediaCore", "FormatConv", "PixelTransfer", "NativeCodecs"]),
        .target(
            name: "MediaIO",
            dependencies: [
                "MediaCore", "FormatConv", "RTPPayload", "NativeCodecs", "Sockets", "PixelTransfer", "DecodeSession",
                "CongestionControl",
            ]),
        // The live loop: a source through an encoder to any sender, with
        // pacing, keyframe requests and target rates handled in one place.
        .target(
            name: "LiveStreaming",
            dependencies: [
                "MediaCore", "FormatConv", "RTPPayload", "EncodeSession", "DecodeSession", "MediaIO", "Sockets",
                "WebStreaming", "WebRTC", "CongestionControl", "PixelTransfer",
            ]),

        .executableTarget(
            name: "codecs",
            dependencies: [
                "MediaCore", "FormatConv", "EncodeSession", "DecodeSession", "PixelTransfer", "MediaIO", "RTPPayload",
                "WebStreaming", "WebRTC", "Sockets", "LiveStreaming", "CongestionControl",
            ]),
        // Allocation counting and libavcodec's start-code finder for codecs-bench.
        .target(name: "CBenchSupport", dependencies: ["CFFmpeg"], path: "Benchmarks/CBenchSupport"),
        .executableTarget(
            name: "CodecsBench",
            dependencies: [
                "CBenchSupport", "MediaCore", "FormatConv", "RTPPayload", "EncodeSession", "DecodeSession", "MediaIO",
                "CX264", "CX265", "CFFmpeg", "Sockets", "TestSupport", "CongestionControl", "WebRTC",
            ],
            path: "Benchmarks/CodecsBench"),
        .executableTarget(
            name: "StreamRoundTrip",
            dependencies: ["MediaCore", "RTPPayload", "DecodeSession", "MediaIO", "LiveStreaming"],
            path: "Examples/StreamRoundTrip"),
        .executableTarget(
            name: "RTPRecorder", dependencies: ["MediaCore", "FormatConv", "RTPPayload", "MediaIO"],
            path: "Examples/RTPRecorder"),
        .executableTarget(
            name: "LiveSend", dependencies: ["MediaCore", "MediaIO", "LiveStreaming"], path: "Examples/LiveSend"),
        .executableTarget(name: "SRTRecorder", dependencies: ["MediaCore", "MediaIO"], path: "Examples/SRTRecorder"),

        // Helpers shared by the test targets: running ffmpeg/ffprobe, framemd5,
        // fixtures, MD5 and PSNR, clip encoding and decode-all through the sessions.
        .target(
            name: "TestSupport",
            dependencies: [
                "MediaCore", "FormatConv", "EncodeSession", "DecodeSession", "MediaIO", "Sockets", "CongestionControl",
                "RTPPayload", "WebRTC",
            ],
            path: "Tests/TestSupport"),

        .testTarget(name: "MediaCoreTests", dependencies: ["TestSupport", "MediaCore"]),
        .testTarget(name: "FormatConvTests", dependencies: ["TestSupport", "FormatConv", "MediaCore"]),
        .testTarget(
            name: "EncodeSessionTests",
            dependencies: [
                "TestSupport", "EncodeSession", "DecodeSession", "FormatConv", "MediaCore", "MediaIO", "NativeCodecs",
            ]),
        .testTarget(
            name: "DecodeSessionTests",
            dependencies: [
                "TestSupport", "DecodeSession", "EncodeSession", "FormatConv", "MediaCore", "MediaIO", "NativeCodecs",
                "PixelTransfer",
            ]),
        .testTarget(
            name: "PixelTransferTests", dependencies: ["TestSupport", "PixelTransfer", "MediaCore", "MediaIO"]),
        .testTarget(
            name: "MediaIOTests",
            dependencies: [
                "TestSupport", "MediaIO", "MediaCore", "FormatConv", "EncodeSession", "DecodeSession", "Sockets",
                "CongestionControl",
            ]),
        // UDP and TCP over 127.0.0.1 and ::1, addresses, deadlines.
        .testTarget(name: "SocketsTests", dependencies: ["Sockets", "MediaCore"]),
        .testTarget(
            name: "RoundTripTests",
            dependencies: ["TestSupport", "EncodeSession", "DecodeSession", "FormatConv", "MediaCore", "MediaIO"]),
        .testTarget(name: "CodecsToolTests", dependencies: ["TestSupport", "MediaCore"]),
        // codecs stream send/receive over SRT, RTSP, RTMP, MPEG-TS/UDP and HLS
        // against FFmpeg and srt-live-transmit on loopback.
        .testTarget(name: "TransportTests", dependencies: ["TestSupport", "MediaCore", "MediaIO", "FormatConv"]),
        .testTarget(name: "NativeCodecsTests", dependencies: ["NativeCodecs", "MediaCore"]),
        .testTarget(
            name: "WebStreamingTests", dependencies: ["TestSupport", "WebStreaming", "FormatConv", "MediaCore"]),
        .testTarget(
            name: "WebRTCTests",
            dependencies: [
                "TestSupport", "WebRTC", "RTPPayload", "FormatConv", "MediaCore", "EncodeSession", "DecodeSession",
                "MediaIO", "LiveStreaming",
            ],
            // Peers/: the independent WebRTC peers the tests run (aiortc, Chromium, GStreamer).
            exclude: ["Peers"]),
        // The documentation's ```swift snippets, generated by scripts/doc-snippets
        // (compiled, never run; the snippets' own warnings are not the build's),
        // and the check that the generated files are up to date.
        .testTarget(
            name: "DocSnippetTests",
            dependencies: [
                "MediaCore", "FormatConv", "RTPPayload", "EncodeSession", "DecodeSession", "PixelTransfer", "MediaIO",
                "WebStreaming", "WebRTC", "Sockets", "LiveStreaming", "CongestionControl",
            ],
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]),
        .testTarget(
            name: "LiveStreamingTests",
            dependencies: [
                "TestSupport", "LiveStreaming", "EncodeSession", "DecodeSession", "MediaIO", "RTPPayload", "FormatConv",
                "MediaCore", "Sockets", "CongestionControl",
            ]),
        .testTarget(
            name: "RTPPayloadTests",
            dependencies: ["TestSupport", "RTPPayload", "FormatConv", "MediaCore", "DecodeSession"]
        ),
        .testTarget(name: "CongestionControlTests", dependencies: ["TestSupport", "CongestionControl", "MediaCore"]),
    ],
    swiftLanguageModes: [.v6]
)
