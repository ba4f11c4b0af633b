"""`rankuq tasks` and `rankuq methods`: the registries listed."""

import os
import subprocess
import sys
import time

from rankuq.bench.cli.main import main

RANKUQ = [sys.executable, "-m", "rankuq.bench.cli"]


def test_tasks_and_methods_list_the_registries(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the methods' listing is kept there
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("wikiqa", "trecqa_clean", "semeval_graded", "beir/<name>", "run"))
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "mc_dropout" in out and "T=10" in out and "M=5" in out


def test_methods_are_listed_again_in_under_two_seconds_without_importing_torch(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    first = subprocess.run([*RANKUQ, "methods"], env=env, capture_output=True, text=True, check=True)
    start = time.perf_counter()
    again = subprocess.run([*RANKUQ, "methods"], env=env, capture_output=True, text=True, check=True)
    assert time.perf_counter() - start < 2 and again.stdout == first.stdout and "mc_dropout" in first.stdout
    check = (
        "from rankuq.bench.cli.main import main; import sys; main(['methods']); print('torch' in sys.modules)"
    )
    listed = subprocess.run(
        [sys.executable, "-c", check], env=env, capture_output=True, text=True, check=True
    )
    assert listed.stdout.splitlines()[-1] == "False"


def test_the_methods_listing_is_made_anew_when_rankuqs_top_level_modules_change(monkeypatch, tmp_path):
    """The methods' parameters come from rankuq's top level too (backbone's ModelConfig, registry):
    a changed file there changes the cache key, as a changed method file does."""
    import rankuq
    from rankuq.bench.cli.listing import _methods_key

    module = tmp_path / "backbone.py"
    module.write_text("MAX_LENGTH = 1\n")
    monkeypatch.setattr(rankuq, "__path__", [*rankuq.__path__, str(tmp_path)])
    before = _methods_key()
    assert _methods_key() == before
    module.write_text("MAX_LENGTH = 512\n")
    assert _methods_key() != before
