import WebStreaming

/// libFuzzer entry: the input as client frames, after one selector byte that
/// picks where to split it. The events are the same whether the bytes come
/// in one piece or two; nothing follows a failure or a close; a message is
/// never longer than the reader's bound; what is buffered stays within one
/// frame's worth of bytes beyond what was given.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let split = bytes.isEmpty ? 0 : Int(data[0]) % (bytes.count + 1)
    var whole = WebSocket.FrameReader(maximumMessageBytes: 4096)
    let events = whole.append(bytes)
    var pieces = WebSocket.FrameReader(maximumMessageBytes: 4096)
    let chunked = pieces.append(bytes[..<split]) + pieces.append(bytes[split...])
    guard events == chunked else { fatalError("chunking changed the events") }
    for (index, event) in events.enumerated() {
        switch event {
        case .failure, .close:
            guard index == events.count - 1 else { fatalError("an event after the end") }
        case .binary(let payload):
            guard payload.count <= 4096 else { fatalError("a message over the bound") }
        case .text(let text):
            guard text.utf8.count <= 4096 else { fatalError("a message over the bound") }
        case .ping(let payload), .pong(let payload):
            guard payload.count <= 125 else { fatalError("a control frame over 125 bytes") }
        }
    }
    guard whole.bufferedBytes <= bytes.count else { fatalError("buffered more than given") }
    return 0
}
