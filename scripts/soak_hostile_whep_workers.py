"""The hostile workers of scripts/soak_hostile_whep.py: what each kind sends
to a WHEP/WHIP endpoint's HTTP port (from a loopback address other than
127.0.0.1) or its media port, and the tally of what came back.
"""

import asyncio
import binascii
import os
import random
import re
import socket
import struct

from soak_common import open_socket, send_endless_head

KINDS = [
    "idle", "half-head", "slow-body", "offer", "offer-guess", "stats", "delete-guess", "patch-guess",
    "two-lengths", "udp-junk", "stun-guess",
]
UDP_KINDS = {"udp-junk", "stun-guess"}


class Tally:
    def __init__(self):
        self.kinds = {kind: {"connections": 0, "statuses": {}} for kind in KINDS}
        for kind in UDP_KINDS:
            self.kinds[kind] = {"datagrams": 0, "replies": 0}
        self.ids_seen = set()

    def opened(self, kind):
        self.kinds[kind]["connections"] += 1

    def status(self, kind, status):
        statuses = self.kinds[kind]["statuses"]
        key = "no answer" if status is None else str(status)
        statuses[key] = statuses.get(key, 0) + 1


def make_offer():
    """A real recvonly offer from aiortc (its ICE never starts)."""
    from aiortc import RTCPeerConnection

    async def offer():
        pc = RTCPeerConnection()
        pc.addTransceiver("video", direction="recvonly")
        await pc.setLocalDescription(await pc.createOffer())
        sdp = pc.localDescription.sdp
        await pc.close()
        return sdp

    return asyncio.run(offer())


def stun_guess():
    """A binding request with a guessed USERNAME, a random MESSAGE-INTEGRITY and a valid FINGERPRINT."""
    username = (os.urandom(4).hex() + ":" + os.urandom(4).hex()).encode()
    attributes = struct.pack(">HH", 0x0006, len(username)) + username + b"\0" * (-len(username) % 4)
    attributes += struct.pack(">HH", 0x0008, 20) + os.urandom(20)
    header = struct.pack(">HHI", 0x0001, len(attributes) + 8, 0x2112A442) + os.urandom(12)
    crc = binascii.crc32(header + attributes) ^ 0x5354554E
    return header + attributes + struct.pack(">HHI", 0x8028, 4, crc)


async def read_response(sock):
    """The status and body of the answer, or (None, b"") when the connection ended first."""
    loop = asyncio.get_running_loop()
    data = b""
    while True:
        try:
            chunk = await asyncio.wait_for(loop.sock_recv(sock, 65536), 15)
        except (OSError, asyncio.TimeoutError):
            break
        if not chunk:
            break
        data += chunk
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", data)
    if not match:
        return None, b""
    return int(match.group(1)), data.partition(b"\r\n\r\n")[2]


def request_for(kind, port, offer, path):
    head = f"Host: 127.0.0.1:{port}\r\n"
    if kind in ("offer", "offer-guess"):
        guess = f"Authorization: Bearer {os.urandom(8).hex()}\r\n" if kind == "offer-guess" else ""
        body = offer.encode()
        return (f"POST {path} HTTP/1.1\r\n{head}{guess}Content-Type: application/sdp\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    if kind == "stats":
        return f"GET /whep/stats HTTP/1.1\r\n{head}\r\n".encode()
    if kind in ("delete-guess", "patch-guess"):
        method = "DELETE" if kind == "delete-guess" else "PATCH"
        guess = f"Authorization: Bearer {os.urandom(8).hex()}\r\n" if random.random() < 0.5 else ""
        return f"{method} {path}/{os.urandom(16).hex()} HTTP/1.1\r\n{head}{guess}Content-Length: 0\r\n\r\n".encode()
    if kind == "two-lengths":
        body = offer.encode()
        return (f"POST {path} HTTP/1.1\r\n{head}Content-Type: application/sdp\r\nContent-Length: {len(body)}\r\n"
                f"Content-Length: 4\r\n\r\n").encode() + body
    raise ValueError(kind)


async def hostile_tcp(kind, address, port, offer, path, tally, stop, pause):
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        sock = None
        try:
            sock = await open_socket(address, port, connect_timeout=10)
            tally.opened(kind)
            if kind == "idle":
                while not stop.is_set():
                    try:
                        chunk = await asyncio.wait_for(loop.sock_recv(sock, 4096), 1)
                    except asyncio.TimeoutError:
                        continue
                    if not chunk:
                        break
            elif kind == "half-head":
                await send_endless_head(sock, port, stop)
            elif kind == "slow-body":
                await loop.sock_sendall(
                    sock,
                    f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/sdp\r\n"
                    "Content-Length: 100000\r\n\r\n".encode())
                while not stop.is_set():
                    await loop.sock_sendall(sock, b"b")
                    await asyncio.sleep(0.5)
            else:
                await loop.sock_sendall(sock, request_for(kind, port, offer, path))
                status, body = await read_response(sock)
                tally.status(kind, status)
                if kind == "stats":
                    tally.ids_seen.update(re.findall(rb"[0-9a-f]{32}", body))
                await asyncio.sleep(pause)
        except (OSError, asyncio.TimeoutError):
            if kind not in ("idle", "half-head", "slow-body") and not stop.is_set():
                tally.status(kind, None)
        finally:
            if sock is not None:
                sock.close()
        await asyncio.sleep(0.05)


async def hostile_udp(kind, address, media_port, tally, stop, per_second):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((address, 0))
    sock.setblocking(False)
    burst = max(1, per_second // 10)
    try:
        while not stop.is_set():
            for _ in range(burst):
                if kind == "udp-junk":
                    datagram = os.urandom(random.randint(1, 1200))
                else:
                    datagram = stun_guess()
                try:
                    sock.sendto(datagram, ("127.0.0.1", media_port))
                    tally.kinds[kind]["datagrams"] += 1
                except OSError:
                    pass
            while True:
                try:
                    sock.recv(2048)
                    tally.kinds[kind]["replies"] += 1
                except OSError:
                    break
            await asyncio.sleep(0.1)
    finally:
        sock.close()
