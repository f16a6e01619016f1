// MediaStreamReceiver's helpers that hold no state: an SDP file read, RTP
// events mapped, a TCP connection opened.

import FormatConv
import MediaCore
import Sockets
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

extension MediaStreamReceiver {
    static func readSDP(_ path: String) throws(MediaError) -> RTPSessionDescription {
        var bytes: [UInt8] = []
        guard let file = fopen(path, "rb") else { throw .invalidArgument("cannot read the SDP file \(path)") }
        defer { fclose(file) }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = fread(&chunk, 1, chunk.count, file)
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .invalidData("\(path) is not a UTF-8 SDP file")
        }
        let sdp = try RTPSessionDescription(parsing: text)
        guard (1...65535).contains(sdp.port) else { throw .invalidData("\(path): port \(sdp.port) is not a UDP port") }
        return sdp
    }

    static func events(_ events: [RTPStreamReceiver.Event]) -> [Event] {
        events.map { event in
            switch event {
            case .sample(let sample): .sample(sample)
            case .loss(let loss): .loss(loss.description)
            }
        }
    }

    static func connect(_ endpoint: URLEndpoint, stop: @escaping () -> Bool) throws(MediaError) -> Int32 {
        try connectTCP(host: endpoint.host, port: endpoint.port, failure: .connectionFailed, stopRequested: stop)
    }
}
