"""Headless Chromium as a WHEP viewer: it opens the WHEP server's player
page (which POSTs a receive-only offer to /whep and plays the track), and
reads the page's figures (window.whep.stats(): getStats() inbound-rtp, the
time from the POST to the first frame shown, the video's size) until the
decoded frame count stops growing, and each frame presented
(window.whep.frames(): RTP timestamp and wall-clock times). Prints them as
JSON.

usage: whep_chromium.py PAGE_URL EXPECTED_FRAMES [TIMEOUT]
"""
import json
import sys
import time

from peer_common import start_chromium

STATS = """
const done = arguments[arguments.length - 1];
window.whep.stats().then(done, (error) => done({error: String(error)}));
"""


def main():
    page, expected = sys.argv[1], int(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 60
    driver = start_chromium(autoplay=True)
    try:
        driver.get(page)
        deadline = time.time() + timeout
        last, steady_since, stats = -1, time.time(), {}
        while time.time() < deadline:
            stats = driver.execute_async_script(STATS)
            if stats.get("error") or (stats.get("status") not in (None, 201)):
                break
            decoded = (stats.get("inbound") or {}).get("framesDecoded", 0)
            if decoded != last:
                last, steady_since = decoded, time.time()
            elif decoded >= expected or (decoded > 0 and time.time() - steady_since > 5):
                break
            time.sleep(0.25)
        stats["frames"] = driver.execute_script("return window.whep.frames()")
        print(json.dumps(stats))
    finally:
        driver.quit()


main()
