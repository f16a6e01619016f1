// The tool's one CodecLog handler: what it prints of the library's messages.
import LiveStreaming
import MediaCore
import MediaIO
import WebStreaming

/// Installs the handler that prints the library's messages on standard
/// error: FFmpeg's lines as `[ffmpeg.NAME] TEXT` (as FFmpeg's own logger
/// did), and, for a command labelled `label`, the page server's, the TCP
/// broadcaster's and the reconnection messages as `LABEL: TEXT`. The sessions' messages are in the
/// commands' own reports.
func useCommandLog(_ label: String? = nil) {
    CodecLog.handler = { message in
        if message.subsystem.hasPrefix("ffmpeg") {
            writeError("[\(message.subsystem)] \(message.message)\n")
        } else if let label,
            message.subsystem == WebStreamServer.logSubsystem || message.subsystem == Reconnector.logSubsystem
                || message.subsystem == StreamBroadcaster.logSubsystem
        {
            printError("\(label): \(message.message)")
        }
    }
}
