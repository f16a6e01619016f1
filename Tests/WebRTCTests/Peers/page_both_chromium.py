"""Headless Chromium on the WebStreaming page with its WebRTC player: it
opens PAGE_URL (`codecs stream serve --http`'s page, with ?whep=URL so that
it also plays `codecs stream serve --whep`'s stream), and reads both players'
figures until each has EXPECTED_FRAMES frames decoded or stops growing:
window.codecsPlayer.stats() (WebCodecs) and window.codecsWebRTC.stats()
(getStats() inbound-rtp), and the page's link to the WHEP server's own page;
then, with WHEP_PAGE_URL given, opens that page (which should link back to
the WebCodecs page) and reads its link.
Prints {"webcodecs": ..., "webrtc": ..., "link": ..., "backLink": ...} as JSON.

usage: page_both_chromium.py PAGE_URL EXPECTED_FRAMES [WHEP_PAGE_URL]
"""
import json
import sys
import time

from peer_common import start_chromium

WEBRTC = """
const done = arguments[arguments.length - 1];
if (!window.codecsWebRTC) done({error: "the page has no WebRTC player"});
else window.codecsWebRTC.stats().then(done, (error) => done({error: String(error)}));
"""


def main():
    page, expected = sys.argv[1], int(sys.argv[2])
    whep_page = sys.argv[3] if len(sys.argv) > 3 else None
    timeout = 90
    driver = start_chromium(autoplay=True)
    try:
        driver.get(page)
        deadline = time.time() + timeout
        last, steady_since, webrtc, webcodecs = None, time.time(), {}, {}
        while time.time() < deadline:
            webrtc = driver.execute_async_script(WEBRTC)
            text = driver.execute_script("return window.codecsPlayer ? window.codecsPlayer.stats() : null")
            webcodecs = json.loads(text) if text else {}
            if webrtc.get("error") or webrtc.get("status") not in (None, 201):
                break
            counts = ((webrtc.get("inbound") or {}).get("framesDecoded", 0), webcodecs.get("framesDecoded", 0))
            if counts != last:
                last, steady_since = counts, time.time()
            elif min(counts) >= expected and webcodecs.get("closed"):
                break
            elif max(counts) > 0 and time.time() - steady_since > 5:
                break
            time.sleep(0.25)
        link = driver.execute_script("return document.getElementById('webrtc-link').href")
        back_link = None
        if whep_page:
            driver.get(whep_page)
            back_link = driver.execute_script(
                "const a = document.getElementById('webcodecs'); return a.hidden ? null : a.href")
        print(json.dumps({"webcodecs": webcodecs, "webrtc": webrtc, "link": link, "backLink": back_link}))
    finally:
        driver.quit()


main()
