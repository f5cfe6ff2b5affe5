"""Driving the UI in the browser, and checking screenshots without an image library."""

from __future__ import annotations

import struct
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class UI:
    """A page of the app in the shared browser, authenticated with ``token``."""

    def __init__(self, driver: Any, base: str, shots: Path) -> None:
        self.d = driver
        self.base = base
        self.shots = shots

    def open(self, route: str, token: str | None) -> None:
        """Load the app fresh (a real page load) at ``#route`` with ``token`` in sessionStorage."""
        self.d.get(f"{self.base}/healthz")  # any page of the origin, to reach its sessionStorage
        if token is None:
            self.d.execute_script("sessionStorage.clear()")
        else:
            self.d.execute_script("sessionStorage.setItem('wmap.token', arguments[0])", token)
        self.d.get(f"{self.base}/#{route}")

    def js(self, script: str, *args: Any) -> Any:
        return self.d.execute_script(script, *args)

    def wait(self, check: Callable[[], T], what: str, timeout: float = 30.0) -> T:
        deadline = time.monotonic() + timeout
        last: Any = None
        while True:
            try:
                last = check()
                if last:
                    return last
            except Exception as exc:  # a stale element while the page re-renders
                last = exc
            if time.monotonic() > deadline:
                shot = self.screenshot(f"timeout-{int(time.time() * 1000)}")
                page = self.js("return document.body.innerText.slice(0, 1500)")
                raise AssertionError(
                    f"timed out waiting for {what} (last: {last!r}); screenshot {shot}\n"
                    f"page text:\n{page}\nbrowser log:\n{self.console()}"
                )
            time.sleep(0.1)

    def texts(self, css: str) -> list[str]:
        return list(
            self.js("return [...document.querySelectorAll(arguments[0])].map(e => e.textContent.trim())", css)
        )

    def console(self) -> str:
        try:
            return "\n".join(f"{e['level']}: {e['message']}" for e in self.d.get_log("browser"))
        except Exception:
            return ""

    def screenshot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.d.save_screenshot(str(path))
        return path


# ------------------------------------------------------------------------------ PNG checks


@dataclass
class Image:
    width: int
    height: int
    pixels: list[tuple[int, int, int]]

    def at(self, x: int, y: int) -> tuple[int, int, int]:
        return self.pixels[y * self.width + x]


def read_png(path: Path) -> Image:
    """Decode an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = 0
    channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and color in (2, 6), (depth, color, interlace)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytearray] = []
    prev = bytearray(stride)
    i = 0
    for _ in range(height):
        ftype = raw[i]
        line = bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 0xFF
            elif ftype == 2:
                line[x] = (line[x] + b) & 0xFF
            elif ftype == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 0xFF
        rows.append(line)
        prev = line
    pixels = [(row[x], row[x + 1], row[x + 2]) for row in rows for x in range(0, stride, channels)]
    return Image(width, height, pixels)


def check_screenshot(path: Path, *, colours: dict[str, tuple[int, int, int]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """Not blank: a real size, many colours, no single colour covering almost everything, the
    dark top bar where it belongs, and each of ``colours`` (name -> RGB) present somewhere."""
    size = path.stat().st_size
    img = read_png(path)
    assert size > 10_000, f"{path} is only {size} bytes"
    assert img.width >= 1000 and img.height >= 600, (img.width, img.height)
    quant = Counter((r >> 4, g >> 4, b >> 4) for r, g, b in img.pixels[::7])
    _, top_n = quant.most_common(1)[0]
    share = top_n / sum(quant.values())
    assert len(quant) >= 12, f"{path}: only {len(quant)} colours"
    assert share < 0.97, f"{path}: one colour covers {share:.0%}"
    bar = img.at(5, 5)
    assert bar == (0x16, 0x20, 0x33), f"{path}: top bar pixel {bar}"
    exact = set(img.pixels)
    for name, rgb in dict(colours).items():
        assert rgb in exact, f"{path}: colour {name} {rgb} not found"
    return {"bytes": size, "size": (img.width, img.height), "colours": len(quant), "top_share": share}
