"""A scripted WHIP publisher on aiortc: plays a file through aiortc's
MediaPlayer (aiortc encodes it with libx264), POSTs a send-only offer to
the URL, streams until the file ends, then DELETEs the session. Prints JSON
with the HTTP status, the Location, the answer and the DELETE status.

usage: whip_aiortc.py URL FILE [TIMEOUT]
"""
import asyncio
import json
import sys

from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.contrib.media import MediaPlayer
from peer_common import delete_session, post_offer


async def publish(url, path, timeout):
    player = MediaPlayer(path)
    pc = RTCPeerConnection()
    pc.addTransceiver(player.video, direction="sendonly")
    ended = asyncio.Event()

    @player.video.on("ended")
    def on_ended():
        ended.set()

    await pc.setLocalDescription(await pc.createOffer())
    status, location, _, answer = post_offer(url, pc.localDescription.sdp)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    try:
        await asyncio.wait_for(ended.wait(), timeout)
    except asyncio.TimeoutError:
        pass
    await asyncio.sleep(1)  # the last packets and their NACKs
    deleted = delete_session(url, location)
    await pc.close()
    return {"status": status, "location": location, "answer": answer, "deleteStatus": deleted}


def main():
    url, path = sys.argv[1], sys.argv[2]
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 30
    print(json.dumps(asyncio.run(publish(url, path, timeout))))


main()
