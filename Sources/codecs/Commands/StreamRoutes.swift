import MediaCore
import MediaIO

/// What `codecs stream send` was asked to do, checked before any work starts.
struct StreamSendRequest {
    var input: String
    var inputKind: MediaFileKind
    var url: String
    var arguments: Arguments
}

/// What `codecs stream receive` was asked to do.
struct StreamReceiveRequest {
    var url: String
    var output: String
    var arguments: Arguments
}

/// One URL scheme of `codecs stream send` / `codecs stream receive`: the
/// one table that says which scheme is handled where. A new transport is one
/// more row in ``StreamRoute/all`` (its handlers and options with it).
struct StreamRoute: Sendable {
    /// How the URL is written, for usage texts and errors.
    var form: String
    /// Whether `url` belongs to this route.
    var matches: @Sendable (String) -> Bool
    /// The options the route's handlers read (beyond `-i`/`-o`).
    var sendValueOptions: Set<String> = []
    var sendFlagOptions: Set<String> = []
    var receiveValueOptions: Set<String> = []
    var receiveFlagOptions: Set<String> = []
    /// nil: the route only receives (or only sends); the message says so.
    var send: (@Sendable (StreamSendRequest) -> Int32)?
    var receive: (@Sendable (StreamReceiveRequest) -> Int32)?

    /// Every route, in the order usage texts list them.
    static let all: [StreamRoute] =
        [
            // Sending RTP has options (and a help) of its own: `runStream` takes it first.
            StreamRoute(
                form: "rtp://HOST:PORT (receive: rtp://@:PORT or IN.sdp)",
                matches: { $0.hasPrefix("rtp://") || $0.lowercased().hasSuffix(".sdp") },
                receiveValueOptions: StreamReceive.rtpOptions, receiveFlagOptions: ["no-nack"],
                receive: StreamReceive.rtp),
            StreamRoute(
                form: "tcp://HOST:PORT (Annex-B; send with `codecs stream serve`)",
                matches: { $0.lowercased().hasPrefix("tcp://") },
                receiveValueOptions: StreamReceive.tcpOptions, receive: StreamReceive.tcp),
        ]
        + StreamTransport.allCases.map { transport in
            StreamRoute(
                form: transport.urlForm, matches: { StreamTransport(url: $0) == transport },
                sendValueOptions: TransportSend.valueOptions, sendFlagOptions: TransportSend.flagOptions,
                receiveValueOptions: StreamReceive.transportOptions, receiveFlagOptions: TransportOptions.flagOptions,
                send: TransportSend.run, receive: StreamReceive.transport)
        }
        + [
            StreamRoute(
                form: "whip://HOST:PORT/PATH (receive: a WHIP endpoint)", matches: { $0.hasPrefix("whip://") },
                receiveValueOptions: StreamReceive.whipOptions, receive: StreamReceive.whip)
        ]

    /// The route for `url`, or nil.
    static func route(for url: String) -> StreamRoute? { all.first { $0.matches(url) } }

    /// "supported: …" for errors.
    static var supportedForms: String {
        all.map(\.form).joined(separator: ", ")
    }

    /// The error for a URL no route takes.
    static func unknown(_ url: String) -> String {
        "\(url): unsupported URL; supported: \(supportedForms)"
    }
}
