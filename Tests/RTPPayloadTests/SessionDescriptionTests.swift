import FormatConv
import Foundation
import MediaCore
import RTPPayload
import TestSupport
import Testing

/// SDPs that FFmpeg wrote (`ffmpeg … -f rtp -sdp_file`, sending to a
/// loopback port nobody listens on), read by our parser, and ours held
/// against them field by field.
struct SessionDescriptionTests {
    /// Runs ffmpeg encoding a short clip to RTP on 127.0.0.1 and returns the
    /// SDP it wrote.
    static func ffmpegSDP(_ encoder: [String], port: Int, extra: [String] = [], in directory: TemporaryDirectory) throws
        -> String
    {
        let path = directory.path("ffmpeg-\(port).sdp")
        try ffmpegTestPattern(
            size: "320x240", rate: 25, frames: 5,
            arguments: ["-pix_fmt", "yuv420p"] + encoder + ["-flags:v", "+global_header"] + extra + [
                "-f", "rtp", "-sdp_file", path,
            ], to: "rtp://127.0.0.1:\(port)")
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    static func line(_ prefix: String, in text: String) -> String? {
        text.split(whereSeparator: \.isNewline).map(String.init).first { $0.hasPrefix(prefix) }
    }

    @Test func h264SDPFromFFmpeg() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let text = try Self.ffmpegSDP(["-c:v", "libx264"], port: 47_010, in: directory)
        let sdp = try RTPSessionDescription(parsing: text)
        #expect(sdp.codec == .h264 && sdp.payloadType == 96 && sdp.port == 47_010 && sdp.clockRate == 90_000)
        #expect(sdp.connectionAddress == "127.0.0.1" && sdp.addressType == "IP4")
        #expect(sdp.packetizationMode == .nonInterleaved)
        #expect(sdp.parameterSets.count == 2)
        let description = try FormatDescription(h264ParameterSets: sdp.parameterSets)
        #expect(description.width == 320 && description.height == 240)
        // profile-level-id is the SPS's profile_idc, constraint byte, level_idc.
        let sps = sdp.parameterSets[0]
        #expect(sdp.profileLevelID == UInt32(sps[1]) << 16 | UInt32(sps[2]) << 8 | UInt32(sps[3]))
        #expect(sdp.otherFormatParameters.isEmpty)

        // Ours from the same parameter sets: the same rtpmap and fmtp lines.
        let ours = RTPSessionDescription(formatDescription: description, address: "127.0.0.1", port: 47_010)
        #expect(Self.line("a=rtpmap", in: ours.text) == Self.line("a=rtpmap", in: text))
        #expect(Self.line("a=fmtp", in: ours.text) == Self.line("a=fmtp", in: text))
        #expect(Self.line("m=", in: ours.text) == Self.line("m=", in: text))
        #expect(Self.line("c=", in: ours.text) == Self.line("c=", in: text))
        #expect(try RTPSessionDescription(parsing: ours.text) == ours)
    }

