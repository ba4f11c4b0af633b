"""The GP heads rank where they were trained: gp.yaml's ClariQ recipe (real ClariQ, the real MiniLM,
real Ray), one seed, each head well above BM25 on the same R_10 lists.

Slow (up to 8 epochs with early stopping, as gp.yaml: about 15 minutes on 2 idle cores): `pytest -m
slow`. The heads that learned almost nothing (R@1 0.25-0.28 where BM25 has 0.41, issue 47) fail it, and
so did gpf's seed 0 selected on balanced-pair dev lists (its first epoch kept: R@1 0.426, BM25's).
"""

from pathlib import Path

import pytest
import yaml

from rankuq.bench.run.grid_run import GridRequest, grid_run

GRIDS = Path(__file__).parents[3] / "rankuq" / "bench" / "grids"
MARGIN = 0.10  # R@1 above BM25's: the old heads were 0.13-0.16 below it


@pytest.fixture(scope="module")
def board(ray_session, tmp_path_factory: pytest.TempPathFactory):
    grid = yaml.safe_load((GRIDS / "gp.yaml").read_text())
    grid |= {
        "name": "gp-heads",
        "shifts": grid["shifts"][:1],  # clariq in domain
        "methods": {"bm25": {}, "sngp": {}, "gpf": grid["methods"]["gpf"], "pg_gp": {}},
        "seeds": [0],
        "baseline": "bm25",
        "eval": {"probes": []},
    }
    request = GridRequest(grid, tmp_path_factory.mktemp("gp-heads"), source="gp.yaml's ClariQ condition")
    return grid_run(request).board.set_index("method")


@pytest.mark.slow
@pytest.mark.parametrize("head", ["sngp", "gpf", "pg_gp"])
def test_a_gp_head_ranks_well_above_bm25_where_it_was_trained(board, head: str):
    assert board.loc[head, "R@1"] >= board.loc["bm25", "R@1"] + MARGIN
    assert board.loc[head, "AP"] > board.loc["bm25", "AP"]
