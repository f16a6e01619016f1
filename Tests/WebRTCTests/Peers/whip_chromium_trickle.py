"""Headless Chromium as a trickling WHIP publisher (RFC 9725 4.3): the
offer is POSTed at once without candidates; the candidates Chromium gathers
are PATCHed to the session URL in one application/trickle-ice-sdpfrag body
(its ice-ufrag and ice-pwd, the m= line's mid, the candidates,
a=end-of-candidates) with If-Match naming the 201's ETag. A canvas
animation is sent for SECONDS, then the final outbound-rtp statistics are
read and the session is DELETEd. Prints JSON: the statuses, the fragment
sent and the statistics. The publisher is whip_chromium.py's.

usage: whip_chromium_trickle.py PAGE_URL WHIP_PATH SECONDS
"""
from whip_chromium import publish

publish(trickle=True)
