"""Writes that readers see whole or not at all: a killed run leaves no half-written file or folder."""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def atomic_write(path: Path, text: str) -> None:
    """Readers see the old file or the whole new one, never a part."""
    staging = path.with_name(f".{path.name}.tmp")
    try:
        staging.write_text(text)
        os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)


@contextmanager
def staged_folder(target: Path) -> Iterator[Path]:
    """An empty folder beside ``target`` to write into, renamed to ``target`` when the block ends
    without an error; what a killed writer leaves is cleared by the next attempt."""
    staging = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    yield staging
    os.replace(staging, target)
