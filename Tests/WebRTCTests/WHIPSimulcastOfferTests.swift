// The simulcast offer of WHIPClient read back by GStreamer's SDP parser (GstSdp, an independent one), and the
// layers an answer accepts or leaves out.
import Foundation
import MediaCore
import TestSupport
import Testing
import WebRTC

struct WHIPSimulcastOfferTests {
    static let format = VideoStreamFormat.h264(profileLevelID: [0x42, 0xC0, 0x1F])

    /// Whether /usr/bin/python3 has GStreamer's GstSdp through PyGObject.
    static let gstSdpAvailable: Bool = {
        let probe = try? runProcess(
            "/usr/bin/python3",
            ["-c", "import gi; gi.require_version('GstSdp', '1.0'); from gi.repository import GstSdp"])
        return probe?.status == 0
    }()

    /// The offer's video section as GstSdp parses it (`attributes_to_caps`): the rid, simulcast and extmap
    /// attributes become caps fields `rid-<rid>`, `a-simulcast` and `extmap-<id>`, `a=ssrc` lines `ssrc-<ssrc>-cname`.
    static func parsedByGStreamer(_ offer: String, in directory: TemporaryDirectory) throws -> [String: String] {
        let path = directory.path("offer.sdp")
        try Data(offer.utf8).write(to: URL(fileURLWithPath: path))
        let script = """
            import gi, json, sys
            gi.require_version('Gst', '1.0'); gi.require_version('GstSdp', '1.0')
            from gi.repository import Gst, GstSdp
            Gst.init(None)
            result, message = GstSdp.SDPMessage.new_from_text(open(sys.argv[1]).read())
            assert result == GstSdp.SDPResult.OK and message.medias_len() == 1
            media = message.get_media(0)
            caps = media.get_caps_from_media(96)
            assert media.attributes_to_caps(caps) == GstSdp.SDPResult.OK
            structure = caps.get_structure(0)
            fields = {}
            for index in range(structure.n_fields()):
                name = structure.nth_field_name(index)
                if name.startswith(('rid-', 'extmap-', 'a-simulcast', 'a-ssrc-group', 'ssrc-')):
                    fields[name] = str(structure.get_value(name))
            print(json.dumps(fields))
            """
        let output = try runChecked("/usr/bin/python3", ["-c", script, path])
        return try JSONDecoder().decode([String: String].self, from: output)
    }

    /// Three layers: GStreamer reads an `a=rid:<rid> send` per layer, `a=simulcast:send h;m;l`, the rid, repaired
    /// rid and mid extensions beside the transport-wide sequence number, and no `a=ssrc` (SSRCs are learned from the rid).
    @Test(.enabled(if: gstSdpAvailable)) func theSimulcastOfferParsesInGStreamer() throws {
        let directory = try TemporaryDirectory()
        let client = try WHIPClient(url: "http://127.0.0.1:9/whip", format: Self.format)
        client.simulcastLayers = ["h", "m", "l"]
        let fields = try Self.parsedByGStreamer(client.offer, in: directory)
        #expect(
            fields == [
                "rid-h": "send", "rid-m": "send", "rid-l": "send", "a-simulcast": "send h;m;l",
                "extmap-3": "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
                "extmap-4": "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id",
                "extmap-5": "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id",
                "extmap-6": "urn:ietf:params:rtp-hdrext:sdes:mid",
            ], "\(client.offer)")
    }

    /// One layer (the default) keeps the offer of one stream: no rid, no simulcast, its SSRC and RTX SSRC named.
    @Test(.enabled(if: gstSdpAvailable)) func oneLayerOffersOneStream() throws {
        let directory = try TemporaryDirectory()
        let client = try WHIPClient(url: "http://127.0.0.1:9/whip", format: Self.format)
        client.simulcastLayers = ["h"]
        let fields = try Self.parsedByGStreamer(client.offer, in: directory)
        #expect(fields.keys.filter { $0.hasPrefix("rid-") || $0 == "a-simulcast" }.isEmpty, "\(fields)")
        #expect(fields.keys.filter { $0.hasPrefix("extmap-") } == ["extmap-3"])
        #expect(fields.keys.filter { $0.hasPrefix("ssrc-") }.count == 2, "\(fields)")
        #expect(fields["a-ssrc-group"]?.hasPrefix("FID ") == true, "\(fields)")
    }

    /// An answer of `lines` (after a minimal valid video section) to a three-layer offer, then ICE that cannot
    /// finish (nothing listens): the layers the client accepted and refused.
    static func layers(answering lines: [String]) throws -> (accepted: [String], refused: [String]) {
        let client = try WHIPClient(url: "http://127.0.0.1:9/whip", format: format)
        client.simulcastLayers = ["h", "m", "l"]
        let answer =
            ([
                "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "m=video 9 UDP/TLS/RTP/SAVPF 96 97",
                "c=IN IP4 127.0.0.1", "a=mid:0", "a=recvonly", "a=rtcp-mux", "a=ice-ufrag:abcd",
                "a=ice-pwd:abcdefghijklmnopqrstuvwx",
                "a=fingerprint:sha-256 " + Array(repeating: "AB", count: 32).joined(separator: ":"),
                "a=setup:active", "a=rtpmap:96 H264/90000", "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96",
            ] + lines).joined(separator: "\r\n") + "\r\n"
        #expect(throws: MediaError.self) { try client.connect(timeoutSeconds: 0.2) { _ in answer } }
        return (client.acceptedLayers, client.refusedLayers)
    }

    /// A rid that is not 1 to 16 letters and digits, or one used twice, is refused before the offer leaves.
    @Test func invalidRidsAreRefusedBeforeTheOffer() throws {
        for layers in [["h", "m l"], ["h", String(repeating: "x", count: 17)], ["h", "h"], ["h", ""]] {
            let client = try WHIPClient(url: "http://127.0.0.1:9/whip", format: Self.format)
            client.simulcastLayers = layers
            var exchanged = false
            #expect {
                try client.connect(timeoutSeconds: 0.2) { _ in
                    exchanged = true
                    return ""
                }
            } throws: { ($0 as? MediaError)?.code == .invalidArgument }
            #expect(!exchanged, "\(layers)")
        }
    }

    /// An answer that leaves a layer out of `a=simulcast:recv` and pauses another (`~`) accepts the one left;
    /// an answer without `a=simulcast` takes the first layer alone; one without the rid extension as well.
    @Test func theAnswerSaysWhichLayersAreSent() throws {
        let rid = "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
        let all = try Self.layers(answering: [
            rid, "a=rid:h recv", "a=rid:m recv", "a=rid:l recv", "a=simulcast:recv h;m;l",
        ])
        #expect(all.accepted == ["h", "m", "l"] && all.refused.isEmpty)
        let some = try Self.layers(answering: [rid, "a=rid:m recv", "a=rid:l recv", "a=simulcast:recv ~m;l"])
        #expect(some.accepted == ["l"] && some.refused == ["h", "m"])
        let none = try Self.layers(answering: [rid])
        #expect(none.accepted == ["h"] && none.refused == ["m", "l"])
        let noExtension = try Self.layers(answering: ["a=simulcast:recv h;m;l"])
        #expect(noExtension.accepted == ["h"] && noExtension.refused == ["m", "l"])
    }
}
