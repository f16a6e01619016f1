#!/usr/bin/python3
"""Hostile clients beside one real viewer, against `codecs stream serve --http`.

Starts `CODECS stream serve -i INPUT --http 127.0.0.1:0` (paced, waiting for
one WebSocket client), then for the length of the stream keeps N hostile
connections open from the loopback addresses 127.0.0.2 ... (never 127.0.0.1),
each of one kind, reopened whenever the server closes it:

  idle         connects and sends nothing
  half-head    sends half a request head, then a byte a second
  slow-body    POSTs with Content-Length: 100000 and sends a byte every 0.5 s
  ping-flood   a WebSocket client that sends pings and never reads
  stats-flood  a WebSocket client that sends "stats" requests and never reads
  close-hold   a WebSocket client that reads nothing, sends a close frame and holds
  bad-origin   a WebSocket upgrade from a page on another site (Origin: http://evil.example)

The real viewer (Python websockets, from 127.0.0.1) connects once the
connection kinds that make no WebSocket client (the first three and
bad-origin) are running; the others start once it is in, and it gets the
stream from its first access unit. With --join-late the server starts at
once (--wait-clients 0), every kind runs from the start, and the viewer
joins 2 s in: it gets the stream from the next keyframe, and is compared from
there (its first sequence number). The server's VmRSS (/proc/PID/status) is
sampled every 0.25 s.

Prints one JSON object: the viewer's per-frame MD5s (of each access unit's
payload), its close code, the largest RSS in KiB, and per kind the
connections made and the HTTP statuses of their requests. With --framemd5
FILE (the output of `ffmpeg -i IN -c copy -f framemd5`) it also compares and
exits 1 when the frames differ or the RSS passed --max-rss-mib.
"""

import argparse
import asyncio
import base64
import hashlib
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time

import websockets

from soak_common import open_socket, sample_rss, send_endless_head

KINDS = ["idle", "half-head", "slow-body", "ping-flood", "stats-flood", "close-hold", "bad-origin"]
BEFORE_VIEWER = {"idle", "half-head", "slow-body", "bad-origin"}


def masked(opcode, payload):
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    length = len(payload)
    if length < 126:
        head = bytes([0x80 | opcode, 0x80 | length])
    else:
        head = bytes([0x80 | opcode, 0x80 | 126]) + struct.pack(">H", length)
    return head + mask + body


