"""A scripted WHEP viewer on aiortc: POSTs a receive-only offer to the URL,
decodes the video track and prints JSON with one MD5 per decoded frame (the
I420 planes without padding, as `ffmpeg -f framemd5` hashes rawvideo), then
DELETEs the session.

usage: whep_aiortc.py URL FRAMES [TIMEOUT]
"""
import asyncio
import hashlib
import json
import sys

from aiortc import RTCPeerConnection, RTCSessionDescription
from peer_common import delete_session, post_offer


async def view(url, wanted, timeout):
    pc = RTCPeerConnection()
    pc.addTransceiver("video", direction="recvonly")
    loop = asyncio.get_running_loop()
    track_ready = loop.create_future()

    @pc.on("track")
    def on_track(track):
        if not track_ready.done():
            track_ready.set_result(track)

    await pc.setLocalDescription(await pc.createOffer())
    status, location, content_type, answer = post_offer(url, pc.localDescription.sdp)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    track = await asyncio.wait_for(track_ready, timeout)
    frames = []
    sizes = set()
    while len(frames) < wanted:
        try:
            frame = await asyncio.wait_for(track.recv(), timeout)
        except Exception:
            break
        planes = frame.to_ndarray(format="yuv420p")
        sizes.add((frame.width, frame.height))
        frames.append(hashlib.md5(planes.tobytes()).hexdigest())
    stats = await pc.getStats()
    inbound = [s for s in stats.values() if s.type == "inbound-rtp"]
    deleted = delete_session(url, location)
    await pc.close()
    return {
        "status": status, "location": location, "contentType": content_type, "answer": answer,
        "frames": frames, "sizes": sorted(sizes), "deleteStatus": deleted,
        "packetsReceived": inbound[0].packetsReceived if inbound else 0,
        "packetsLost": inbound[0].packetsLost if inbound else 0,
    }


def main():
    url, wanted = sys.argv[1], int(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 15
    print(json.dumps(asyncio.run(view(url, wanted, timeout))))


main()
