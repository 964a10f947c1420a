"""Open an HTML file in headless Chromium: screenshot plus the page's console messages.

Used by the tests to prove the demo report renders: the screenshot must not be blank
and the console must stay silent. Chromium's ``--enable-logging=stderr`` prints every
console message and uncaught exception as a ``CONSOLE`` log line, so no DevTools-protocol
client (a websocket dependency) is needed; screenshots are read with Pillow. The report
ships no script, so any console message at all is a defect.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",  # we run as root in CI containers
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--mute-audio",
    # Nothing may be fetched: any host name resolves to nothing.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--enable-logging=stderr",
    "--v=0",
)
_CONSOLE = re.compile(r":CONSOLE(?:\(\d+\))?:?\d*\]\s*(.*)")


class BrowserError(RuntimeError):
    """Chromium is missing or failed to produce a screenshot."""


@dataclass
class PageCapture:
    """What Chromium saw: the screenshot's PNG bytes and the console messages."""

    png: bytes
    console: list[str]
    stderr: str


def find_chromium() -> str | None:
    """Path of a Chromium binary (``SFN_PATTERNS_CHROMIUM`` overrides), or None."""
    override = os.environ.get("SFN_PATTERNS_CHROMIUM")
    if override:
        return override if Path(override).exists() else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def console_messages(stderr: str) -> list[str]:
    """The console lines (console.* calls, uncaught exceptions) in Chromium's log."""
    return [match.group(1) for line in stderr.splitlines() if (match := _CONSOLE.search(line))]


def capture(
    html_path: Path, width: int = 1280, height: int = 1600, timeout: float = 90
) -> PageCapture:
    """Load ``html_path`` from file:// in headless Chromium and screenshot the viewport."""
    binary = find_chromium()
    if binary is None:
        raise BrowserError("Chromium not found: run `make bootstrap` (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="sfnp-chromium-") as scratch:
        png_path = Path(scratch) / "screenshot.png"
        command = [
            binary,
            *FLAGS,
            f"--user-data-dir={scratch}/profile",
            f"--window-size={width},{height}",
            f"--screenshot={png_path}",
            Path(html_path).resolve().as_uri(),
        ]
        env = {**os.environ, "HOME": scratch}  # keep Chromium's dot-files out of $HOME
        try:
            proc = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, env=env, check=False
            )
        except subprocess.TimeoutExpired as error:
            raise BrowserError(f"Chromium did not finish within {timeout} s") from error
        if proc.returncode != 0 or not png_path.is_file():
            raise BrowserError(
                f"Chromium exited {proc.returncode} without a screenshot:\n{proc.stderr[-3000:]}"
            )
        return PageCapture(png_path.read_bytes(), console_messages(proc.stderr), proc.stderr)


def colour_histogram(data: bytes) -> Counter[tuple[int, int, int]]:
    """How many pixels of each RGB colour a PNG screenshot has (alpha ignored).

    Pillow is imported here, not at module level: it is a test-time dependency
    (the ``dev`` extra), and the report itself needs nothing beyond Jinja.
    """
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        rgb = image.convert("RGB")
        return Counter({colour: count for count, colour in rgb.getcolors(rgb.width * rgb.height)})


def hex_rgb(colour: str) -> tuple[int, int, int]:
    """``#rrggbb`` as an RGB triple."""
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)
