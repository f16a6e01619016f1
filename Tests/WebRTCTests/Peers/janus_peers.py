"""Janus 1.1 driven over its HTTP JSON API (stdlib urllib only), with aiortc
peers, for the Janus recipe tests. Loopback only: aioice is given 127.0.0.1
as its one host address and no STUN server.

usage:
  janus_peers.py watch URL MOUNTPOINT FRAMES VIEWERS TIMEOUT READY_FILE
      VIEWERS aiortc viewers watch streaming mountpoint MOUNTPOINT (watch, then
      start with aiortc's answer); READY_FILE is written once every viewer's
      ICE is connected; each decodes up to FRAMES frames (a gap of TIMEOUT
      seconds ends it) and hashes their I420 planes (MD5, as `ffmpeg -f
      framemd5` hashes rawvideo). Prints JSON: per viewer the hashes, the
      time of the first decoded frame (seconds since 1970) and aiortc's
      packet counts.
  janus_peers.py subscribe URL ROOM FRAMES TIMEOUT [READY_FILE]
      an aiortc subscriber to the first publisher of VideoRoom ROOM (READY_FILE
      is written once it has a Janus session and looks for one); prints JSON
      as watch does, for one viewer, and when it asked to join (joinedAt).
  janus_peers.py whip URL ROOM PORT TIMEOUT
      a WHIP endpoint (RFC 9725) on 127.0.0.1:PORT/whip for one publisher: join
      ROOM as publisher, configure with the offer, Janus's answer in the 201;
      DELETE leaves the room and ends it (else TIMEOUT seconds). Prints JSON:
      the requests, the offer and the answer.
  janus_peers.py forward URL ROOM WHIP_URL TIMEOUT [READY_FILE]
      subscribes to the first publisher of ROOM (READY_FILE as for subscribe)
      and POSTs Janus's offer to WHIP_URL (a WHIP endpoint such as `codecs
      stream receive whip://`); its answer goes back to Janus with start. Ends
      when the publisher leaves or Janus hangs up, or after TIMEOUT seconds;
      prints JSON: the offer, the answer, Janus's events.
  janus_peers.py chromium URL MOUNTPOINT FRAMES VIEWERS TIMEOUT READY_FILE
      as watch, with VIEWERS peer connections in one headless Chromium (loopback
      candidates allowed; only its 127.0.0.1 candidates go to Janus); prints
      JSON: per viewer getStats() inbound-rtp (framesDecoded, …) once the
      counts stop growing for 3 s, FRAMES are decoded, or 60 s pass.
URL is Janus's HTTP transport, e.g. http://127.0.0.1:8088/janus.
"""
import asyncio
import hashlib
import itertools
import json
import queue
import sys
import threading
import time
import urllib.request

import aioice.ice
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription

aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]
transactions = itertools.count(1)


