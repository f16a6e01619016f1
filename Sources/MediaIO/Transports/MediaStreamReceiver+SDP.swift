// Reading the SDP file a MediaStreamReceiver is opened with, and its values in the RTP receiver's configuration.

import MediaCore
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

extension MediaStreamReceiver {
    /// The SDP file at `path`, parsed; its port checked.
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

    /// The SDP's codec, payload type, parameter sets, DON difference and RTX in `configuration`, and transport-cc
    /// feedback when it has the transport-wide sequence number `a=extmap` (the sender numbers its packets so that
    /// the feedback lets it follow the path).
    static func apply(_ sdp: RTPSessionDescription, to configuration: inout RTPReceiverConfiguration) {
        configuration.codec = sdp.codec
        configuration.payloadType = sdp.payloadType
        configuration.parameterSets = sdp.parameterSets
        configuration.maximumDONDifference = sdp.maximumDONDifference ?? 0
        configuration.retransmission = sdp.retransmission ?? configuration.retransmission
        if let id = sdp.transportSequenceNumberExtensionID {
            configuration.transportFeedback = .init(extensionID: id)
        }
    }
}
