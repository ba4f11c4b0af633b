"""Headless Chromium as the tests that look at a page drive it (the report, the docs site, MLflow's UI):
no network use of its own, a profile of the test's own when given."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL = "apt-get update && apt-get install -y --no-install-recommends chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium(
    *args: str, size: tuple[int, int] = (1280, 2000), profile: Path | None = None, timeout: int = 120
) -> str:
    """Chromium's stdout for ``args`` (``--dump-dom URL``, ``--screenshot=PNG URL``) in a window of
    ``size`` (width, height) pixels."""
    binary = shutil.which("chromium")
    if binary is None:
        pytest.fail(f"chromium is not installed: run `{INSTALL}` (with sudo if not root)", pytrace=False)
    flags = [*FLAGS, f"--window-size={size[0]},{size[1]}"]
    if profile is not None:
        flags.append(f"--user-data-dir={profile}")
    done = subprocess.run(
        [binary, *flags, *args], capture_output=True, text=True, timeout=timeout, check=True
    )
    return done.stdout


def text_of(dom: str) -> str:
    """A dumped DOM's text, without its styles and scripts, blanks collapsed."""
    dom = re.sub(r"<(style|script)[^>]*>.*?</\1>", " ", dom, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", dom).split())
