"""GStreamer's webrtcbin (1.22, through python3-gst-1.0) as an independent
WHIP peer on loopback only (libnice is given 127.0.0.1, or ::1 with
--host ::1, as its one local address), in one of two roles. Both stop by
themselves and print one JSON line on standard output.

Options (after the arguments):
    --host ADDRESS  127.0.0.1 (the default) or ::1: libnice's one local
                    address, the candidates kept, the endpoint's HTTP host.
    --turn URL      webrtcbin's turn-server (turn://USER:PASS@HOST:PORT).
    --relay         ice-transport-policy relay: only relayed candidates.
    --trickle       (publisher) POST the offer without candidates, before
                    gathering completes, then PATCH each candidate as an
                    application/trickle-ice-sdpfrag with If-Match: the
                    ETag of the 201 (the last with a=end-of-candidates).

publisher URL TOKEN SECONDS [FILE]
    Sends FILE (an H.264 Annex B stream: filesrc ! h264parse, paced at its
    frame rate) or, without FILE, videotestsrc encoded by openh264enc,
    through rtph264pay into a send-only webrtcbin. Creates the offer, waits
    until every candidate is gathered, POSTs it to URL with
    `Authorization: Bearer TOKEN`, applies the answer, holds the media back
    until DTLS is connected (so that the first frame is not lost), runs for
    SECONDS (or until FILE ends), DELETEs the session. Prints the POST and
    DELETE statuses, the frames sent, the states reached and the time from
    the POST to DTLS.

endpoint OUTPUT TOKEN TIMEOUT
    An HTTP server on the host address, port 0 (prints {"port": N} first) that
    takes POST /whip (401 without `Authorization: Bearer TOKEN`, 415
    without application/sdp), answers the offer from a receive-only
    webrtcbin (201, Location /whip/1), writes the video it receives
    (rtph264depay ! h264parse, byte-stream) to OUTPUT, answers
    DELETE /whip/1 (200) and then exits, or exits after TIMEOUT seconds.
    Prints the request log, the states reached, the bytes written, the
    candidates of the pair ICE used and the times from the POST to the
    answer and to the first depayloaded frame. The 201 carries an ETag;
    PATCH /whip/1 with an application/trickle-ice-sdpfrag (If-Match that
    ETag) hands each a=candidate line to webrtcbin (add-ice-candidate) and
    answers 204; webrtcbin cannot restart ICE as an answerer without a new
    offer, so a PATCH with If-Match: * (an ICE restart, RFC 9725) gets 501.
    The candidates trickled are printed.
"""
import ctypes
import json
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstSdp", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("Nice", "0.1")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC, Nice  # noqa: E402

