// What the documentation's snippets leave to the reader: the app's values and functions they name.
// Declared once here (never run), so that each snippet compiles as the reader sees it.
import DecodeSession
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload
import WebRTC

/// The app's socket, as the snippets use one (not MediaIO's `UDPSocket`).
struct AppSocket {
    func read() throws -> [UInt8]? { nil }
    func receive() throws -> [UInt8]? { nil }
    func receive(timeout: MediaTime?) -> ([UInt8], String)? { nil }
    func send(_ bytes: some Collection<UInt8>) {}
    func send<Address>(_ bytes: [UInt8], to address: Address) {}
}

/// The app's network, for the async snippets.
struct AppNetwork {
    func send(_ sample: CompressedSample) async throws {}
}

/// The app's log.
struct AppLogger: Sendable {
    func write(_ text: String) {}
}

/// A sink that shows the pictures a `StreamDecoder` decodes.
struct Display: DecodedFrameSink {
    mutating func assemblerDropped(_ nalUnitCount: Int, reason: String) {}
    mutating func receive(_ frames: [DecodedFrame]) {}
}

nonisolated(unsafe) let socket = AppSocket()
nonisolated(unsafe) let rtpSocket = AppSocket()
nonisolated(unsafe) let rtcpSocket = AppSocket()
nonisolated(unsafe) let publisher = try! StreamPublisher(url: "srt://127.0.0.1:9000")
nonisolated(unsafe) let network = AppNetwork()
let logger = AppLogger()
nonisolated(unsafe) var display = Display()

nonisolated(unsafe) var description = try! FormatDescription(h264ParameterSets: [sps, pps])
nonisolated(unsafe) let sps: [UInt8] = []
nonisolated(unsafe) let pps: [UInt8] = []
nonisolated(unsafe) let parameterSetNALs: [[UInt8]] = []
nonisolated(unsafe) let bytes: [UInt8] = []
nonisolated(unsafe) let stream: [UInt8] = []
nonisolated(unsafe) let chunks: [[UInt8]] = []
nonisolated(unsafe) let receivedAccessUnit: [UInt8] = []
nonisolated(unsafe) let packet: [UInt8] = []
nonisolated(unsafe) let packets: [[UInt8]] = []
nonisolated(unsafe) let datagram: [UInt8] = []
nonisolated(unsafe) let ntp: UInt64 = 0

nonisolated(unsafe) let frame = try! PixelBuffer(width: 16, height: 16, format: .i420)
nonisolated(unsafe) let frames: [PixelBuffer] = []
nonisolated(unsafe) let original = frame
nonisolated(unsafe) let decoded = frame
nonisolated(unsafe) let pts = MediaTime.zero
nonisolated(unsafe) let duration = MediaTime(value: 1, timescale: 30)
nonisolated(unsafe) let sample = CompressedSample(
    data: [], formatDescription: description, pts: .zero, dts: .zero, duration: duration, isKeyframe: true)
nonisolated(unsafe) let samples: [CompressedSample] = []
nonisolated(unsafe) let ladderFrames: [[CompressedSample]] = []
func janusConfigure(_ offer: String) throws -> String { "" }

nonisolated(unsafe) let encoder = try! CompressionSession(width: 16, height: 16, codec: .h264)
nonisolated(unsafe) let decoder = try! DecompressionSession(formatDescription: description)

/// Seconds on the app's clock.
nonisolated(unsafe) let now: Double = 0
/// Closes the app's connection.
func close() {}
/// Shows a picture.
func show(_ picture: PixelBuffer) {}
/// Shows a picture at its time.
func show(_ picture: PixelBuffer, at time: MediaTime) {}
/// Hands a sample to the app's transport.
func send(_ sample: CompressedSample) {}
/// Writes a received sample where the app keeps it.
func write(_ sample: CompressedSample) {}
/// Waits `seconds`.
func sleep(_ seconds: Double) {}
/// Logs a line.
func log(_ line: String) {}

nonisolated(unsafe) let descriptor: Int32 = -1
nonisolated(unsafe) let port = 5004
nonisolated(unsafe) let clip = SyntheticClip(width: 320, height: 240, frameCount: 60)
nonisolated(unsafe) let frameDuration = MediaTime(value: 1, timescale: 30)

// WebRTC: a peer's addresses, its offer's video section, the agreed keys.
nonisolated(unsafe) let local = UDPAddress(host: [127, 0, 0, 1], port: 5004)
nonisolated(unsafe) let peer = UDPAddress(host: [127, 0, 0, 1], port: 5006)
nonisolated(unsafe) let answerCandidates: [UDPAddress] = []
nonisolated(unsafe) let password = "a password of 22 chars"
nonisolated(unsafe) let body = ""
nonisolated(unsafe) let offer = try! SessionOffer(parsing: body).sections[0]
nonisolated(unsafe) let record: [UInt8] = []
nonisolated(unsafe) let keys = SRTPKeyingMaterial(exported: [UInt8](repeating: 0, count: 60))
/// Sends an ICE check.
func sendCheck(to address: UDPAddress) {}

/// The app's RTP sender, for the snippets that take feedback from one.
nonisolated(unsafe) let sender = try! RTPStreamSender(
    host: "127.0.0.1", port: 5004, configuration: .init(packetizer: .init(codec: .h264, ssrc: 1)))
