import Foundation
import MediaCore
import WebRTC

// The options the WHEP and WHIP endpoints share (`serve --whep`, `receive
// whip://`): the bearer token and the ICE + DTLS deadline.
enum WHEPEndpointOptions {
    static let valueOptions: Set<String> = ["token", "token-file", "handshake-timeout", "ice-server"]

    static let help = """
          --token T                  require `Authorization: Bearer T` on POST, DELETE and PATCH (401 without);
                                     with it GET /whep/stats lists the sessions (without: counts only)
          --token-file F             the same, the token read from F (a trailing newline is dropped); unlike
                                     --token it stays out of the process list
          --handshake-timeout SECS   a session that has not completed ICE and DTLS this long after its offer
                                     is ended and its slot freed (default 5)
          --ice-server URL[,USER,CREDENTIAL]
                                     advertise a STUN/TURN server (stun:, turn:…; TURN with its username and
                                     password) in a Link: <URL>; rel="ice-server" field of each 201 and of
                                     OPTIONS (RFC 9725 4.6); may be given more than once
        """

    /// Prints the endpoint's ``CodecLog`` messages (those of `subsystem`) as
    /// `PREFIX: LINE` on standard error; other messages go on to the handler
    /// installed before.
    static func printLog(of subsystem: String, prefix: String) {
        let previous = CodecLog.handler
        CodecLog.handler = { message in
            if message.subsystem == subsystem {
                printError("\(prefix): \(message.message)")
            } else {
                previous?(message)
            }
        }
    }

    /// Sets the token and handshake deadline from `parsed`.
    static func apply(_ parsed: Arguments, to limits: inout SignallingLimits)
        throws(Arguments.UsageError)
    {
        limits.token = try token(parsed)
        do {
            limits.iceServers = try parsed.values("ice-server").map { (text) throws(MediaError) in
                try ICEServer(option: text)
            }
        } catch { throw Arguments.UsageError(description: "--ice-server: \(error.message)") }
        if let text = parsed.value("handshake-timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 600 else {
                throw Arguments.UsageError(
                    description: "--handshake-timeout \(text): expected seconds, more than 0 up to 600")
            }
            limits.handshakeTimeout = seconds
        }
    }

    /// The bearer token of `--token` or `--token-file` (endpoints and the
    /// WHIP client), or nil; the token itself never appears in an error.
    static func token(_ parsed: Arguments) throws(Arguments.UsageError) -> String? {
        let token: String?
        switch (parsed.value("token"), parsed.value("token-file")) {
        case (.some, .some):
            throw Arguments.UsageError(description: "--token and --token-file: give one of them")
        case (let value?, nil):
            guard !value.isEmpty else { throw Arguments.UsageError(description: "--token: the token is empty") }
            token = value
        case (nil, let path?):
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw Arguments.UsageError(
                    description: "--token-file \(path): cannot read it (\(error.localizedDescription))")
            }
            var text = String(decoding: data, as: UTF8.self)
            while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
            guard !text.isEmpty else {
                throw Arguments.UsageError(description: "--token-file \(path): the file holds no token")
            }
            token = text
        case (nil, nil):
            token = nil
        }
        if let token, !BearerToken.isValid(token.utf8) {
            throw Arguments.UsageError(
                description: "--token\(parsed.value("token") == nil ? "-file" : ""): a bearer token is one line of "
                    + "letters, digits and -._~+/ (then any '='), as RFC 6750 allows; the one given is not")
        }
        return token
    }
}

/// `host` as a URL writes it: an IPv6 address in brackets.
func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
