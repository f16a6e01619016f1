"""Headless Chromium as a WHEP viewer: it opens the WHEP server's player
page (which POSTs a receive-only offer to /whep and plays the track), and
reads the page's figures (window.whep.stats(): getStats() inbound-rtp, the
time from the POST to the first frame shown, the video's size) until the
decoded frame count stops growing. Prints them as JSON.

usage: whep_chromium.py PAGE_URL EXPECTED_FRAMES [TIMEOUT]
"""
import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

STATS = """
const done = arguments[arguments.length - 1];
window.whep.stats().then(done, (error) => done({error: String(error)}));
"""


def main():
    page, expected = sys.argv[1], int(sys.argv[2])
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 60
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--autoplay-policy=no-user-gesture-required"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(30)
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
        print(json.dumps(stats))
    finally:
        driver.quit()


main()