Gst.init(None)
_g_object_ref = ctypes.CDLL("libgobject-2.0.so.0").g_object_ref
_g_object_ref.argtypes = [ctypes.c_void_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Peer:
    """A pipeline around one webrtcbin named `webrtc`, its states as they
    change, and the candidates it gathered."""

    def __init__(self, description, options):
        self.host = options.get("host", "127.0.0.1")
        self.pipeline = Gst.parse_launch(description)
        if not isinstance(self.pipeline, Gst.Pipeline):  # a lone element
            element, self.pipeline = self.pipeline, Gst.Pipeline.new()
            self.pipeline.add(element)
        self.webrtc = self.pipeline.get_by_name("webrtc")
        agent = self.webrtc.get_property("ice-agent")
        # webrtcbin 1.22 hands its ICE object out still floating: Python
        # would sink and then free it. Give webrtcbin its own reference.
        _g_object_ref(_PyCapsule_GetPointer(agent.__gpointer__, None))
        agent.set_property("ice-tcp", False)
        loopback = Nice.Address.new()
        loopback.set_from_string(self.host)
        agent.get_property("agent").add_local_address(loopback)
        if options.get("turn"):
            self.webrtc.set_property("turn-server", options["turn"])
        if options.get("relay"):
            self.webrtc.set_property("ice-transport-policy", GstWebRTC.WebRTCICETransportPolicy.RELAY)
        self.states = {"ice": [], "connection": []}
        self.gathered = threading.Event()
        self.connected = threading.Event()
        self.candidates = []
        self.errors = []
        self.webrtc.connect("notify::ice-gathering-state", self._on_gathering)
        self.webrtc.connect("notify::ice-connection-state", self._on_state, "ice", "ice-connection-state")
        self.webrtc.connect("notify::connection-state", self._on_state, "connection", "connection-state")
        self.webrtc.connect("on-ice-candidate", lambda _, index, line: self.candidates.append((index, line)))
        bus = self.pipeline.get_bus()
        bus.add_signal_watch()
        bus.connect("message::error", self._on_error)

    def _on_gathering(self, element, _):
        if element.get_property("ice-gathering-state") == GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            self.gathered.set()

    def _on_state(self, element, _, key, name):
        value = element.get_property(name).value_nick
        self.states[key].append(value)
        if key == "connection" and value == "connected":
            self.connected.set()

    def _on_error(self, _, message):
        error, _ = message.parse_error()
        self.errors.append(f"{message.src.get_name()}: {error.message}")

    def call(self, signal, *arguments):
        """Emits a webrtcbin action signal that takes a promise; waits for
        and returns its reply."""
        promise = Gst.Promise.new()
        self.webrtc.emit(signal, *arguments, promise)
        promise.wait()
        return promise.get_reply()

    def describe(self, kind, sdp_text):
        result, message = GstSdp.SDPMessage.new_from_text(sdp_text)
        if result != GstSdp.SDPResult.OK:
            raise ValueError(f"unparsable SDP {kind}")
        sdp_type = {"offer": GstWebRTC.WebRTCSDPType.OFFER, "answer": GstWebRTC.WebRTCSDPType.ANSWER}[kind]
        return GstWebRTC.WebRTCSessionDescription.new(sdp_type, message)

    def local_sdp(self, timeout=10):
        """The local description once every candidate is gathered, with only
        the candidates on the host address (any gathered one it lacks
        appended: there is one media section, bundled)."""
        self.gathered.wait(timeout)
        text = self.webrtc.get_property("local-description").sdp.as_text()
        lines = [line for line in text.split("\r\n") if line]
        kept = [line for line in lines if not line.startswith("a=candidate:") or self.keeps(line)]
        for line in self.candidate_lines():
            if line not in kept:
                kept.append(line)
        return "\r\n".join(kept) + "\r\n"

    def keeps(self, line):
        """Whether a candidate line is on the host address (a relayed one
        is on the TURN server's relay address, also loopback)."""
        return f" {self.host} " in line or " typ relay " in line

    def candidate_lines(self):
        """The gathered candidates kept, as a= lines, in gathering order."""
        lines = ["a=" + c if not c.startswith("a=") else c for _, c in list(self.candidates)]
        return [line for line in lines if self.keeps(line)]

    def pair_candidates(self):
        """The local and remote candidates of the pair webrtcbin's ICE
        uses, from its statistics, as "HOST:PORT TYPE" (webrtcbin 1.22
        swaps the two kinds' names, so they are not told apart here)."""
        reply = self.call("get-stats", None)
        found = []
        for index in range(reply.n_fields() if reply else 0):
            value = reply.get_value(reply.nth_field_name(index))
            if isinstance(value, Gst.Structure) and value.get_name() in ("local-candidate", "remote-candidate"):
                address = value.get_value("address")
                host = f"[{address}]" if ":" in address else address
                found.append(f"{host}:{value.get_value('port')} {value.get_value('candidate-type')}")
        return sorted(found)

    def stop(self):
        self.pipeline.set_state(Gst.State.NULL)


def start_main_loop():
    loop = GLib.MainLoop()
    threading.Thread(target=loop.run, daemon=True).start()
    return loop


def request(url, method, token, body=None, content_type="application/sdp", extra=()):
    """(status, headers, body) of one HTTP request; errors give their status."""
    headers = {"Authorization": "Bearer " + token}
    headers.update(extra)
    if body is not None:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(url, data=body.encode() if body else None, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode(errors="replace")


def sdp_value(sdp, name):
    """The value of the first a=NAME: line of `sdp`."""
    return next(line.split(":", 1)[1] for line in sdp.split("\r\n") if line.startswith(f"a={name}:"))


def trickle(peer, url, token, sdp, etag, result):
    """PATCHes each candidate the peer gathers (waiting up to 10 s for the
    gathering to complete) to the session at `url` with If-Match `etag`;
    the last fragment ends with a=end-of-candidates. Records the statuses."""
    peer.gathered.wait(10)
    lines = peer.candidate_lines()
    head = [f"a=ice-ufrag:{sdp_value(sdp, 'ice-ufrag')}", f"a=ice-pwd:{sdp_value(sdp, 'ice-pwd')}",
            "m=video 9 UDP/TLS/RTP/SAVPF 96", f"a=mid:{sdp_value(sdp, 'mid')}"]
    statuses = []
    for index, line in enumerate(lines):
        body = head + [line] + (["a=end-of-candidates"] if index == len(lines) - 1 else [])
        statuses.append(request(url, "PATCH", token, "\r\n".join(body) + "\r\n",
                                "application/trickle-ice-sdpfrag", {"If-Match": etag})[0])
    result.update(trickled=lines, patchStatuses=statuses)


def publisher(url, token, seconds, path=None, options=None):
    options = options or {}
    if path:
        source = f"filesrc location={path} ! h264parse"
    else:
        source = ("videotestsrc is-live=true ! video/x-raw,width=320,height=240,framerate=25/1 ! "
                  "openh264enc gop-size=25 ! h264parse")
    source += " ! video/x-h264,stream-format=byte-stream,alignment=au"
    peer = Peer(f"{source} ! identity name=hold sync=true ! "
                "rtph264pay config-interval=-1 aggregate-mode=zero-latency pt=96 ! "
                "application/x-rtp,media=video,encoding-name=H264,clock-rate=90000,payload=96 ! "
                "webrtcbin name=webrtc bundle-policy=max-bundle", options)
    # Nothing reaches webrtcbin before DTLS is up, so no frame is lost.
    hold = peer.pipeline.get_by_name("hold").get_static_pad("src")
    probe = hold.add_probe(Gst.PadProbeType.BLOCK_DOWNSTREAM, lambda *_: Gst.PadProbeReturn.OK)
    ended = threading.Event()
    sent = {"frames": 0}

    def count(_, info):
        if info.type & Gst.PadProbeType.BUFFER:
            sent["frames"] += 1
        elif info.get_event().type == Gst.EventType.EOS:
            ended.set()  # webrtcbin posts no EOS message of its own
        return Gst.PadProbeReturn.OK

    hold.add_probe(Gst.PadProbeType.BUFFER | Gst.PadProbeType.EVENT_DOWNSTREAM, count)
    loop = start_main_loop()
    peer.pipeline.set_state(Gst.State.PLAYING)
    transceiver = peer.webrtc.emit("get-transceiver", 0)
    transceiver.set_property("direction", GstWebRTC.WebRTCRTPTransceiverDirection.SENDONLY)
    # The media is held back, so webrtcbin learns the codec from here.
    transceiver.set_property("codec-preferences", Gst.Caps.from_string(
        "application/x-rtp,media=video,encoding-name=H264,clock-rate=90000,payload=96,"
        "packetization-mode=(string)1,profile-level-id=(string)42e01f,level-asymmetry-allowed=(string)1"))
    reply = peer.call("create-offer", None)
    if reply is None or not reply.has_field("offer"):
        sys.exit(f"webrtcbin made no offer: {reply}")
    offer = reply.get_value("offer")
    peer.call("set-local-description", offer)
    if options.get("trickle"):  # the offer as it is now, without a candidate
        text = peer.webrtc.get_property("local-description").sdp.as_text()
        sdp = "".join(line + "\r\n" for line in text.split("\r\n")
                      if line and not line.startswith(("a=candidate:", "a=end-of-candidates")))
    else:
        sdp = peer.local_sdp()
    posted = time.monotonic()
    status, headers, answer = request(url, "POST", token, sdp)
    result = {"status": status, "offer": sdp, "answer": answer}
    if status == 201:
        result["location"] = headers["Location"]
        peer.call("set-remote-description", peer.describe("answer", answer))
        if options.get("trickle"):
            result["etag"] = headers["ETag"]
            trickle(peer, urllib.parse.urljoin(url, headers["Location"]), token, sdp, headers["ETag"], result)
        if peer.connected.wait(10):
            result["dtlsConnectedMs"] = round((time.monotonic() - posted) * 1000, 1)
        hold.remove_probe(probe)
        ended.wait(seconds)
        time.sleep(0.5)  # the last packets
        result["deleteStatus"] = request(urllib.parse.urljoin(url, headers["Location"]), "DELETE", token)[0]
    result.update(framesSent=sent["frames"], states=peer.states, errors=peer.errors)
    peer.stop()
    loop.quit()
    print(json.dumps(result), flush=True)


def endpoint(output, token, timeout, options=None):
    options = options or {}
    state = {"peer": None, "log": [], "firstFrameMs": None, "bytes": 0, "trickled": []}
    etag = '"gst-whip-1"'
    done = threading.Event()

    def add_receiver(peer, pad, posted):
        if pad.get_direction() != Gst.PadDirection.SRC:
            return
        chain = Gst.parse_bin_from_description(
            "rtph264depay ! h264parse ! video/x-h264,stream-format=byte-stream,alignment=au ! "
            f"filesink name=file location={output}", True)
        peer.pipeline.add(chain)
        chain.sync_state_with_parent()
        pad.link(chain.get_static_pad("sink"))

        def on_buffer(_, info):
            if state["firstFrameMs"] is None:
                state["firstFrameMs"] = round((time.monotonic() - posted) * 1000, 1)
            state["bytes"] += info.get_buffer().get_size()
            return Gst.PadProbeReturn.OK

        chain.get_by_name("file").get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, on_buffer)

    class Handler(BaseHTTPRequestHandler):
        def reply(self, status, body=b"", headers=()):
            state["log"].append([self.command, self.path, status])
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
            if self.path != "/whip":
                return self.reply(404)
            if self.headers.get("Authorization") != "Bearer " + token:
                return self.reply(401, headers=[("WWW-Authenticate", "Bearer")])
            if self.headers.get("Content-Type") != "application/sdp":
                return self.reply(415)
            if state["peer"]:
                return self.reply(409)
            posted = time.monotonic()
            peer = Peer("webrtcbin name=webrtc bundle-policy=max-bundle", options)
            state["peer"] = peer
            peer.webrtc.connect("pad-added", lambda _, pad: add_receiver(peer, pad, posted))
            peer.pipeline.set_state(Gst.State.PLAYING)
            peer.call("set-remote-description", peer.describe("offer", body))
            answer = peer.call("create-answer", None)
            if answer is None or not answer.has_field("answer"):
                return self.reply(400, b"webrtcbin made no answer\n")
            peer.call("set-local-description", answer.get_value("answer"))
            sdp = peer.local_sdp().encode()
            state["answeredMs"] = round((time.monotonic() - posted) * 1000, 1)
            self.reply(201, sdp, [("Content-Type", "application/sdp"), ("Location", "/whip/1"), ("ETag", etag)])

        def do_PATCH(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
            if self.path != "/whip/1" or not state["peer"]:
                return self.reply(404)
            if self.headers.get("Authorization") != "Bearer " + token:
                return self.reply(401)
            if self.headers.get("Content-Type") != "application/trickle-ice-sdpfrag":
                return self.reply(415)
            if self.headers.get("If-Match") == "*":
                return self.reply(501, b"webrtcbin restarts ICE only with a new offer and answer\n")
            if self.headers.get("If-Match") not in (None, etag):
                return self.reply(412)
            for line in body.replace("\r\n", "\n").split("\n"):
                if line.startswith("a=candidate:"):
                    state["trickled"].append(line[2:])
                    state["peer"].webrtc.emit("add-ice-candidate", 0, line[2:])
            self.reply(204)

        def do_DELETE(self):
            if self.path != "/whip/1" or not state["peer"]:
                return self.reply(404)
            if self.headers.get("Authorization") != "Bearer " + token:
                return self.reply(401)
            self.reply(200)
            done.set()

        def log_message(self, *_):
            pass

    class Server(ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in options.get("host", "") else socket.AF_INET

    server = Server((options.get("host", "127.0.0.1"), 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    loop = start_main_loop()
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    if not done.wait(timeout):
        state["log"].append(["timeout"])
    server.shutdown()
    peer = state["peer"]
    result = {"log": state["log"], "answeredMs": state.get("answeredMs"), "firstFrameMs": state["firstFrameMs"],
              "bytes": state["bytes"], "trickled": state["trickled"]}
    if peer:
        result["pairCandidates"] = peer.pair_candidates()
        peer.stop()  # closes OUTPUT
        result.update(states=peer.states, errors=peer.errors)
    loop.quit()
    print(json.dumps(result), flush=True)


def main():
    arguments, options = [], {}
    words = iter(sys.argv[1:])
    for word in words:
        if word in ("--host", "--turn"):
            options[word[2:]] = next(words, None) or sys.exit(f"{word} needs a value\n{__doc__}")
        elif word in ("--relay", "--trickle"):
            options[word[2:]] = True
        elif word.startswith("--"):
            sys.exit(f"unknown option {word}\n{__doc__}")
        else:
            arguments.append(word)
    if options.get("host", "127.0.0.1") not in ("127.0.0.1", "::1"):
        sys.exit(f"--host must be 127.0.0.1 or ::1\n{__doc__}")
    mode = arguments[0] if arguments else ""
    if mode == "publisher" and len(arguments) in (4, 5):
        publisher(arguments[1], arguments[2], float(arguments[3]), arguments[4] if len(arguments) == 5 else None,
                  options)
    elif mode == "endpoint" and len(arguments) == 4 and not options.get("trickle"):
        endpoint(arguments[1], arguments[2], float(arguments[3]), options)
    else:
        sys.exit(__doc__)


main()
