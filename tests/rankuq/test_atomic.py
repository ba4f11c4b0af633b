"""Whole-or-nothing writes: a folder appears only once its block ends without an error."""

import pytest

from rankuq.atomic import atomic_write, staged_folder


def test_a_staged_folder_appears_whole_when_the_block_ends(tmp_path):
    target = tmp_path / "study"
    (tmp_path / ".study.tmp").mkdir()
    (tmp_path / ".study.tmp" / "left-by-a-killed-writer").write_text("x")
    with staged_folder(target) as staging:
        (staging / "metrics.json").write_text("{}")
        assert not target.exists()
    assert sorted(p.name for p in target.iterdir()) == ["metrics.json"]
    assert not (tmp_path / ".study.tmp").exists()


def test_a_failed_block_leaves_no_target(tmp_path):
    target = tmp_path / "model"
    with pytest.raises(RuntimeError, match="killed"), staged_folder(target) as staging:
        (staging / "model.pt").write_text("half")
        raise RuntimeError("killed")
    assert not target.exists()


def test_atomic_write_replaces_the_whole_file(tmp_path):
    path = tmp_path / "index.json"
    path.write_text("old")
    atomic_write(path, "new")
    assert path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["index.json"]