class JanusSession:
    """One Janus session with one plugin handle; events come from a thread
    that long-polls the session (which also keeps it alive)."""

    def __init__(self, url, plugin):
        self.url = url
        self.events = queue.Queue()
        self.log = []
        self.closed = False
        self.session = self.post(url, {"janus": "create"})["data"]["id"]
        self.handle = self.post(f"{url}/{self.session}", {"janus": "attach", "plugin": plugin})["data"]["id"]
        threading.Thread(target=self.poll, daemon=True).start()

    @staticmethod
    def post(url, body):
        body = dict(body, transaction=str(next(transactions)))
        request = urllib.request.Request(
            url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            reply = json.loads(response.read())
        if reply.get("janus") == "error":
            raise RuntimeError(f"Janus refused {body}: {reply}")
        return reply

    def poll(self):
        while not self.closed:
            try:
                with urllib.request.urlopen(f"{self.url}/{self.session}?maxev=1", timeout=40) as response:
                    event = json.loads(response.read())
            except Exception:
                if self.closed:
                    return
                time.sleep(0.1)
                continue
            if event.get("janus") != "keepalive":
                self.log.append({k: v for k, v in event.items() if k != "jsep"})
                self.events.put(event)

    def message(self, body, jsep=None):
        """Sends `body` to the plugin; a synchronous request's data, or None."""
        request = dict({"janus": "message", "body": body}, **({"jsep": jsep} if jsep else {}))
        reply = self.post(f"{self.url}/{self.session}/{self.handle}", request)
        if reply.get("janus") == "success":
            data = reply["plugindata"]["data"]
            if "error" in data:
                raise RuntimeError(f"{body['request']}: {data}")
            return data
        return None

    async def webrtc_up(self, timeout):
        """Waits for Janus's webrtcup: its DTLS handshake with the peer is done."""
        deadline = time.monotonic() + timeout
        while not any(event.get("janus") == "webrtcup" for event in self.log):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no webrtcup in {timeout} s; events: {self.log}")
            await asyncio.sleep(0.02)

    async def event(self, timeout, wanted):
        """The next plugin event (and its jsep) whose data has a key in
        `wanted`; a plugin error raises."""
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no Janus event {wanted} in {timeout} s; events: {self.log}")
            try:
                event = await loop.run_in_executor(None, self.events.get, True, left)
            except queue.Empty:
                continue
            data = event.get("plugindata", {}).get("data", {})
            if "error" in data:
                raise RuntimeError(f"Janus plugin error: {data}")
            if any(key in data for key in wanted):
                return data, event.get("jsep")

    def destroy(self):
        self.closed = True
        try:
            self.post(f"{self.url}/{self.session}", {"janus": "destroy"})
        except Exception:  # an ended session is what is asked for
            pass


async def receive(janus, offer, frames_wanted, timeout):
    """Answers Janus's `offer` with aiortc (start with the answer); returns
    the peer connection and a coroutine factory that decodes up to
    `frames_wanted` frames."""
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    loop = asyncio.get_running_loop()
    track_ready = loop.create_future()
    connected = loop.create_future()

    @pc.on("track")
    def on_track(track):
        if track.kind == "video" and not track_ready.done():
            track_ready.set_result(track)

    @pc.on("connectionstatechange")
    def on_state():
        if pc.connectionState == "connected" and not connected.done():
            connected.set_result(True)

    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type="offer"))
    await pc.setLocalDescription(await pc.createAnswer())
    janus.message({"request": "start"}, jsep={"type": "answer", "sdp": pc.localDescription.sdp, "trickle": False})
    await asyncio.wait_for(connected, timeout)
    track = await asyncio.wait_for(track_ready, timeout)

    async def decode():
        hashes, first = [], None
        while len(hashes) < frames_wanted:
            try:
                frame = await asyncio.wait_for(track.recv(), timeout)
            except Exception:
                break
            if first is None:
                first = time.time()
            hashes.append(hashlib.md5(frame.to_ndarray(format="yuv420p").tobytes()).hexdigest())
        stats = await pc.getStats()
        inbound = [s for s in stats.values() if s.type == "inbound-rtp"]
        return {
            "frames": hashes, "firstFrameAt": first,
            "packetsReceived": inbound[0].packetsReceived if inbound else 0,
            "packetsLost": inbound[0].packetsLost if inbound else 0,
        }

    return pc, decode


async def watch(url, mountpoint, frames_wanted, viewers, timeout, ready_file):
    sessions, pcs, decoders = [], [], []
    for _ in range(viewers):
        janus = JanusSession(url, "janus.plugin.streaming")
        sessions.append(janus)
        janus.message({"request": "watch", "id": mountpoint})
        _, offer = await janus.event(timeout, wanted=["result"])
        pc, decode = await receive(janus, offer, frames_wanted, timeout)
        pcs.append(pc)
        decoders.append(decode)
        await janus.webrtc_up(timeout)
    with open(ready_file, "w") as ready:
        ready.write("ready\n")
    results = await asyncio.gather(*(decode() for decode in decoders))
    for pc, janus in zip(pcs, sessions):
        await pc.close()
        janus.destroy()
    return {"viewers": results, "offer": offer["sdp"]}


