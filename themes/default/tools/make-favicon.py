#!/usr/bin/env python3
"""Writes the default theme's favicons: static/favicon.svg and static/favicon.ico.

The icon is a GPU chip (a square with pins on each side) in white on the
theme's accent blue. The ICO holds 16, 32 and 48 pixel images as 32-bit BMPs,
drawn from the same geometry with 4x4 supersampling; no imaging library needed.
Run it from anywhere: python3 themes/default/tools/make-favicon.py
"""

import os
import struct

ACCENT = (0x0B, 0x5F, 0xCA)
WHITE = (0xFF, 0xFF, 0xFF)
HERE = os.path.dirname(os.path.abspath(__file__))
STATIC = os.path.join(HERE, "..", "static")

# Geometry on a 32-unit canvas.
RADIUS = 7  # background corner radius
CHIP = (9, 9, 23, 23)  # the chip body
CORE = (13, 13, 19, 19)  # the die, cut out of the body
PINS = [12, 16, 20]  # pin centres along each side (x or y)
PIN_W, PIN_LEN = 2, 4


def inside_rounded(x, y):
    r = RADIUS
    cx = min(max(x, r), 32 - r)
    cy = min(max(y, r), 32 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def in_rect(x, y, rect):
    x0, y0, x1, y1 = rect
    return x0 <= x < x1 and y0 <= y < y1


def white_at(x, y):
    if in_rect(x, y, CHIP) and not in_rect(x, y, CORE):
        return True
    for p in PINS:
        pin = (p - PIN_W / 2, CHIP[1] - PIN_LEN, p + PIN_W / 2, CHIP[1])
        if in_rect(x, y, pin) or in_rect(x, y, (pin[0], CHIP[3], pin[2], CHIP[3] + PIN_LEN)):
            return True
        side = (CHIP[0] - PIN_LEN, p - PIN_W / 2, CHIP[0], p + PIN_W / 2)
        if in_rect(x, y, side) or in_rect(x, y, (CHIP[2], side[1], CHIP[2] + PIN_LEN, side[3])):
            return True
    return False


def pixel(size, px, py):
    """RGBA of one pixel at `size`, averaged over 4x4 samples."""
    n, acc, cover = 4, [0, 0, 0], 0
    for sy in range(n):
        for sx in range(n):
            x = (px + (sx + 0.5) / n) * 32 / size
            y = (py + (sy + 0.5) / n) * 32 / size
            if not inside_rounded(x, y):
                continue
            cover += 1
            colour = WHITE if white_at(x, y) else ACCENT
            for i in range(3):
                acc[i] += colour[i]
    if cover == 0:
        return (0, 0, 0, 0)
    return tuple(round(c / cover) for c in acc) + (round(255 * cover / (n * n)),)


def bmp(size):
    """A 32-bit BMP image for an ICO entry: header, bottom-up BGRA, AND mask."""
    header = struct.pack("<IiiHHIIiiII", 40, size, size * 2, 1, 32, 0, 0, 0, 0, 0, 0)
    rows = []
    for py in reversed(range(size)):
        row = b""
        for px in range(size):
            r, g, b, a = pixel(size, px, py)
            row += bytes((b, g, r, a))
        rows.append(row)
    mask_row = ((size + 31) // 32) * 4
    mask = b"\0" * (mask_row * size)
    return header + b"".join(rows) + mask


def ico(sizes):
    images = [bmp(s) for s in sizes]
    out = struct.pack("<HHH", 0, 1, len(images))
    offset = 6 + 16 * len(images)
    for size, data in zip(sizes, images):
        out += struct.pack("<BBBBHHII", size % 256, size % 256, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
    return out + b"".join(images)


def svg():
    body = f'<rect x="{CHIP[0]}" y="{CHIP[1]}" width="{CHIP[2] - CHIP[0]}" height="{CHIP[3] - CHIP[1]}" fill="#fff"/>'
    for p in PINS:
        x = p - PIN_W / 2
        body += f'<rect x="{x:g}" y="{CHIP[1] - PIN_LEN}" width="{PIN_W}" height="{PIN_LEN * 2 + CHIP[3] - CHIP[1]}" fill="#fff"/>'
        body += f'<rect x="{CHIP[0] - PIN_LEN}" y="{x:g}" width="{PIN_LEN * 2 + CHIP[2] - CHIP[0]}" height="{PIN_W}" fill="#fff"/>'
    body += f'<rect x="{CORE[0]}" y="{CORE[1]}" width="{CORE[2] - CORE[0]}" height="{CORE[3] - CORE[1]}" fill="#0b5fca"/>'
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
        f'<rect width="32" height="32" rx="{RADIUS}" fill="#0b5fca"/>{body}</svg>\n'
    )


if __name__ == "__main__":
    with open(os.path.join(STATIC, "favicon.ico"), "wb") as f:
        f.write(ico([16, 32, 48]))
    with open(os.path.join(STATIC, "favicon.svg"), "w") as f:
        f.write(svg())
