"""The built-in grid on real WikiQA with the real MiniLM backbone (10 minutes on 2 idle cores).

Slow: run with `pytest -m slow`. The README's benchmark section holds its measured figures.
"""

import pytest

from rankuq.bench.config.grid import load_grid
from rankuq.bench.run.grid_run import GridRequest, grid_run


@pytest.mark.slow
def test_default_grid_bert_beats_bm25_and_is_calibrated_better_than_chance(ray_session, tmp_path):
    spec, _ = load_grid()
    board = grid_run(GridRequest(run_dir=tmp_path)).board.set_index("method")
    for measure in ("R@1", "AP"):
        assert board.loc["bert", measure] > board.loc["bm25", measure]
        assert board.loc["bm25", f"{measure} p"] < 0.01  # paired t-test over the test queries
    assert board.loc["bert", "AP"] >= 0.65
    for method in ("bert", "last_layer_mc", "temperature"):
        assert 0 <= board.loc[method, "ECE"] < 0.5
        assert board.loc[method, "seeds"] == len(spec.seeds)
