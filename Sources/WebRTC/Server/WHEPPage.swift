/// The page ``WHEPServer`` serves at `/`: a WHEP player (an
/// RTCPeerConnection with one receive-only video transceiver; the offer is
/// POSTed to `/whep` once ICE gathering is done, and the session is
/// DELETEd when the page goes away; with `#token=T` in its URL both carry
/// `Authorization: Bearer T`). It shows the connection state, frames
/// decoded, packets lost, NACKs and PLIs sent from `getStats()`, and the
/// time from the POST to the first frame shown, and the p50/p95 time from a
/// frame's last packet arriving to its presentation.
///
/// `window.whep.stats()` returns those figures as an object, for scripts;
/// `window.whep.frames()` lists each frame presented as `[rtpTimestamp,
/// received, presented, expected on screen]`, the times in wall-clock ms
/// (`performance.timeOrigin` + the page's time).
enum WHEPPage {
    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>CodecSessions WebRTC player</title>
        <style>
        body { font: 14px system-ui, sans-serif; margin: 16px; background: #111; color: #ddd; }
        video { background: #000; max-width: 100%; display: block; margin-bottom: 8px; }
        table { border-collapse: collapse; } td { padding: 2px 12px 2px 0; }
        </style>
        </head>
        <body>
        <h1>WebRTC (WHEP) player <a id="webcodecs" hidden>WebCodecs player of this stream</a></h1>
        <video id="video" muted autoplay playsinline></video>
        <table id="figures"></table>
        <script>
        "use strict";
        const video = document.getElementById("video");
        // ?webcodecs=URL: the WebCodecs page (`codecs stream serve --http`) of the
        // same source; the link opens it with this endpoint as its WebRTC player.
        const webcodecs = new URLSearchParams(location.search).get("webcodecs");
        if (webcodecs) {
          const link = document.getElementById("webcodecs");
          const target = new URL(webcodecs);
          target.searchParams.set("whep", new URL("/whep", location.href).href);
          link.href = target.href;
          link.hidden = false;
        }
        // #token=T: the endpoint's bearer token (`--token`), sent as
        // `Authorization: Bearer T` with the POST and the DELETE; a fragment
        // never reaches the server's logs or a Referer.
        const token = new URLSearchParams(location.hash.slice(1)).get("token");
        const authorization = token ? { Authorization: "Bearer " + token } : {};
        const state = { status: null, location: null, error: null, postedAt: null, firstFrameMs: null, framesShown: 0,
                        inbound: null, connection: "new" };
        const pc = new RTCPeerConnection();
        const transceiver = pc.addTransceiver("video", { direction: "recvonly" });
        // Ask for abs-capture-time (offered only on request) so that every
        // frame carries its capture time.
        if (transceiver.setHeaderExtensionsToNegotiate) {
          const extensions = transceiver.getHeaderExtensionsToNegotiate();
          for (const e of extensions) {
            if (e.uri.endsWith("/abs-capture-time") && e.direction === "stopped") e.direction = "recvonly";
          }
          try { transceiver.setHeaderExtensionsToNegotiate(extensions); } catch (error) { state.extensionError = String(error); }
        }
        pc.ontrack = (event) => { video.srcObject = new MediaStream([event.track]); };
        pc.onconnectionstatechange = () => { state.connection = pc.connectionState; };
        const latencies = [];
        const frames = [];
        const percentile = (values, p) => {
          if (values.length === 0) return null;
          const sorted = [...values].sort((a, b) => a - b);
          return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
        };
        const onFrame = (now, metadata) => {
          state.framesShown += 1;
          // The longest wait between two frames shown, and where it came.
          if (state.lastShownAt !== undefined && now - state.lastShownAt > (state.largestGapMs || 0)) {
            state.largestGapMs = now - state.lastShownAt;
            state.largestGapAtFrame = state.framesShown;
          }
          state.lastShownAt = now;
          // receiveTime: the last packet of the frame arrived; presentationTime:
          // the frame went to the compositor. (Chromium gives no captureTime for
          // remote frames here, even with abs-capture-time.)
          // Per frame, on the wall clock (performance.timeOrigin + the
          // page's time, in ms): its RTP timestamp, when its last packet
          // arrived, when it was presented and when it is expected on screen
          // (window.whep.frames(); the server's /whep/stats gives each RTP
          // timestamp's send time on the same clock).
          if (metadata && metadata.rtpTimestamp !== undefined && frames.length < 100000) {
            const wall = (t) => (t === undefined ? null : performance.timeOrigin + t);
            frames.push([metadata.rtpTimestamp, wall(metadata.receiveTime), wall(metadata.presentationTime),
                         wall(metadata.expectedDisplayTime)]);
          }
          if (metadata && metadata.receiveTime !== undefined) {
            latencies.push(metadata.presentationTime - metadata.receiveTime);
            state.receivedToPresentedP50Ms = percentile(latencies, 0.5);
            state.receivedToPresentedP95Ms = percentile(latencies, 0.95);
          }
          if (state.firstFrameMs === null && state.postedAt !== null) state.firstFrameMs = now - state.postedAt;
          video.requestVideoFrameCallback(onFrame);
        };
        if (video.requestVideoFrameCallback) video.requestVideoFrameCallback(onFrame);
        async function start() {
          await pc.setLocalDescription(await pc.createOffer());
          await new Promise((resolve) => {
            if (pc.iceGatheringState === "complete") return resolve();
            pc.addEventListener("icegatheringstatechange", () => pc.iceGatheringState === "complete" && resolve());
            setTimeout(resolve, 3000);
          });
          state.postedAt = performance.now();
          const response = await fetch("/whep", { method: "POST", headers: { "Content-Type": "application/sdp", ...authorization },
                                                  body: pc.localDescription.sdp });
          const text = await response.text();
          state.status = response.status;
          if (response.status !== 201) { state.error = text; return; }
          state.location = response.headers.get("Location");
          await pc.setRemoteDescription({ type: "answer", sdp: text });
        }
        async function poll() {
          const report = await pc.getStats();
          report.forEach((s) => { if (s.type === "inbound-rtp" && s.kind === "video") state.inbound = s; });
          const s = state.inbound || {};
          const rows = [["connection", state.connection], ["HTTP status", state.status],
            ["frames decoded", s.framesDecoded], ["frames dropped", s.framesDropped],
            ["packets lost", s.packetsLost], ["NACKs sent", s.nackCount], ["PLIs sent", s.pliCount],
            ["POST to first frame (ms)", state.firstFrameMs && state.firstFrameMs.toFixed(1)],
            ["received to presented p50 / p95 (ms)", state.receivedToPresentedP50Ms === undefined ? null
              : state.receivedToPresentedP50Ms.toFixed(1) + " / " + state.receivedToPresentedP95Ms.toFixed(1)],
            ["size", video.videoWidth + "x" + video.videoHeight], ["error", state.error]];
          document.getElementById("figures").innerHTML =
            rows.map(([k, v]) => `<tr><td>${k}</td><td>${v ?? "–"}</td></tr>`).join("");
        }
        window.whep = {
          stats: async () => { await poll(); return { ...state, width: video.videoWidth, height: video.videoHeight }; },
          frames: () => frames,
        };
        window.addEventListener("pagehide", () => {
          if (state.location) fetch(state.location, { method: "DELETE", headers: authorization, keepalive: true });
        });
        start().catch((error) => { state.error = String(error); });
        setInterval(poll, 500);
        </script>
        </body>
        </html>
        """
}
