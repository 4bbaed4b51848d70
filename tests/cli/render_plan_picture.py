#!/usr/bin/env python3
"""Looks at `pgroups plan --html` in a real browser: Debian's headless Chromium renders the
page to a PNG, which must not be blank: it is decoded here (PNG + zlib, standard library)
and must show many colours, ink on a good share of it, and the palette's group colours.
Exits 77 (skipped) when Chromium is not installed.

usage: render_plan_picture.py PGROUPS WORKDIR [plan arguments...]
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib


def decode_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, header
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            upper_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - upper_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else upper_left)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def main():
    pgroups, workdir, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("SKIPPED: Chromium is not installed (apt-get install chromium; scripts/install-deps.sh does)")
        return 77
    os.makedirs(workdir, exist_ok=True)
    html = os.path.abspath(os.path.join(workdir, "plan.html"))
    png = os.path.abspath(os.path.join(workdir, "plan.png"))
    subprocess.run([pgroups, "plan", *args, "--html", html], check=True, stdout=subprocess.DEVNULL)
    if os.path.exists(png):
        os.remove(png)
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={os.path.abspath(workdir)}/chromium-profile", f"--screenshot={png}",
                    "--window-size=1400,1000", "file://" + html],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    width, height, channels, rows = decode_png(png)
    colours, ink = set(), 0
    for row in rows[::2]:
        for x in range(0, width * channels, 2 * channels):
            pixel = row[x:x + 3]
            colours.add(pixel)
            ink += pixel != b"\xff\xff\xff"
    samples = (height // 2 + height % 2) * ((width + 1) // 2)
    palette = {bytes.fromhex(c) for c in ("8dd3c7", "ffffb3", "bebada", "fb8072", "80b1d3")}
    shown = len(palette & colours)
    print(f"{png}: {width}x{height}, {len(colours)} colours, {100 * ink / samples:.0f}% not white, "
          f"{shown} of 5 group colours seen")
    problems = []
    if (width, height) != (1400, 1000):
        problems.append(f"size {width}x{height}, expected the 1400x1000 window")
    if len(colours) < 20:
        problems.append("fewer than 20 colours: the page looks blank")
    if ink < samples // 10:
        problems.append("less than a tenth of the page is drawn on")
    if shown < 4:
        problems.append("the group colours are missing")
    for line in problems:
        print("FAIL: " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
