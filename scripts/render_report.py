"""Render an `ocsplan report` HTML page to a PNG with headless Chromium (no network).

    python scripts/render_report.py report.html report.png [--width 1200] [--height 1600]
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
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("render_report: chromium not found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as profile:
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                   "--no-first-run", f"--user-data-dir={profile}", f"--screenshot={args.png.resolve()}",
                   f"--window-size={args.width},{args.height}", args.html.resolve().as_uri()]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0 or not args.png.exists():
        print(f"render_report: chromium failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
