#!/usr/bin/env python3
"""Rewrites log2_max_mv_length_horizontal in every SPS of an H.264 Annex-B
stream (H.264 7.3.2.1.1 and E.1.1), leaving everything else as it was.

usage: set-log2-max-mv-length.py IN.h264 OUT.h264 VALUE

Handles the SPS fields x264 writes: any profile with chroma_format_idc and
bit depths, no scaling matrices, POC types 0-2, cropping, and a VUI with
aspect ratio, overscan, video signal, chroma location, timing and bitstream
restriction (no HRD parameters).
"""
import sys


class Bits:
    def __init__(self, data):
        self.bits = "".join(f"{b:08b}" for b in data)
        self.pos = 0

    def u(self, n):
        value = int(self.bits[self.pos:self.pos + n] or "0", 2)
        self.pos += n
        return value

    def ue(self):
        zeros = 0
        while self.bits[self.pos] == "0":
            zeros += 1
            self.pos += 1
        self.pos += 1
        return (1 << zeros) - 1 + (self.u(zeros) if zeros else 0)

    def se(self):
        k = self.ue()
        return (k + 1) // 2 if k & 1 else -(k // 2)


def ue_bits(value):
    code = value + 1
    return "0" * (code.bit_length() - 1) + format(code, "b")


def unescape(data):
    out, zeros = bytearray(), 0
    for b in data:
        if zeros >= 2 and b == 3:
            zeros = 0
            continue
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


def escape(data):
    out, zeros = bytearray(), 0
    for b in data:
        if zeros >= 2 and b <= 3:
            out.append(3)
            zeros = 0
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


def rewrite_sps(nal, value):
    rbsp = unescape(nal[1:])
    r = Bits(rbsp)
    profile = r.u(8)
    r.u(16)
    r.ue()
    if profile in (100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135):
        if r.ue() == 3:
            r.u(1)
        r.ue()
        r.ue()
        r.u(1)
        assert r.u(1) == 0, "scaling matrices are not handled"
    r.ue()
    poc = r.ue()
    if poc == 0:
        r.ue()
    elif poc == 1:
        r.u(1)
        r.se()
        r.se()
        for _ in range(r.ue()):
            r.se()
    r.ue()
    r.u(1)
    r.ue()
    r.ue()
    if r.u(1) == 0:
        r.u(1)
    r.u(1)
    if r.u(1):
        for _ in range(4):
            r.ue()
    assert r.u(1) == 1, "no VUI"
    if r.u(1) and r.u(8) == 255:
        r.u(32)
    if r.u(1):
        r.u(1)
    if r.u(1):
        r.u(4)
        if r.u(1):
            r.u(24)
    if r.u(1):
        r.ue()
        r.ue()
    if r.u(1):
        r.u(65)
    assert r.u(1) == 0 and r.u(1) == 0, "HRD parameters are not handled"
    r.u(1)
    assert r.u(1) == 1, "no bitstream restriction"
    r.u(1)
    r.ue()
    r.ue()
    start = r.pos
    r.ue()
    bits = r.bits[:start] + ue_bits(value) + r.bits[r.pos:]
    bits = bits.rstrip("0")[:-1]  # drop rbsp_trailing_bits
    bits += "1"
    bits += "0" * (-len(bits) % 8)
    body = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    return nal[:1] + escape(body)


def main():
    source, target, value = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(source, "rb").read()
    starts = []
    i = 0
    while True:
        i = data.find(b"\x00\x00\x01", i)
        if i < 0:
            break
        starts.append(i + 3)
        i += 3
    out = bytearray()
    for n, start in enumerate(starts):
        end = starts[n + 1] - 3 if n + 1 < len(starts) else len(data)
        nal = data[start:end]
        if n + 1 < len(starts):
            while nal.endswith(b"\x00"):
                nal = nal[:-1]
        if nal[0] & 0x1F == 7:
            nal = rewrite_sps(nal, value)
        out += b"\x00\x00\x00\x01" + nal
    open(target, "wb").write(out)


main()
