"""Line-numbered readers of TSV and JSON-lines files, plain or gzip."""

import gzip
from pathlib import Path

import pytest

from rankuq.errors import RankuqError
from rankuq.tasks.files import jsonl_rows, open_text, require_text, tsv_rows


def rows_of(path: Path, header: tuple[str, ...] | None = None) -> list[tuple[int, list[str]]]:
    with open_text(path, "fix it") as handle:
        return list(tsv_rows(handle, path, header))


def test_tsv_plain_and_gzip_skip_blank_lines(tmp_path: Path) -> None:
    text = 'a\tb\r\n1\t"quoted\r\n\r\n2\tx\r\n'
    plain, packed = tmp_path / "f.tsv", tmp_path / "f.tsv.gz"
    plain.write_text(text, newline="")
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        assert rows_of(path, ("a", "b")) == [(2, ["1", '"quoted']), (4, ["2", "x"])]


def test_tsv_header_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "f.tsv"
    path.write_text("a\tc\n1\t2\n")
    with pytest.raises(RankuqError, match=r"f\.tsv: line 1: header is \['a', 'c'\], expected .*a b"):
        rows_of(path, ("a", "b"))


def test_undecodable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f.tsv"
    path.write_bytes(b"a\tb\n\xff\xfe\n")
    with pytest.raises(RankuqError, match=r"f\.tsv: not a readable UTF-8 text file .*; fix it"):
        rows_of(path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1, 2]", r"line 2: not a JSON object"),
        ('{"_id": 3}', r"line 2: '_id' is int \(3\), expected a string"),
        ('{"text": "a"}', r"line 2: missing string key '_id'"),
    ],
)
def test_jsonl_errors(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text(f'{{"_id": "a"}}\n{line}\n')
    with open_text(path, "fix it") as handle, pytest.raises(RankuqError, match=message):
        list(jsonl_rows(handle, path, ["_id"]))


def test_require_text(tmp_path: Path) -> None:
    assert require_text(tmp_path, 3, "query", "  hi ") == "hi"
    with pytest.raises(RankuqError, match=r"line 3: empty query; fill it in or remove the line"):
        require_text(tmp_path, 3, "query", " \t")