async def first_publisher(janus, room, timeout, ready_file):
    if ready_file:
        with open(ready_file, "w") as ready:
            ready.write("ready\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        participants = janus.message({"request": "listparticipants", "room": room})["participants"]
        publishers = [p["id"] for p in participants if p.get("publisher")]
        if publishers:
            return publishers[0]
        await asyncio.sleep(0.05)
    raise TimeoutError(f"no publisher in room {room} within {timeout} s")


async def subscribe(url, room, frames_wanted, timeout, ready_file):
    janus = JanusSession(url, "janus.plugin.videoroom")
    feed = await first_publisher(janus, room, 30, ready_file)
    joined = time.time()
    janus.message({"request": "join", "ptype": "subscriber", "room": room, "streams": [{"feed": feed}]})
    _, offer = await janus.event(timeout, wanted=["videoroom"])
    pc, decode = await receive(janus, offer, frames_wanted, timeout)
    result = await decode()
    await pc.close()
    janus.destroy()
    return {"viewers": [result], "joinedAt": joined, "offer": offer["sdp"], "events": janus.log}


async def whip(url, room, port, timeout):
    state = {"janus": None, "offer": None, "answer": None, "requests": []}
    done = asyncio.Event()

    async def handle(reader, writer):
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        method, path = head.split(" ")[:2]
        fields = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip()
                  for line in head.split("\r\n")[1:] if ":" in line}
        body = await reader.readexactly(int(fields.get("content-length", "0")))
        state["requests"].append(f"{method} {path}")
        if method == "POST" and path == "/whip" and state["janus"] is None:
            janus = JanusSession(url, "janus.plugin.videoroom")
            state["janus"] = janus
            janus.message({"request": "join", "ptype": "publisher", "room": room, "display": "codecs"})
            await janus.event(timeout, wanted=["id"])
            state["offer"] = body.decode()
            janus.message({"request": "configure", "video": True, "audio": False},
                          jsep={"type": "offer", "sdp": state["offer"], "trickle": False})
            _, answer = await janus.event(timeout, wanted=["configured"])
            state["answer"] = answer["sdp"]
            reply = (f"HTTP/1.1 201 Created\r\nContent-Type: application/sdp\r\nLocation: /whip/1\r\n"
                     f"Content-Length: {len(answer['sdp'].encode())}\r\nConnection: close\r\n\r\n{answer['sdp']}")
        elif method == "DELETE" and path == "/whip/1" and state["janus"] is not None:
            state["janus"].message({"request": "leave"})
            reply = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            done.set()
        else:
            reply = "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        writer.write(reply.encode())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    await asyncio.wait([asyncio.ensure_future(done.wait())], timeout=timeout)
    server.close()
    janus = state.pop("janus")
    if janus:
        janus.destroy()
    return dict(state, events=janus.log if janus else [])


async def forward(url, room, whip_url, timeout, ready_file):
    janus = JanusSession(url, "janus.plugin.videoroom")
    feed = await first_publisher(janus, room, 30, ready_file)
    janus.message({"request": "join", "ptype": "subscriber", "room": room, "streams": [{"feed": feed}]})
    _, offer = await janus.event(timeout, wanted=["videoroom"])
    request = urllib.request.Request(
        whip_url, data=offer["sdp"].encode(), method="POST", headers={"Content-Type": "application/sdp"})
    with urllib.request.urlopen(request, timeout=10) as response:
        status, answer = response.status, response.read().decode()
    janus.message({"request": "start"}, jsep={"type": "answer", "sdp": answer, "trickle": False})
    deadline, ended = time.monotonic() + timeout, "timeout"
    while time.monotonic() < deadline and ended == "timeout":
        for event in list(janus.log):
            data = event.get("plugindata", {}).get("data", {})
            if event.get("janus") == "hangup" or "left" in data or "unpublished" in data:
                ended = "the publisher left"
        await asyncio.sleep(0.05)
    janus.destroy()
    return {"status": status, "offer": offer["sdp"], "answer": answer, "ended": ended, "events": janus.log}


