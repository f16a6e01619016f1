import FormatConv
import MediaCore

// Sending: each access unit framed once (the configuration message first when
// the format is new) into every WebSocket client's queue, and the bound on all
// queues together.
extension WebStreamServer {
    /// Sends one access unit (in decode order) to every WebSocket client,
    /// with the configuration first when its format is new. `captureMicroseconds`
    /// (microseconds since 1970) defaults to now.
    public func send(_ sample: CompressedSample, captureMicroseconds: Int64? = nil) {
        if currentDescription != sample.formatDescription {
            currentDescription = sample.formatDescription
            if sample.duration.isValid, sample.duration.value > 0 {
                frameRate = Double(sample.duration.timescale) / Double(sample.duration.value)
            } else if let vui = sample.formatDescription.vuiFrameRate, vui.value > 0 {
                frameRate = Double(vui.timescale) / Double(vui.value)
            }
            let text = StreamWireFormat.configuration(
                for: sample.formatDescription, format: configuration.chunkFormat, frameRate: frameRate)
            let message = WebSocket.frame(opcode: .text, payload: Array(text.utf8))
            configurationMessage = message
            statisticsSoFar.codecString = sample.formatDescription.codecString(
                parameterSetsInBand: configuration.chunkFormat == .annexB)
            for connection in connections where connection.isWebSocket && !connection.isClosed {
                if !connection.queue.appendControl(message) { controlOverflow(connection) }
            }
        }
        let payload: [UInt8]
        switch configuration.chunkFormat {
        case .description: payload = sample.data
        case .annexB: payload = (try? annexBWriter.write(sample)) ?? []
        }
        let header = StreamWireFormat.header(
            isKeyframe: sample.isKeyframe, ptsMicroseconds: StreamWireFormat.microseconds(sample.pts),
            dtsMicroseconds: StreamWireFormat.microseconds(sample.dts),
            captureMicroseconds: captureMicroseconds ?? wallClockMicroseconds(), sequence: sequence)
        sequence &+= 1
        let message =
            WebSocket.frameHeader(opcode: .binary, payloadLength: header.count + payload.count) + header + payload
        statisticsSoFar.accessUnits += 1
        statisticsSoFar.bytes += payload.count
        if sample.isKeyframe { statisticsSoFar.keyframes += 1 }
        for connection in connections where connection.isWebSocket && !connection.isClosed {
            connection.queue.appendAccessUnit(message, isKeyframe: sample.isKeyframe)
            flush(connection)
        }
        enforceTotalBound()
        removeClosed()
    }

    private func enforceTotalBound() {
        var total = connections.reduce(0) { $0 + $1.queue.queuedBytes }
        while total > configuration.totalQueueBytes,
            let furthest = connections.filter({ $0.isWebSocket && !$0.queue.waitingForKeyframe })
                .max(by: { $0.queue.queuedBytes < $1.queue.queuedBytes })
        {
            let before = furthest.queue.queuedBytes
            furthest.queue.skipToNextKeyframe()
            report(
                .warning,
                "client \(furthest.id) (\(furthest.peer)) skips to the next keyframe: all queues hold \(total) bytes")
            total -= before - furthest.queue.queuedBytes
            if before == furthest.queue.queuedBytes { break }
        }
    }
}
