"""Line-numbered readers of TSV and JSON-lines files, plain or gzip."""

import gzip
from pathlib import Path

import pytest

from rankuq.errors import RankuqError
from rankuq.tasks.files import MAX_LINE_CHARS, field_rows, jsonl_rows, open_text, require_text, tsv_rows


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
    [("[1, 2]", r"line 2: not a JSON object"), ('{"_id": 3}', r"line 2: missing string key '_id'")],
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


LAYOUT = "qid Q0 docno rank score tag"


def test_field_rows_drop_the_bom_skip_blank_lines_and_number_lines(tmp_path: Path) -> None:
    text = "\ufeffq1 Q0 d1 1 2.5 run\n\n  \nq1\tQ0 d2 2 1.5 run\r\nq2 Q0 d3 1 0.5 run"
    plain, packed = tmp_path / "run.txt", tmp_path / "run.txt.gz"
    plain.write_text(text, encoding="utf-8", newline="")
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        assert list(field_rows(path, LAYOUT, "fix it")) == [
            (1, ["q1", "Q0", "d1", "1", "2.5", "run"]),
            (4, ["q1", "Q0", "d2", "2", "1.5", "run"]),
            (5, ["q2", "Q0", "d3", "1", "0.5", "run"]),
        ]


def test_field_rows_name_a_line_of_the_wrong_width(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2.5 run\nq1 Q0 d2 2 1.5\n")
    with pytest.raises(RankuqError, match=rf"run\.txt: line 2: 5 fields, expected 6 \({LAYOUT}\)$"):
        list(field_rows(path, LAYOUT, "fix it"))


def test_field_rows_stop_at_a_line_past_the_bound_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d1 1 2.5 run\n" + b"\0" * (4 * MAX_LINE_CHARS))
    with pytest.raises(RankuqError, match=r"run\.txt: line 2: longer than 64 Ki characters; fix it"):
        list(field_rows(path, LAYOUT, "fix it"))
