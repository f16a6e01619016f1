"""What the peer scripts share: starting headless Chromium (Debian's chromium
and chromium-driver through python3-selenium), and the two HTTP exchanges of
WHEP and WHIP (RFC 9725 / the WHEP draft): POST an offer, DELETE the session,
both with `Authorization: Bearer $BEARER_TOKEN` when that variable is set.
"""
import os
import urllib.parse
import urllib.request


def start_chromium(autoplay=False):
    """A headless Chromium driver whose async scripts may take 30 s;
    `autoplay` lets media play without a user gesture."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    arguments = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    if autoplay:
        arguments.append("--autoplay-policy=no-user-gesture-required")
    for argument in arguments:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(30)
    return driver


def authorization():
    """The Authorization field for $BEARER_TOKEN, or none."""
    token = os.environ.get("BEARER_TOKEN")
    return {"Authorization": "Bearer " + token} if token else {}


def post_offer(url, sdp):
    """POSTs `sdp` as application/sdp; returns the status, the Location, the
    Content-Type and the answer."""
    request = urllib.request.Request(
        url, data=sdp.encode(), method="POST", headers={"Content-Type": "application/sdp", **authorization()})
    with urllib.request.urlopen(request, timeout=10) as response:
        return (response.status, response.headers["Location"], response.headers["Content-Type"],
                response.read().decode())


def delete_session(url, location):
    """DELETEs the session at `location` (relative to `url`); its status, or
    the error's text."""
    try:
        return urllib.request.urlopen(
            urllib.request.Request(urllib.parse.urljoin(url, location), method="DELETE", headers=authorization()),
            timeout=10).status
    except Exception as error:
        return str(error)