    @Test func h264ModeZeroSDPFromFFmpeg() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let text = try Self.ffmpegSDP(
            ["-c:v", "libx264"], port: 47_012, extra: ["-rtpflags", "h264_mode0", "-payload_type", "100"],
            in: directory)
        let sdp = try RTPSessionDescription(parsing: text)
        #expect(sdp.payloadType == 100)
        #expect(sdp.packetizationMode == .singleNALUnit)
        let ours = RTPSessionDescription(
            formatDescription: try FormatDescription(h264ParameterSets: sdp.parameterSets), address: "127.0.0.1",
            port: 47_012, payloadType: 100, packetizationMode: .singleNALUnit)
        #expect(Self.line("a=fmtp", in: ours.text) == Self.line("a=fmtp", in: text))
    }

    @Test func hevcSDPFromFFmpeg() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let text = try Self.ffmpegSDP(
            ["-c:v", "libx265", "-x265-params", "log-level=error"], port: 47_014, in: directory)
        let sdp = try RTPSessionDescription(parsing: text)
        #expect(sdp.codec == .hevc && sdp.port == 47_014)
        #expect(sdp.parameterSets.map { ($0[0] >> 1) & 0x3F } == [32, 33, 34])
        let description = try FormatDescription(hevcParameterSets: sdp.parameterSets)
        #expect(description.width == 320 && description.height == 240)
        let ours = RTPSessionDescription(formatDescription: description, address: "127.0.0.1", port: 47_014)
        #expect(Self.line("a=rtpmap", in: ours.text) == Self.line("a=rtpmap", in: text))
        #expect(Self.line("a=fmtp", in: ours.text) == Self.line("a=fmtp", in: text))
        #expect(try RTPSessionDescription(parsing: ours.text) == ours)
        // sprop-max-don-diff round-trips.
        let withDON = RTPSessionDescription(
            formatDescription: description, address: "::1", port: 5000, maximumDONDifference: 3)
        let parsed = try RTPSessionDescription(parsing: withDON.text)
        #expect(parsed.maximumDONDifference == 3 && parsed.addressType == "IP6" && parsed.connectionAddress == "::1")
    }

    @Test func lenientParsing() throws {
        // Media-level c= overrides the session's; an audio section first;
        // unknown fmtp parameters kept; "HEVC" as encoding name; \n endings.
        let text = """
            v=0
            o=- 1 1 IN IP4 127.0.0.1
            s=Test
            c=IN IP4 127.0.0.2/127
            t=0 0
            m=audio 4000 RTP/AVP 0
            a=rtpmap:0 PCMU/8000
            m=video 4002/2 RTP/AVP 97 98
            c=IN IP4 127.0.0.3
            a=rtpmap:97 VP8/90000
            a=rtpmap:98 HEVC/90000
            a=fmtp:98 sprop-max-don-diff=0;tx-mode=SRST ;  sprop-pps=RAHBcrRiQA==
            """
        let sdp = try RTPSessionDescription(parsing: text)
        #expect(sdp.codec == .hevc && sdp.payloadType == 98 && sdp.port == 4002)
        #expect(sdp.connectionAddress == "127.0.0.3" && sdp.sessionName == "Test")
        #expect(sdp.maximumDONDifference == 0)
        #expect(sdp.otherFormatParameters == [.init(name: "tx-mode", value: "SRST")])
        #expect(sdp.parameterSets == [[0x44, 0x01, 0xC1, 0x72, 0xB4, 0x62, 0x40]])
        #expect(throws: MediaError.self) { try RTPSessionDescription(parsing: "v=0\nm=video 1 RTP/AVP 96\n") }
        // Found by fuzzing: a bare "=" in fmtp, a port of "/".
        let bare = try RTPSessionDescription(
            parsing: "c=IN IP4 127.0.0.1\nm=video 9 RTP/AVP 96\na=rtpmap:96 H264/90000\na=fmtp:96 =;= ;x=\n")
        #expect(bare.otherFormatParameters == [.init(name: "x", value: "")])
        #expect(throws: MediaError.self) { try RTPSessionDescription(parsing: "m=video / RTP/AVP 96\n") }
        #expect(throws: MediaError.self) {
            try RTPSessionDescription(
                parsing:
                    "c=IN IP4 127.0.0.1\nm=video 1 RTP/AVP 96\na=rtpmap:96 H264/90000\na=fmtp:96 sprop-parameter-sets=!!"
            )
        }
    }
}

/// SDP a hostile or broken peer writes is refused with the line and the
/// reason, never taken as it is: a payload type outside RTP's seven bits, a
/// video clock rate other than 90 kHz, a c= address that is neither an
/// address nor a host name (it used to bind every interface), and a
/// sprop SPS that does not parse (it used to be dropped, then reported as
/// "missing parameter sets").
@Test(arguments: [
    ("m=video 5004 RTP/AVP 200\na=rtpmap:200 H264/90000", "payload type 200 is not an RTP payload type"),
    ("m=video 5004 RTP/AVP 96\na=rtpmap:96 H264/0", "clock rate 0 for H264"),
    ("m=video 5004 RTP/AVP 96\na=rtpmap:96 H265/8000", "clock rate 8000 for H265"),
    ("c=IN IP4 not..an//address\nm=video 5004 RTP/AVP 96\na=rtpmap:96 H264/90000", "is not an IPv4 address"),
    ("c=IN IP4 300.1.2.3\nm=video 5004 RTP/AVP 96\na=rtpmap:96 H264/90000", "is not an IPv4 address"),
    ("c=IN IP6 fe80::zz\nm=video 5004 RTP/AVP 96\na=rtpmap:96 H264/90000", "is not an IPv6 address"),
    (
        "m=video 5004 RTP/AVP 96\na=rtpmap:96 H264/90000\na=fmtp:96 packetization-mode=1; "
            + "sprop-parameter-sets=Z/8=,aM4G4g==",
        "sprop-parameter-sets: parameter set 1 is not a valid SPS"
    ),
])
func hostileSDPIsRefusedWithItsReason(_ body: String, _ reason: String) throws {
    let text = "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\n" + (body.hasPrefix("c=") ? "" : "c=IN IP4 127.0.0.1\n") + body
    #expect {
        _ = try RTPSessionDescription(parsing: text)
    } throws: { error in
        ((error as? MediaError)?.message ?? "").contains(reason)
    }
}