ANSWER = """
const [offer, done] = [arguments[0], arguments[arguments.length - 1]];
const pc = new RTCPeerConnection({iceServers: []});
(window.viewers = window.viewers || []).push(pc);
pc.ontrack = (event) => document.body.appendChild(
  Object.assign(document.createElement("video"),
                {muted: true, autoplay: true, srcObject: new MediaStream([event.track])}));
pc.setRemoteDescription({type: "offer", sdp: offer})
  .then(() => pc.createAnswer()).then((answer) => pc.setLocalDescription(answer))
  .then(() => new Promise((resolve) => {
    if (pc.iceGatheringState === "complete") return resolve();
    pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === "complete") resolve(); };
  }))
  .then(() => done(pc.localDescription.sdp), (error) => done("error: " + error));
"""
STATES = "return window.viewers.map((pc) => pc.connectionState);"
STATS = """
const done = arguments[arguments.length - 1];
Promise.all(window.viewers.map((pc) => pc.getStats())).then((reports) => done(reports.map((report) => {
  let inbound = {};
  report.forEach((entry) => { if (entry.type === "inbound-rtp" && entry.kind === "video") inbound = entry; });
  return inbound;
})), (error) => done("error: " + error));
"""


def loopback_only(sdp):
    """`sdp` without the candidates of other addresses than 127.0.0.1."""
    lines = [line for line in sdp.split("\r\n")
             if not line.startswith("a=candidate:") or line.split(" ")[4] == "127.0.0.1"]
    return "\r\n".join(lines)


def chromium(url, mountpoint, frames_wanted, viewers, timeout, ready_file):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--allow-loopback-in-peer-connection", "--autoplay-policy=no-user-gesture-required",
                     "--disable-features=WebRtcHideLocalIpsWithMdns"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(30)
    sessions = []
    try:
        driver.get("about:blank")
        for _ in range(viewers):
            janus = JanusSession(url, "janus.plugin.streaming")
            sessions.append(janus)
            janus.message({"request": "watch", "id": mountpoint})
            _, offer = asyncio.run(janus.event(timeout, wanted=["result"]))
            answer = driver.execute_async_script(ANSWER, offer["sdp"])
            if answer.startswith("error"):
                raise RuntimeError(answer)
            janus.message({"request": "start"}, jsep={"type": "answer", "sdp": loopback_only(answer),
                                                      "trickle": False})
        deadline = time.time() + timeout
        while driver.execute_script(STATES) != ["connected"] * viewers:
            if time.time() > deadline:
                raise TimeoutError(f"Chromium's peer connections: {driver.execute_script(STATES)}")
            time.sleep(0.05)
        for janus in sessions:
            asyncio.run(janus.webrtc_up(timeout))
        with open(ready_file, "w") as ready:
            ready.write("ready\n")
        last, steady_since, stats = None, time.time(), []
        deadline = time.time() + 60
        while time.time() < deadline:
            stats = driver.execute_async_script(STATS)
            decoded = [entry.get("framesDecoded", 0) for entry in stats]
            if decoded != last:
                last, steady_since = decoded, time.time()
            elif min(decoded) >= frames_wanted or (max(decoded) > 0 and time.time() - steady_since > 3):
                break
            time.sleep(0.25)
        return {"viewers": stats}
    finally:
        driver.quit()
        for janus in sessions:
            janus.destroy()


def main():
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "watch":
        url, mountpoint, frames, viewers, timeout, ready = arguments
        result = watch(url, int(mountpoint), int(frames), int(viewers), float(timeout), ready)
    elif command == "chromium":
        url, mountpoint, frames, viewers, timeout, ready = arguments
        result = chromium(url, int(mountpoint), int(frames), int(viewers), float(timeout), ready)
    elif command == "subscribe":
        url, room, frames, timeout = arguments[:4]
        result = subscribe(url, int(room), int(frames), float(timeout), (arguments[4:] or [None])[0])
    elif command == "whip":
        url, room, port, timeout = arguments
        result = whip(url, int(room), int(port), float(timeout))
    elif command == "forward":
        url, room, whip_url, timeout = arguments[:4]
        result = forward(url, int(room), whip_url, float(timeout), (arguments[4:] or [None])[0])
    else:
        sys.exit(__doc__)
    print(json.dumps(asyncio.run(result) if asyncio.iscoroutine(result) else result))


main()
