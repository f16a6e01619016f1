"""Headless Chromium as a WHIP publisher: on a page of the endpoint's own
origin, a canvas animation (a frame counter on a changing colour) is
captured at 30 fps and sent with H.264 preferred; the offer is POSTed to
the WHIP URL. After SECONDS the track stops, the final outbound-rtp
statistics (and the selected candidate pair's availableOutgoingBitrate)
are read and the session is DELETEd. Prints JSON: statuses,
Location, and the statistics.

With trickle (whip_chromium_trickle.py, RFC 9725 4.3) the offer is POSTed
at once without candidates, and the candidates Chromium gathers are
PATCHed to the session URL in one application/trickle-ice-sdpfrag body
(its ice-ufrag and ice-pwd, the m= line's mid, the candidates,
a=end-of-candidates) with If-Match naming the 201's ETag.

usage: whip_chromium.py PAGE_URL WHIP_PATH SECONDS
"""
import json
import sys
import time

from peer_common import start_chromium

# The publisher's peer connection for a track, sendonly with H.264
# (packetization-mode 1) preferred and its offer set as the local
# description; `gathered` settles when gathering ends (or after 3 s), and
# `candidates` holds what was gathered. Scripts that publish start with it.
START_PUBLISHER = """
async function startPublisher(track) {
  const pc = new RTCPeerConnection();
  const candidates = [];
  const gathered = new Promise((resolve) => {
    pc.addEventListener('icecandidate', (event) => {
      if (event.candidate && event.candidate.candidate) candidates.push(event.candidate.candidate);
      if (!event.candidate) resolve();
    });
    setTimeout(resolve, 3000);
  });
  const transceiver = pc.addTransceiver(track, {direction: 'sendonly'});
  const h264 = RTCRtpSender.getCapabilities('video').codecs.filter(
    (c) => c.mimeType === 'video/H264' && (c.sdpFmtpLine || '').includes('packetization-mode=1'));
  transceiver.setCodecPreferences(h264);
  await pc.setLocalDescription(await pc.createOffer());
  return {pc, candidates, gathered, transceiver, h264};
}
"""

# The canvas animation, its track, the peer connection (and, trickling, the
# candidates it gathers) and the offer with H.264 preferred.
OFFER = START_PUBLISHER + """
const [path, trickle, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
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
  const {pc, candidates, gathered, transceiver, h264} = await startPublisher(track);
  if (!trickle) await gathered;
  const offer = !trickle ? pc.localDescription.sdp : pc.localDescription.sdp.split('\\r\\n')
    .filter((line) => !line.startsWith('a=candidate:') && line !== 'a=end-of-candidates').join('\\r\\n');
  const response = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/sdp'}, body: offer});
  const answer = await response.text();
  const location = response.headers.get('Location');
  window.publisher = {pc, track, timer, location};
  if (response.status !== 201) return done({status: response.status, error: answer});
  await pc.setRemoteDescription({type: 'answer', sdp: answer});
  if (!trickle) return done({status: response.status, location, codecs: h264.length});
  const etag = response.headers.get('ETag');
  await gathered;
  const sdp = pc.localDescription.sdp;
  const ufrag = sdp.match(/a=ice-ufrag:(\\S+)/)[1];
  const pwd = sdp.match(/a=ice-pwd:(\\S+)/)[1];
  const mid = transceiver.mid;
  const fragment = [`a=ice-ufrag:${ufrag}`, `a=ice-pwd:${pwd}`, 'm=video 9 UDP/TLS/RTP/SAVPF 0', `a=mid:${mid}`]
    .concat(candidates.map((c) => 'a=' + c), ['a=end-of-candidates']).join('\\r\\n') + '\\r\\n';
  const patch = await fetch(location, {method: 'PATCH', body: fragment,
    headers: {'Content-Type': 'application/trickle-ice-sdpfrag', 'If-Match': etag}});
  done({status: response.status, location, etag, offerHasCandidates: offer.includes('a=candidate:'),
        acceptPatch: response.headers.get('Accept-Patch'), patchStatus: patch.status,
        candidates: candidates.length, fragment});
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


def publish(trickle):
    """Publishes to argv's PAGE_URL and WHIP_PATH for SECONDS (trickling
    the candidates when `trickle`) and prints the JSON."""
    page, path, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    driver = start_chromium()
    try:
        driver.get(page)
        result = {"start": driver.execute_async_script(OFFER, path, trickle)}
        if result["start"].get("status") == 201:
            time.sleep(seconds)
            result["stop"] = driver.execute_async_script(STOP)
        print(json.dumps(result))
    finally:
        driver.quit()


if __name__ == "__main__":
    publish(trickle=False)
