"""aiortc as a WHIP endpoint: an HTTP/1.1 server on 127.0.0.1:PORT takes a
POST of an SDP offer at /whip (201 with aiortc's answer and Location
/whip/1) and DELETE of /whip/1 (200); every frame of the published video
track is decoded and its I420 planes hashed (MD5, as `ffmpeg -f framemd5`
hashes rawvideo). After the DELETE, or TIMEOUT seconds, prints JSON: the
hashes, the request log, and the offer and answer (for failure messages).

usage: whip_server_aiortc.py PORT [TIMEOUT]
"""
import asyncio
import hashlib
import json
import sys

from aiortc import RTCPeerConnection, RTCSessionDescription


async def main(port, timeout):
    frames, log, done = [], [], asyncio.Event()
    state = {"pc": None, "reader": None}

    async def consume(track):
        while True:
            try:
                frame = await track.recv()
            except Exception:
                return
            frames.append(hashlib.md5(frame.to_ndarray(format="yuv420p").tobytes()).hexdigest())

    async def handle(reader, writer):
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        lines = head.split("\r\n")
        method, path = lines[0].split(" ")[:2]
        fields = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
        body = await reader.readexactly(int(fields.get("content-length", "0")))
        status, extra, answer = 405, [], b""
        if method == "POST" and path == "/whip" and fields.get("content-type") == "application/sdp":
            pc = RTCPeerConnection()
            state["pc"] = pc

            @pc.on("track")
            def on_track(track):
                state["reader"] = asyncio.ensure_future(consume(track))

            await pc.setRemoteDescription(RTCSessionDescription(sdp=body.decode(), type="offer"))
            await pc.setLocalDescription(await pc.createAnswer())
            answer = pc.localDescription.sdp.encode()
            state["answer"] = pc.localDescription.sdp
            state["offer"] = body.decode()
            status, extra = 201, ["Location: /whip/1", "Content-Type: application/sdp"]
        elif method == "DELETE" and path == "/whip/1":
            status = 200
            done.set()
        log.append([method, path, status])
        reason = {200: "OK", 201: "Created", 405: "Method Not Allowed"}[status]
        response = [f"HTTP/1.1 {status} {reason}"] + extra + [f"Content-Length: {len(answer)}", "Connection: close", "", ""]
        writer.write("\r\n".join(response).encode() + answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    try:
        await asyncio.wait_for(done.wait(), timeout)
    except asyncio.TimeoutError:
        log.append(["timeout"])
    await asyncio.sleep(0.5)
    if state["pc"]:
        await state["pc"].close()
    server.close()
    print(json.dumps({"frames": frames, "log": log, "answer": state.get("answer"), "offer": state.get("offer")}))


asyncio.run(main(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 30))