def upgrade_request(port, origin=None):
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET /stream HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    if origin:
        lines.append(f"Origin: {origin}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class Tally:
    def __init__(self, server):
        self.kinds = {kind: {"connections": 0, "statuses": {}, "endedByShutdown": 0} for kind in KINDS}
        self.server = server

    def opened(self, kind):
        self.kinds[kind]["connections"] += 1

    def status(self, kind, status):
        statuses = self.kinds[kind]["statuses"]
        statuses[str(status)] = statuses.get(str(status), 0) + 1

    async def reply(self, kind, status):
        """Counts a reply's status; a connection that ended without one while the server was exiting (it exits
        within 5 s) is counted apart, as ended by the shutdown at the end of the stream."""
        if status is None:
            for _ in range(50):
                if self.server.poll() is not None:
                    self.kinds[kind]["endedByShutdown"] += 1
                    return
                await asyncio.sleep(0.1)
        self.status(kind, status)


async def read_status(sock):
    """The status of the response head, or None when the connection ended first."""
    loop = asyncio.get_running_loop()
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 8192:
        try:
            chunk = await asyncio.wait_for(loop.sock_recv(sock, 1), 15)
        except (OSError, asyncio.TimeoutError):
            return None
        if not chunk:
            return None
        head += chunk
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", head)
    return int(match.group(1)) if match else None


async def until_closed(sock, seconds):
    """Waits up to `seconds` for the server to end the connection (reading what comes)."""
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = await asyncio.wait_for(loop.sock_recv(sock, 65536), max(0.01, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            return
        except OSError:
            return
        if not chunk:
            return


async def hostile(kind, address, port, tally, stop):
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        sock = None
        try:
            sock = await open_socket(address, port, small_buffer=kind in ("ping-flood", "stats-flood", "close-hold"))
            tally.opened(kind)
            if kind == "idle":
                await until_closed(sock, 3600)
            elif kind == "half-head":
                await send_endless_head(sock, port, stop)
            elif kind == "slow-body":
                await loop.sock_sendall(
                    sock,
                    f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 100000\r\n\r\n".encode(),
                )
                while not stop.is_set():
                    await loop.sock_sendall(sock, b"b")
                    await asyncio.sleep(0.5)
            elif kind in ("ping-flood", "stats-flood"):
                await loop.sock_sendall(sock, upgrade_request(port))
                await tally.reply(kind, await read_status(sock))
                frame = masked(9, os.urandom(125)) if kind == "ping-flood" else masked(1, b"stats")
                burst = frame * max(1, 16384 // len(frame))
                while not stop.is_set():
                    await asyncio.wait_for(loop.sock_sendall(sock, burst), 30)
            elif kind == "close-hold":
                await loop.sock_sendall(sock, upgrade_request(port))
                status = await read_status(sock)
                await tally.reply(kind, status)
                if status == 101:
                    await asyncio.sleep(1)
                    await loop.sock_sendall(sock, masked(8, struct.pack(">H", 1000)))
                    # Hold without reading: as long as the server lets it.
                    await asyncio.sleep(8)
            elif kind == "bad-origin":
                await loop.sock_sendall(sock, upgrade_request(port, origin="http://evil.example"))
                status = await read_status(sock)
                await tally.reply(kind, status)
                if status == 101:
                    await asyncio.sleep(8)
        except (OSError, asyncio.TimeoutError):
            pass
        finally:
            if sock is not None:
                sock.close()
        await asyncio.sleep(0.1)


async def viewer(port, result, connected):
    units = []
    sequences = []
    ws = None
    for _ in range(200):
        try:
            ws = await websockets.connect(
                f"ws://127.0.0.1:{port}/stream", max_size=None, compression=None, open_timeout=10
            )
            break
        except (OSError, asyncio.TimeoutError, websockets.InvalidHandshake) as error:
            result["viewerErrors"].append(str(error))
            await asyncio.sleep(0.1)
    if ws is None:
        return
    connected.set()
    try:
        async for message in ws:
            if isinstance(message, str):
                continue
            units.append(hashlib.md5(message[30:]).hexdigest())
            sequences.append(int.from_bytes(message[26:30], "big"))
    except websockets.ConnectionClosed:
        pass
    result["closeCode"] = ws.close_code
    result["units"] = units
    result["firstSequence"] = sequences[0] if sequences else None
    result["sequencesContiguous"] = sequences == list(range(sequences[0], sequences[0] + len(sequences))) if sequences else False


async def main(args):
    server = subprocess.Popen(
        [args.codecs, "stream", "serve", "-i", args.input, "--http", "127.0.0.1:0", "--stats-json", args.stats_json]
        + (["--wait-clients", "0"] if args.join_late else []),
        stderr=subprocess.PIPE,
        text=True,
    )
    match = None
    for _ in range(20):
        line = server.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if match or not line:
            break
    if not match:
        server.kill()
        sys.exit(f"the server did not say its port: {line!r}")
    port = int(match.group(1))
    stderr_lines = []
    loop = asyncio.get_running_loop()
    stderr_done = loop.run_in_executor(None, lambda: stderr_lines.extend(server.stderr))

    result = {"units": [], "closeCode": None, "viewerErrors": [], "maxRSSKiB": 0, "rssSamplesKiB": []}
    tally = Tally(server)
    stop = asyncio.Event()
    connected = asyncio.Event()
    rss = asyncio.create_task(sample_rss(server.pid, result, stop))
    workers = []
    for index in range(args.connections):
        kind = KINDS[index % len(KINDS)]
        address = f"127.0.0.{2 + index % args.addresses}"
        workers.append((kind, address))
    early = [(k, a) for k, a in workers if args.join_late or k in BEFORE_VIEWER]
    late = [(k, a) for k, a in workers if (k, a) not in early]
    tasks = [asyncio.create_task(hostile(k, a, port, tally, stop)) for k, a in early]
    await asyncio.sleep(2.0 if args.join_late else args.head_start)
    watching = asyncio.create_task(viewer(port, result, connected))
    try:
        await asyncio.wait_for(connected.wait(), 30)
    except asyncio.TimeoutError:
        pass
    tasks += [asyncio.create_task(hostile(k, a, port, tally, stop)) for k, a in late]
    try:
        await asyncio.wait_for(watching, args.seconds + 60)
    except asyncio.TimeoutError:
        pass
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await rss
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    await stderr_done
    result["serverStatus"] = server.returncode
    result["serverLog"] = [line.rstrip("\n") for line in stderr_lines[-40:]]
    result["hostile"] = tally.kinds
    try:
        with open(args.stats_json) as f:
            result["serverStatistics"] = json.load(f)
    except (OSError, ValueError):
        result["serverStatistics"] = None
    return result


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--codecs", required=True, help="the codecs executable")
    parser.add_argument("--input", required=True, help="the encoded file to serve")
    parser.add_argument("--seconds", type=float, required=True, help="the stream's length")
    parser.add_argument("--connections", type=int, default=200, help="hostile connections at once")
    parser.add_argument("--addresses", type=int, default=20, help="loopback addresses they come from")
    parser.add_argument("--head-start", type=float, default=1.0, help="seconds of attack before the viewer")
    parser.add_argument("--stats-json", default="/tmp/soak-hostile-stats.json")
    parser.add_argument("--join-late", action="store_true", help="the viewer joins the running stream mid-attack")
    parser.add_argument("--framemd5", help="ffmpeg -f framemd5 output of the served file, to compare")
    parser.add_argument("--max-rss-mib", type=float, default=256)
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse_arguments()
    outcome = asyncio.run(main(arguments))
    print(json.dumps(outcome, separators=(",", ":")))
    if arguments.framemd5:
        with open(arguments.framemd5) as f:
            expected = [line.strip().split(",")[-1].strip() for line in f if line.strip() and not line.startswith("#")]
        first = outcome.get("firstSequence") or 0
        expected = expected[first:]
        frames_equal = outcome["units"] == expected and outcome.get("sequencesContiguous", False)
        rss_ok = outcome["maxRSSKiB"] < arguments.max_rss_mib * 1024
        print(
            f"viewer: {len(outcome['units'])} of {len(expected)} frames from sequence number {first}, "
            f"{'all equal' if frames_equal else 'NOT equal'} to ffmpeg's framemd5; "
            f"largest RSS {outcome['maxRSSKiB'] / 1024:.1f} MiB (bound {arguments.max_rss_mib:.0f})",
            file=sys.stderr,
        )
        sys.exit(0 if frames_equal and rss_ok else 1)
