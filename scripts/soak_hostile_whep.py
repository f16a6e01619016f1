#!/usr/bin/python3
"""Hostile clients beside one real viewer, against `codecs stream serve --whep --token-file`
(or beside one real publisher, against `codecs stream receive whip:// --token-file`, with --whip).

Starts `CODECS stream serve -i CLIP --whep 127.0.0.1:0 --token-file FILE
--wait-viewers 0` (the stream runs at once, paced), then for the length of
the stream keeps N hostile workers busy from the loopback addresses
127.0.0.2 ... (never 127.0.0.1), each of one kind, starting over whenever the
server closes its connection (PATH: /whep, or /live with --whip; the
workers are in soak_hostile_whep_workers.py):

  idle          connects and sends nothing
  half-head     sends half a request head, then a byte a second
  slow-body     POSTs an offer to PATH with Content-Length: 100000 and sends a byte every 0.5 s
  offer         POSTs a real SDP offer (made by aiortc, never followed by ICE) to PATH without a token
  offer-guess   the same with `Authorization: Bearer <a guess>`
  stats         GET /whep/stats (must show counts, never a session id)
  delete-guess  DELETE PATH/<32 random hex digits>, half of them with a guessed token
  patch-guess   PATCH of the same kind of URL
  two-lengths   POST PATH with two Content-Length fields
  udp-junk      datagrams of random bytes at the media port
  stun-guess    STUN binding requests with a guessed USERNAME and MESSAGE-INTEGRITY at the media port

The real viewer (Tests/WebRTCTests/Peers/whep_aiortc.py with the token,
from 127.0.0.1) starts --join-after seconds into the attack. With --whip the
server is `CODECS stream receive whip://127.0.0.1:0/live -o OUT --token-file
FILE`, and the real client, started as the viewer would be, is our publisher
`CODECS stream send -i CLIP whip+http://127.0.0.1:PORT/live --token-file
FILE`; the recording must hold every frame of CLIP (framemd5 equal) and the
publisher must exit 0. The server's VmRSS (/proc/PID/status) is sampled
every 0.25 s.

Prints one JSON object (per kind what was sent and what came back, the
viewer's frames, the largest RSS, the server's log) and, on stderr, a short
report. Exits 1 unless: the viewer got every frame from the keyframe it
started at to the last but one (aiortc hands a frame on when the next one
starts), each equal to --framemd5 (`ffmpeg -i CLIP -f framemd5`); the RSS
stayed under --max-rss-mib; no stranger got a session id, a 2xx answer or a
STUN answer; the viewer's session ended with the stream (or the viewer's
own DELETE); and the lines about refused requests stayed within the log's
budget (20 a second).
"""

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

from soak_common import sample_rss
from soak_hostile_whep_workers import KINDS, UDP_KINDS, Tally, hostile_tcp, hostile_udp, make_offer

LOG_LINES_PER_SECOND = 20


