// What the tool adds to Sockets' TCPConnection: reading it as a ByteSource,
// and gathered writes of access units (MediaIO's GatheredWrite).
import MediaCore
import MediaIO
import Sockets

extension TCPConnection: ByteSource {}

extension TCPConnection {
    /// Writes every byte of the ranges `buffers` (`sendmsg`, looping over
    /// partial sends): an access unit's gather list without copying it into one buffer.
    func send(gathering buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>) throws(MediaError) {
        guard descriptor >= 0 else { throw MediaError(.system, "send to \(peer): connection closed") }
        try GatheredWrite.writeAll(buffers, to: descriptor, peer: peer)
    }

    /// Sends as much of the ranges `buffers`, from byte `offset` on, as the
    /// socket takes now without waiting; returns how many bytes went.
    func sendAvailable(gathering buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>, from offset: Int = 0)
        throws(MediaError) -> Int
    {
        guard descriptor >= 0 else { throw MediaError(.system, "send to \(peer): connection closed") }
        return try GatheredWrite.writeAvailable(buffers, from: offset, to: descriptor, peer: peer)
    }
}

/// Splits `tcp://HOST:PORT` into its host and port.
func parseTCPURL(_ text: String) -> (host: String, port: Int)? {
    guard text.hasPrefix("tcp://") else { return nil }
    var rest = Substring(text.dropFirst("tcp://".count))
    if let query = rest.firstIndex(where: { $0 == "?" || $0 == "/" }) { rest = rest[..<query] }
    guard let colon = rest.lastIndex(of: ":") else { return nil }
    var host = String(rest[..<colon])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty, let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else {
        return nil
    }
    return (host, port)
}
