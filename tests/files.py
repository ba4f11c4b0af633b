"""Writing a test's input file, text or bytes, as the tests of the file readers need them."""

from pathlib import Path


def write_file(path: Path, text: str | bytes) -> Path:
    """``text`` into ``path`` (bytes as they are, e.g. Latin-1 or a NUL byte); the path."""
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path
