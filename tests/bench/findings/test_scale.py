"""The report's header tables (bench.findings.scale): what each run ran (seeds, M and T, test queries
per condition, training negatives, the time it records) and what stands in for the papers' setup."""

import json
from dataclasses import replace
from pathlib import Path

from rankuq.bench.config.grid import load_grid, parse_grid
from rankuq.bench.findings.claims import CLAIMS, COST
from rankuq.bench.findings.claims.setups import SETUPS, TASKS
from rankuq.bench.findings.scale import model_text, samples_text, scale_table, setups_table
from rankuq.bench.rundir.compute_log import cpu_name, start, timed_invocation

GRIDS = Path(__file__).parents[3] / "rankuq" / "bench" / "grids"


def test_the_scale_table_says_what_a_run_ran(run_of, values, tmp_path):
    records = {
        ("c", "bert", "AP"): [values(0.7, 0.05, s) for s in range(2)],
        ("d", "bert", "AP"): [values(0.7, 0.05, 10 + s) for s in range(2)],
    }
    spec, _ = parse_grid(
        {
            "name": "g",
            "tasks": ["wikiqa"],
            "methods": {"bm25": {}, "bert": {}, "ensemble": {"M": 3}, "mc_dropout": {}},
            "seeds": [0, 4],
            "train": {"negatives": 4, "max_queries": 250},
            "model": {"max_length": 48},
        },
        "test grid",
    )
    run = replace(run_of(records), spec=spec, folder=tmp_path)
    [line] = [line for line in scale_table([run]) if line.startswith(f"| {tmp_path} |")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1:] == [
        "g",
        "MiniLM-L6 (the whole all-MiniLM-L6-v2: 6 layers, 384 hidden)",
        "48",
        "at most 250",
        "4",
        "up to 1",
        "2 (0, 4)",
        "ensemble M=3, mc_dropout T=10",  # the grid's M, the method's default T
        "200 in each of 2 conditions",
        "CPU",
        "not recorded",
    ]
    (tmp_path / "machine.json").write_text(json.dumps({"device": "cuda", "wall_s": 5400}))
    assert scale_table([run])[-2].endswith("| wall 1.50 h |")
    with timed_invocation(tmp_path, start()):  # the run's own invocations come first
        pass
    assert scale_table([run])[-2].endswith(" cores (" + cpu_name() + ") (1 invocation), wall 1.50 h |")


def test_the_paper_grids_say_which_model_and_data_stand_in_for_the_papers():
    """Every paper grid of the registry declares the papers' model and datasets once; 004's GPF-BERT
    is described by its own size (BERT-base, 12 layers) beside this grid's (MiniLM-L6); the tasks are
    read from the run, each by its report name."""
    grids = {claim.grid for claim in CLAIMS if claim.paper is not None and claim.grid != COST}
    assert grids <= set(SETUPS)
    assert "12 layers" in SETUPS["gp"].model and "768 hidden" in SETUPS["gp"].model
    assert "MSDialog" in SETUPS["gp"].datasets and "ClariQ" in SETUPS["gp"].stand_in
    spec, _ = load_grid(GRIDS / "paper001.yaml")
    assert model_text(spec) == "MiniLM-L2 (the first 2 of the 6 layers of all-MiniLM-L6-v2)"
    assert "last_layer_mc T=100" in samples_text(spec)


def test_the_setups_table_sets_each_grid_beside_the_papers(run_of, values):
    from rankuq.bench.config.grid import Side

    spec, _ = load_grid(GRIDS / "gp.yaml")
    run = replace(run_of({}), spec=spec)
    run.trained.update({"clariq": Side(task="clariq"), "semeval-to-clariq": Side(task="semeval")})
    run.tested.update({"clariq": ("clariq", "bm25"), "semeval-to-clariq": ("clariq", "bm25")})
    [line] = [line for line in setups_table([run]) if line.startswith("| gp |")]
    assert (
        f"| MiniLM-L6 (the whole all-MiniLM-L6-v2: 6 layers, 384 hidden) | {SETUPS['gp'].datasets} |" in line
    )
    assert f"| {TASKS['clariq']}, {TASKS['semeval']} |" in line
    assert setups_table([replace(run, spec=spec.model_copy(update={"name": "fit_wikiqa"}))]) == []
