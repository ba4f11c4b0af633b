"""The installed `rankuq` console script (each verb: tests/bench/cli/test_<verb>.py)."""

import subprocess
import sys
from pathlib import Path


def test_the_installed_console_script_runs():
    script = Path(sys.executable).with_name("rankuq")
    done = subprocess.run([str(script), "tasks"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "wikiqa" in done.stdout
