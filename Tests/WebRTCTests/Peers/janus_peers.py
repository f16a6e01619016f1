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
      a WHIP endpoint (RFC 9725) on 127.0.0.1:PORT/whip for one publisher: its
      offer joins ROOM (join as publisher, then configure with the offer) and
      Janus's answer is the 201 reply; DELETE of the Location leaves the room.
      Ends after the DELETE or TIMEOUT seconds; prints JSON: the requests, the
      offer and the answer.
  janus_peers.py forward URL ROOM WHIP_URL TIMEOUT [READY_FILE]
      (READY_FILE as for subscribe) subscribes to the first publisher of ROOM and POSTs Janus's offer to
      WHIP_URL (a WHIP endpoint such as `codecs stream receive whip://`); its
      answer goes back to Janus with start. Ends when the publisher leaves or
      after TIMEOUT seconds; prints JSON: the offer, the answer, Janus's events.
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
        request = {"janus": "message", "body": body}
        if jsep:
            request["jsep"] = jsep
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

    async def event(self, timeout, wanted=None):
        """The next plugin event (with its jsep, if any), or one whose data
        has a key in `wanted`; a plugin error raises."""
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
            data = event.get("plugindata", {}).get("data")
            if data is None:
                continue
            if "error" in data:
                raise RuntimeError(f"Janus plugin error: {data}")
            if wanted is None or any(key in data for key in wanted):
                return data, event.get("jsep")

    def destroy(self):
        self.closed = True
        try:
            self.post(f"{self.url}/{self.session}", {"janus": "destroy"})
        except Exception:
            pass


def peer_connection():
    return RTCPeerConnection(RTCConfiguration(iceServers=[]))


async def receive(pc, offer, frames_wanted, timeout, answer_to):
    """Answers `offer` with aiortc, hands the answer to `answer_to`, and
    returns a coroutine factory that decodes up to `frames_wanted` frames."""
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
    await answer_to({"type": "answer", "sdp": pc.localDescription.sdp, "trickle": False})
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

    return decode


async def watch(url, mountpoint, frames_wanted, viewers, timeout, ready_file):
    sessions, pcs, decoders = [], [], []
    for _ in range(viewers):
        janus = JanusSession(url, "janus.plugin.streaming")
        sessions.append(janus)
        janus.message({"request": "watch", "id": mountpoint})
        _, offer = await janus.event(timeout, wanted=["result"])
        pc = peer_connection()
        pcs.append(pc)

        async def start(answer, janus=janus):
            janus.message({"request": "start"}, jsep=answer)

        decoders.append(await receive(pc, offer, frames_wanted, timeout, start))
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
    pc = peer_connection()

    async def start(answer):
        janus.message({"request": "start"}, jsep=answer)

    decode = await receive(pc, offer, frames_wanted, timeout, start)
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
    try:
        await asyncio.wait_for(done.wait(), timeout)
    except asyncio.TimeoutError:
        pass
    server.close()
    events = state["janus"].log if state["janus"] else []
    if state["janus"]:
        state["janus"].destroy()
    return {"requests": state["requests"], "offer": state["offer"], "answer": state["answer"], "events": events}


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
    try:
        await janus.event(timeout, wanted=["left", "unpublished", "streams"])
        ended = "the publisher left"
    except TimeoutError:
        ended = "timeout"
    except RuntimeError as error:
        ended = str(error)
    janus.destroy()
    return {"status": status, "offer": offer["sdp"], "answer": answer, "ended": ended, "events": janus.log}


def main():
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "watch":
        url, mountpoint, frames, viewers, timeout, ready = arguments
        result = watch(url, int(mountpoint), int(frames), int(viewers), float(timeout), ready)
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
    print(json.dumps(asyncio.run(result)))


main()
