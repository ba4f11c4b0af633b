"""Every grid shipped in rankuq/bench/grids/ validates and plans (no Ray, nothing written), and the
paper grids
keep the papers' settings that the issue names (three seeds or more, T = 10, M = 5)."""

from importlib import resources
from pathlib import Path

import pytest

from rankuq.bench.cli.main import main
from rankuq.bench.config.grid import load_grid
from rankuq.bench.planning.plan import plan
from rankuq.bench.planning.summary import describe
from rankuq.bench.rundir.layout import RunLayout

GRIDS = sorted(Path(str(resources.files("rankuq.bench.grids"))).glob("*.yaml"))
GRIDS_BY_NAME = {path.stem: path for path in GRIDS}
PAPER_GRIDS = ("paper000", "paper001", "paper001_l4", "paper002", "gp", "gp_fit", "fit_wikiqa", "fit_trecqa")


def test_the_paper_grids_are_shipped():
    assert {f"{name}.yaml" for name in PAPER_GRIDS} <= {path.name for path in GRIDS}


@pytest.mark.parametrize("path", GRIDS, ids=[path.stem for path in GRIDS])
def test_every_grid_validates_and_plans_without_writing(path, tmp_path):
    spec, params = load_grid(path)
    text = describe(plan(spec, params, RunLayout(tmp_path / "run")))
    cells = len(spec.conditions()) * len(params) * len(spec.seeds)
    assert text.startswith(f"grid {spec.name}: {cells} cells")
    assert "estimated work left:" in text
    assert not (tmp_path / "run").exists()
    if spec.name in PAPER_GRIDS:
        assert len(spec.seeds) >= 3 and spec.baseline in params


def test_the_paper_000_grid_keeps_the_papers_sample_counts():
    _, params = load_grid(next(path for path in GRIDS if path.stem == "paper000"))
    assert params["mc_dropout"].T == 10 and params["ensemble"].M == 5


def test_the_model_fit_grid_trains_the_whole_model_on_every_task_with_a_training_split():
    spec, params = load_grid(next(path for path in GRIDS if path.stem == "paper002"))
    assert spec.model.layers == 6 and spec.model.max_length == 128 and spec.train.negatives == 4
    assert set(spec.tasks) == {"wikiqa", "clariq", "semeval", "trecqa_clean"}
    assert {"bm25", "bert"} <= set(params)


def test_rankuq_run_plan_exits_0_on_a_paper_grid(capsys, tmp_path):
    path = next(path for path in GRIDS if path.stem == "paper001")
    assert main(["run", str(path), "--plan", "--run-dir", str(tmp_path / "run")]) == 0
    assert "grid paper001: 36 cells" in capsys.readouterr().out
    assert not (tmp_path / "run").exists()


def test_the_bert_l4_grid_is_paper001_on_four_layers():
    l2, l2_params = load_grid(GRIDS_BY_NAME["paper001"])
    l4, l4_params = load_grid(GRIDS_BY_NAME["paper001_l4"])
    assert (l2.model.layers, l4.model.layers) == (2, 4)
    assert l4.conditions() == l2.conditions() and l4.train == l2.train and l4.eval == l2.eval
    assert set(l4_params) == set(l2_params) - {"conv_knrm"} and l4_params["last_layer_mc"].T == 100
