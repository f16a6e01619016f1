// Gathered writes of access units on Sockets' TCPConnection (MediaIO's
// GatheredWrite), for the StreamBroadcaster.
import MediaCore
import MediaIO
import Sockets

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
