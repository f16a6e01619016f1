"""What the hostile soaks (soak_hostile.py for `serve --http`, soak_hostile_whep.py
for `serve --whep` and `receive whip://`) share: a TCP connection from a chosen
loopback address, a request head that never ends, and the server's VmRSS sampled."""

import asyncio
import socket


async def open_socket(address, port, small_buffer=False, connect_timeout=None):
    """A non-blocking TCP connection from `address` (127.0.0.x) to 127.0.0.1:`port`;
    `small_buffer` keeps a 4 KiB receive buffer, so that a client that does not read
    stops taking bytes early."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if small_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((address, 0))
    sock.setblocking(False)
    await asyncio.wait_for(loop.sock_connect(sock, ("127.0.0.1", port)), connect_timeout)
    return sock


async def send_endless_head(sock, port, stop):
    """A request head that gains one byte a second and never ends."""
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(sock, f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
    while not stop.is_set():
        await loop.sock_sendall(sock, b"a")
        await asyncio.sleep(1)


async def sample_rss(pid, result, stop):
    """Reads /proc/PID/status every 0.25 s until `stop`: the largest VmRSS in
    result["maxRSSKiB"], and each sample in result["rssSamplesKiB"] when that list
    is there."""
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        kib = int(line.split()[1])
                        if "rssSamplesKiB" in result:
                            result["rssSamplesKiB"].append(kib)
                        result["maxRSSKiB"] = max(result["maxRSSKiB"], kib)
        except OSError:
            return
        await asyncio.sleep(0.25)
