"""Render an `ocsplan report` HTML page to a PNG with headless Chromium (no network).

    python scripts/render_report.py report.html report.png [--width 1200] [--height 1600] [--whole]

``--whole`` renders into a window of ``--max-height`` pixels and crops the blank rows below the
page's last content (Chromium's ``--screenshot`` takes the window, not the page).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--height", type=int, default=1600)
    parser.add_argument("--whole", action="store_true", help="the whole page, cropped below its content")
    parser.add_argument("--max-height", type=int, default=16000)
    args = parser.parse_args()
    height = args.max_height if args.whole else args.height
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("render_report: chromium not found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as profile:
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                   "--no-first-run", f"--user-data-dir={profile}", f"--screenshot={args.png.resolve()}",
                   f"--window-size={args.width},{height}", args.html.resolve().as_uri()]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0 or not args.png.exists():
        print(f"render_report: chromium failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return 1
    if args.whole:
        _crop(args.png)
    return 0


def _crop(png: Path, margin: int = 24) -> None:
    """Cut the rows below the last one that differs from the page's background (bottom-left pixel),
    and store the page in 256 colours."""
    import numpy as np
    from PIL import Image

    with Image.open(png) as image:
        pixels = np.asarray(image.convert("RGB"))
        background = pixels[-1, 0]
        busy = np.flatnonzero((pixels != background).any(axis=(1, 2)))
        bottom = min(len(pixels), (int(busy[-1]) + 1 + margin) if len(busy) else len(pixels))
        cropped = image.convert("RGB").crop((0, 0, image.width, bottom))
    # 256 colours: the page is flat colour and text, a quarter of the bytes
    cropped.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(png, optimize=True)


if __name__ == "__main__":
    sys.exit(main())
