"""Headless Chromium as a WHIP publisher: on a page of the endpoint's own
origin, a canvas animation (a frame counter on a changing colour) is
captured at 30 fps and sent with H.264 preferred; the offer is POSTed to
the WHIP URL. After SECONDS the track stops, the final outbound-rtp
statistics (and the selected candidate pair's availableOutgoingBitrate)
are read and the session is DELETEd. Prints JSON: statuses,
Location, and the statistics.

usage: whip_chromium.py PAGE_URL WHIP_PATH SECONDS
"""
import json
import sys
import time

from peer_common import start_chromium

START = """
const [path, done] = [arguments[0], arguments[arguments.length - 1]];
(async () => {
  const canvas = document.createElement('canvas');
  canvas.width = 320; canvas.height = 240;
  document.body.appendChild(canvas);
  const context = canvas.getContext('2d');
  let n = 0;
  const timer = setInterval(() => {
    context.fillStyle = `hsl(${(n * 7) % 360}, 80%, 50%)`;
    context.fillRect(0, 0, 320, 240);
    context.fillStyle = '#fff';
    context.font = '64px sans-serif';
    context.fillText(String(n++), 40, 140);
  }, 33);
  const track = canvas.captureStream(30).getVideoTracks()[0];
  const pc = new RTCPeerConnection();
  const transceiver = pc.addTransceiver(track, {direction: 'sendonly'});
  const h264 = RTCRtpSender.getCapabilities('video').codecs.filter(
    (c) => c.mimeType === 'video/H264' && (c.sdpFmtpLine || '').includes('packetization-mode=1'));
  transceiver.setCodecPreferences(h264);
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve());
    setTimeout(resolve, 3000);
  });
  const response = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/sdp'},
                                      body: pc.localDescription.sdp});
  const answer = await response.text();
  window.publisher = {pc, track, timer, location: response.headers.get('Location')};
  if (response.status !== 201) return done({status: response.status, error: answer});
  await pc.setRemoteDescription({type: 'answer', sdp: answer});
  done({status: response.status, location: window.publisher.location, codecs: h264.length});
})().catch((error) => done({error: String(error)}));
"""

STOP = """
const done = arguments[arguments.length - 1];
(async () => {
  const p = window.publisher;
  // The selected pair's availableOutgoingBitrate: Chromium's estimate from our transport-cc feedback.
  let pair = null;
  (await p.pc.getStats()).forEach((s) => {
    if (s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded') pair = s;
  });
  clearInterval(p.timer);
  p.track.stop();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  let outbound = null;
  (await p.pc.getStats()).forEach((s) => { if (s.type === 'outbound-rtp' && s.kind === 'video') outbound = s; });
  let codec = null;
  if (outbound) (await p.pc.getStats()).forEach((s) => { if (s.id === outbound.codecId) codec = s.mimeType; });
  const response = await fetch(p.location, {method: 'DELETE'});
  p.pc.close();
  done({outbound, codec, deleteStatus: response.status,
        availableOutgoingBitrate: pair ? pair.availableOutgoingBitrate : null});
})().catch((error) => done({error: String(error)}));
"""


def main():
    page, path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    driver = start_chromium()
    try:
        driver.get(page)
        result = {"start": driver.execute_async_script(START, path)}
        if result["start"].get("status") == 201:
            time.sleep(seconds)
            result["stop"] = driver.execute_async_script(STOP)
        print(json.dumps(result))
    finally:
        driver.quit()


main()