/// Addresses and names that SDP's c= line may carry are still taken.
@Test func connectionAddressesAndNamesAreTaken() throws {
    for (type, address) in [("IP4", "127.0.0.1"), ("IP4", "media.example.net"), ("IP6", "::1"), ("IP6", "fe80::1")] {
        let text = "v=0\ns=x\nc=IN \(type) \(address)\nm=video 5004 RTP/AVP 96\na=rtpmap:96 H264/90000\n"
        #expect(try RTPSessionDescription(parsing: text).connectionAddress == address)
    }
}

/// RFC 4588 RTX and RFC 3605 `a=rtcp:` as a WebRTC-style offer writes them
/// (the RTX type listed after the media type, an FID group naming both
/// SSRCs): read into `retransmission` and `rtcpPort`/`rtcpAddress`, written
/// back with the NACK feedback lines, and read again the same. An RTX type
/// for another payload type is not this stream's; one without `apt` is an
/// error.
@Test func retransmissionAndRTCPPortAreRead() throws {
    let text = """
        v=0\r
        o=- 1 1 IN IP4 127.0.0.1\r
        s=-\r
        c=IN IP4 127.0.0.1\r
        t=0 0\r
        m=video 5004 RTP/AVPF 96 97 98 99\r
        a=rtcp:5010 IN IP4 127.0.0.2\r
        a=rtpmap:96 H264/90000\r
        a=fmtp:96 packetization-mode=1\r
        a=rtcp-fb:96 nack\r
        a=rtpmap:97 rtx/90000\r
        a=fmtp:97 apt=96;rtx-time=3000\r
        a=rtpmap:98 VP8/90000\r
        a=rtpmap:99 rtx/90000\r
        a=fmtp:99 apt=98\r
        a=ssrc-group:FID 11111 22222\r

        """
    let sdp = try RTPSessionDescription(parsing: text)
    #expect(sdp.payloadType == 96)
    #expect(sdp.retransmission == RTPRetransmission(payloadType: 97, ssrc: 22222))
    #expect(sdp.rtcpPort == 5010 && sdp.rtcpAddress == "127.0.0.2")
    let written = sdp.text
    #expect(written.contains("m=video 5004 RTP/AVPF 96 97\r\n"))
    #expect(written.contains("a=rtcp-fb:96 nack\r\n") && written.contains("a=rtcp-fb:96 nack pli\r\n"))
    #expect(written.contains("a=rtpmap:97 rtx/90000\r\na=fmtp:97 apt=96\r\n"))
    #expect(written.contains("a=rtcp:5010 IN IP4 127.0.0.2\r\n"))
    let again = try RTPSessionDescription(parsing: written)
    #expect(again.retransmission?.payloadType == 97 && again.rtcpPort == 5010 && again.rtcpAddress == "127.0.0.2")
    let plain = try RTPSessionDescription(
        parsing: "v=0\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVP 96\na=rtpmap:96 H264/90000\na=rtcp:5007\n")
    #expect(plain.retransmission == nil && plain.rtcpPort == 5007 && plain.rtcpAddress == nil)
    #expect(!plain.text.contains("rtx") && !plain.text.contains("AVPF"))
    #expect(throws: MediaError.self) {
        try RTPSessionDescription(
            parsing: "v=0\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVPF 96 97\na=rtpmap:96 H264/90000\n"
                + "a=rtpmap:97 rtx/90000\n")
    }
    #expect(throws: MediaError.self) {
        try RTPSessionDescription(
            parsing: "v=0\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVP 96\na=rtpmap:96 H264/90000\na=rtcp:70000\n")
    }
}
