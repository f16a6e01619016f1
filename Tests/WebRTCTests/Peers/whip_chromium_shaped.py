"""Headless Chromium as a WHIP publisher whose send rate is watched: on a
page of the endpoint's own origin, a 640x480 canvas of random 16x16 blocks
(new every frame, so the encoder can use every bit it is given) is captured
at 30 fps and sent with H.264 preferred (whip_chromium.py's publisher).
When the peer connection is connected, CONNECTED_PATH is written; then,
for SECONDS, getStats() is read every 0.5 s: the outbound-rtp's bytesSent
+ headerBytesSent and frame counts, and the selected candidate pair's
availableOutgoingBitrate (its estimate from our transport-cc feedback),
each with the seconds since the connection. Then the track stops and the
session is DELETEd. Prints JSON: the start, the samples and the final
outbound-rtp.

usage: whip_chromium_shaped.py PAGE_URL WHIP_PATH SECONDS CONNECTED_PATH
"""
import json
import sys
import time

from peer_common import start_chromium
from whip_chromium import START_PUBLISHER

OFFER = START_PUBLISHER + """
const [path, done] = [arguments[0], arguments[arguments.length - 1]];
(async () => {
  const canvas = document.createElement('canvas');
  canvas.width = 640; canvas.height = 480;
  document.body.appendChild(canvas);
  const context = canvas.getContext('2d');
  const timer = setInterval(() => {
    for (let y = 0; y < 480; y += 16) {
      for (let x = 0; x < 640; x += 16) {
        context.fillStyle = `rgb(${Math.random() * 256 | 0},${Math.random() * 256 | 0},${Math.random() * 256 | 0})`;
        context.fillRect(x, y, 16, 16);
      }
    }
  }, 33);
  const track = canvas.captureStream(30).getVideoTracks()[0];
  const {pc, gathered} = await startPublisher(track);
  await gathered;
  const response = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/sdp'},
                                      body: pc.localDescription.sdp});
  const answer = await response.text();
  const location = response.headers.get('Location');
  window.publisher = {pc, track, timer, location};
  if (response.status !== 201) return done({status: response.status, error: answer});
  await pc.setRemoteDescription({type: 'answer', sdp: answer});
  const connected = await new Promise((resolve) => {
    if (pc.connectionState === 'connected') return resolve(true);
    pc.addEventListener('connectionstatechange', () => {
      if (pc.connectionState === 'connected') resolve(true);
      if (pc.connectionState === 'failed') resolve(false);
    });
    setTimeout(() => resolve(false), 20000);
  });
  done({status: response.status, location, connected, state: pc.connectionState});
})().catch((error) => done({error: String(error)}));
"""

SAMPLE = """
const done = arguments[arguments.length - 1];
(async () => {
  let outbound = null, pair = null;
  (await window.publisher.pc.getStats()).forEach((s) => {
    if (s.type === 'outbound-rtp' && s.kind === 'video') outbound = s;
    if (s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded') pair = s;
  });
  done({bytes: outbound ? outbound.bytesSent + outbound.headerBytesSent : 0,
        framesEncoded: outbound ? outbound.framesEncoded : 0, framesSent: outbound ? outbound.framesSent : 0,
        availableOutgoingBitrate: pair ? pair.availableOutgoingBitrate : null});
})().catch((error) => done({error: String(error)}));
"""

STOP = """
const done = arguments[arguments.length - 1];
(async () => {
  const p = window.publisher;
  clearInterval(p.timer);
  p.track.stop();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  let outbound = null;
  (await p.pc.getStats()).forEach((s) => { if (s.type === 'outbound-rtp' && s.kind === 'video') outbound = s; });
  const response = await fetch(p.location, {method: 'DELETE'});
  p.pc.close();
  done({outbound, deleteStatus: response.status});
})().catch((error) => done({error: String(error)}));
"""


def main():
    page, path, seconds, connected_path = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    driver = start_chromium()
    try:
        driver.get(page)
        result = {"start": driver.execute_async_script(OFFER, path)}
        if result["start"].get("connected"):
            connected = time.time()
            with open(connected_path, "w") as marker:
                marker.write("connected\n")
            samples = []
            while time.time() - connected < seconds:
                time.sleep(0.5)
                sample = driver.execute_async_script(SAMPLE)
                sample["seconds"] = time.time() - connected
                samples.append(sample)
            result["samples"] = samples
            result["stop"] = driver.execute_async_script(STOP)
        print(json.dumps(result))
    finally:
        driver.quit()


main()