async def run_viewer(args, port, frames, result):
    process = await asyncio.create_subprocess_exec(
        "/usr/bin/python3", args.viewer, f"http://127.0.0.1:{port}/whep", str(frames), "8",
        env={**os.environ, "BEARER_TOKEN": args.token}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, stderr = await process.communicate()
    result["clientStatus"] = process.returncode
    result["clientStderr"] = stderr.decode(errors="replace")[-2000:]
    try:
        viewer = json.loads(stdout)
    except ValueError:
        viewer = {}
    result["offerStatus"] = viewer.get("status")
    result["frames"] = viewer.get("frames", [])
    result["session"] = (viewer.get("location") or "").rsplit("/", 1)[-1]


async def run_publisher(args, port, token_file, result):
    process = await asyncio.create_subprocess_exec(
        args.codecs, "stream", "send", "-i", args.input, f"whip+http://127.0.0.1:{port}/live",
        "--token-file", token_file, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, stderr = await process.communicate()
    result["clientStatus"] = process.returncode
    result["clientStderr"] = stderr.decode(errors="replace")[-2000:]


def server_command(args, token_file):
    if args.whip:
        return [args.codecs, "stream", "receive", "whip://127.0.0.1:0/live", "-o", args.output, "--token-file",
                token_file, "--timeout", "60", "--stats-json", args.stats_json]
    return [args.codecs, "stream", "serve", "-i", args.input, "--whep", "127.0.0.1:0", "--token-file", token_file,
            "--wait-viewers", "0", "--linger", "2", "--stats-json", args.stats_json]


async def main(args, offer, token_file, expected_frames):
    server = subprocess.Popen(server_command(args, token_file), stderr=subprocess.PIPE, text=True)
    first = server.stderr.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)" + args.path + r" \(media on UDP port (\d+)\)", first)
    if not match:
        server.kill()
        sys.exit(f"the server did not say its ports: {first!r}")
    port, media_port = int(match.group(1)), int(match.group(2))
    log = [first.rstrip("\n")]
    reader = threading.Thread(target=lambda: log.extend(line.rstrip("\n") for line in server.stderr), daemon=True)
    reader.start()
    started = time.monotonic()

    result = {"maxRSSKiB": 0}
    tally = Tally()
    stop = asyncio.Event()
    rss = asyncio.create_task(sample_rss(server.pid, result, stop))
    tasks = []
    for index in range(args.connections):
        kind = KINDS[index % len(KINDS)]
        address = f"127.0.0.{2 + index % args.addresses}"
        if kind in UDP_KINDS:
            tasks.append(asyncio.create_task(hostile_udp(kind, address, media_port, tally, stop, args.datagrams)))
        else:
            tasks.append(asyncio.create_task(hostile_tcp(kind, address, port, offer, args.path, tally, stop, args.pause)))
    await asyncio.sleep(args.join_after)
    if args.whip:
        client = asyncio.create_task(run_publisher(args, port, token_file, result))
    else:
        client = asyncio.create_task(run_viewer(args, port, expected_frames, result))
    # The attack lasts as long as the server serves.
    while server.poll() is None:
        await asyncio.sleep(0.2)
    elapsed = time.monotonic() - started
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    await rss
    await client
    reader.join(timeout=10)
    if args.whip:
        # The session is the one that joined from 127.0.0.1 (strangers have no token).
        own = [line for line in log if " joined from 127.0.0.1:" in line]
        result["session"] = own[0].split("publisher ", 1)[1].split(" ")[0] if len(own) == 1 else ""
        decoded = subprocess.run(["ffmpeg", "-v", "error", "-i", args.output, "-f", "framemd5", "-"],
                                 capture_output=True, text=True)
        result["frames"] = [line.split(",")[-1].strip() for line in decoded.stdout.splitlines()
                            if line.strip() and not line.startswith("#")]
    result["serverStatus"] = server.returncode
    result["seconds"] = round(elapsed, 1)
    result["hostile"] = tally.kinds
    result["idsSeenByStrangers"] = len(tally.ids_seen)
    result["serverLogLines"] = len(log)
    result["serverLog"] = log
    try:
        with open(args.stats_json) as f:
            result["serverStatistics"] = json.load(f)
    except (OSError, ValueError):
        result["serverStatistics"] = None
    return result


def judge(result, expected, args):
    """The failures (empty when the soak passed) and the report's lines."""
    failures = []
    who = "publisher" if args.whip else "viewer"
    frames = result.get("frames", [])
    start = expected.index(frames[0]) if frames and frames[0] in expected else None
    if args.whip:
        if result.get("clientStatus") != 0:
            failures.append(f"the publisher exited with {result.get('clientStatus')}: {result['clientStderr'][-300:]}")
        if frames != expected:
            failures.append(f"the recording's {len(frames)} frames are not the clip's {len(expected)}")
    else:
        if result.get("offerStatus") != 201:
            failures.append(f"the viewer's offer got {result.get('offerStatus')} ({result['clientStderr'][-300:]})")
        if start is None:
            failures.append("the viewer's first frame is none of the file's")
        else:
            if start % args.gop != 0:
                failures.append(f"the viewer started at frame {start}, not a keyframe")
            if frames != expected[start:start + len(frames)] or len(frames) < len(expected) - start - 1:
                failures.append(
                    f"the viewer's {len(frames)} frames are not frames {start} to {len(expected) - 2} of the file")
    session = result.get("session") or ""
    ends = [line.split(" left: ", 1)[1] for line in result["serverLog"] if f"{who} {session} left: " in line]
    # Ended by the stream's end, the client's own DELETE or (WHIP) its RTCP BYE, which only it can send (SRTCP).
    own_ends = ("the stream ended", f"the {who} sent DELETE from 127.0.0.1:", "the publisher ended the stream")
    if not session or len(ends) != 1 or not ends[0].startswith(own_ends):
        failures.append(f"the {who}'s session ended: {ends}")
    if session and any(session in line for line in result["serverLog"] if " left: " not in line
                       and " joined from 127.0.0.1:" not in line):
        failures.append(f"the {who}'s id is in a line about someone else")
    if result["idsSeenByStrangers"]:
        failures.append(f"{result['idsSeenByStrangers']} session ids seen in /whep/stats by strangers")
    for kind, counts in result["hostile"].items():
        if kind in UDP_KINDS:
            if counts["replies"]:
                failures.append(f"{kind}: {counts['replies']} replies")
        elif any(status.startswith("2") for status in counts["statuses"]) and kind != "stats":
            failures.append(f"{kind}: {counts['statuses']}")
    joined = [line for line in result["serverLog"] if " joined from " in line]
    if len(joined) != 1:
        failures.append(f"{len(joined)} sessions joined (only the {who} has the token)")
    refusals = [line for line in result["serverLog"] if " refused: " in line or " left out " in line]
    budget = LOG_LINES_PER_SECOND * (result["seconds"] + 2)
    if len(refusals) > budget:
        failures.append(f"{len(refusals)} log lines about refused requests in {result['seconds']} s")
    if any(args.token in line for line in result["serverLog"]):
        failures.append("the token is in the server's log")
    if result["maxRSSKiB"] >= args.max_rss_mib * 1024:
        failures.append(f"largest RSS {result['maxRSSKiB']} KiB")
    if result["serverStatus"] != 0:
        failures.append(f"the server exited with {result['serverStatus']}")

    left_out = sum(int(line.split(" lines ")[0].split()[-1]) if " lines about " in line else 1
                   for line in result["serverLog"] if " left out " in line)
    report = [f"soak-hostile-whep{' --whip' if args.whip else ''}: {result['seconds']} s, {args.connections} hostile workers from "
              f"{args.addresses} addresses"]
    for kind, counts in result["hostile"].items():
        if kind in UDP_KINDS:
            report.append(f"  {kind:13} {counts['datagrams']} datagrams, {counts['replies']} answered")
        else:
            statuses = ", ".join(f"{s}: {n}" for s, n in sorted(counts["statuses"].items()))
            report.append(f"  {kind:13} {counts['connections']} connections" + (f" ({statuses})" if statuses else ""))
    equal = "each equal" if not any("frames" in failure for failure in failures) else "NOT equal"
    ended = ends[0] if len(ends) == 1 else ends
    if args.whip:
        report.append(f"  publisher: exit {result.get('clientStatus')}; recording: {len(frames)} of {len(expected)} "
                      f"frames, {equal} to ffmpeg's framemd5 of the clip; session ended: {ended}")
    else:
        report.append(f"  viewer: {len(frames)} frames from frame {start} (of {len(expected)}), {equal} to "
                      f"ffmpeg's framemd5; session ended: {ended}")
    report.append(f"  server: largest VmRSS {result['maxRSSKiB'] / 1024:.1f} MiB (bound {args.max_rss_mib:.0f}); "
                  f"{result['serverLogLines']} log lines, {len(refusals)} about refused requests "
                  f"({left_out} more left out); session ids shown to strangers: {result['idsSeenByStrangers']}")
    return failures, report


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--codecs", required=True, help="the codecs executable")
    parser.add_argument("--input", required=True, help="the H.264 Annex-B clip to serve")
    parser.add_argument("--framemd5", required=True, help="ffmpeg -i CLIP -f framemd5 output")
    parser.add_argument("--gop", type=int, required=True, help="the clip's keyframe interval")
    parser.add_argument("--viewer", help="Tests/WebRTCTests/Peers/whep_aiortc.py (WHEP)")
    parser.add_argument("--whip", action="store_true", help="attack `receive whip://` beside our publisher")
    parser.add_argument("--output", help="with --whip: the recording (an .h264 file)")
    parser.add_argument("--connections", type=int, default=200, help="hostile workers at once")
    parser.add_argument("--addresses", type=int, default=20, help="loopback addresses they come from")
    parser.add_argument("--join-after", type=float, default=3.0, help="seconds of attack before the viewer")
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between a worker's requests")
    parser.add_argument("--datagrams", type=int, default=100, help="datagrams a second per UDP worker")
    parser.add_argument("--token", default=None, help="the endpoint's token (default: a random one)")
    parser.add_argument("--stats-json", default=None)
    parser.add_argument("--max-rss-mib", type=float, default=256)
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse_arguments()
    arguments.token = arguments.token or os.urandom(16).hex()
    arguments.path = "/live" if arguments.whip else "/whep"
    if (arguments.output is None) != (not arguments.whip) or (arguments.viewer is None) != arguments.whip:
        sys.exit("give --viewer SCRIPT for WHEP, or --whip with --output FILE")
    with tempfile.TemporaryDirectory() as directory:
        token_path = os.path.join(directory, "token")
        with open(token_path, "w") as f:
            f.write(arguments.token + "\n")
        arguments.stats_json = arguments.stats_json or os.path.join(directory, "stats.json")
        with open(arguments.framemd5) as f:
            expected = [line.split(",")[-1].strip() for line in f if line.strip() and not line.startswith("#")]
        outcome = asyncio.run(main(arguments, make_offer(), token_path, len(expected)))
    failures, lines = judge(outcome, expected, arguments)
    print(json.dumps(outcome, separators=(",", ":")))
    for line in lines:
        print(line, file=sys.stderr)
    for failure in failures:
        print(f"soak-hostile-whep: FAILED: {failure}", file=sys.stderr)
    print(f"soak-hostile-whep: {'FAILED' if failures else 'passed'}", file=sys.stderr)
    sys.exit(1 if failures else 0)
