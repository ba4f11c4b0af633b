"""Run directories read for the findings (bench.findings.runs): the kind of each condition, what a
folder that is not a finished run gives, and the per-query records looked up by cell."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.config.grid import load_grid, parse_grid
from rankuq.bench.findings.conditions import condition_kind
from rankuq.bench.findings.runs import read_finished_run
from rankuq.errors import RankuqError

GRIDS = Path(__file__).parents[3] / "rankuq" / "bench" / "grids"


def test_the_kinds_of_the_paper_000_conditions():
    spec, _ = load_grid(GRIDS / "paper000.yaml")
    kinds = {shift.label(): condition_kind(spec, shift) for shift in spec.conditions()}
    assert kinds["clariq"] == "in-domain"
    assert kinds["wikiqa-to-clariq"] == "cross-domain" and kinds["wikiqa-to-trecqa_clean"] == "cross-domain"
    assert kinds["clariq-bm25-to-random"] == "cross-NS" and kinds["clariq-bm25-to-random-nota"] == "cross-NS"
    trecqa = parse_grid({"shifts": [{"train": {"task": "trecqa"}, "test": {"task": "trecqa_clean"}}],
                         "methods": {"bm25": {}}}, "test grid")[0]  # fmt: skip
    assert condition_kind(trecqa, trecqa.conditions()[0]) == "cross-NS"  # native test lists, BM25 training


def test_a_declared_in_domain_shift_of_training_negatives_reads_in_domain_and_only_within_one_domain():
    """PG-DRR and GPF-BERT train on random negatives and test on the dataset's BM25 lists, and call that
    in domain; a shift declares it (``in_domain``). Across data files it would hide a change of domain."""
    random_to_bm25 = {"train": {"task": "semeval", "ns": "random"}, "test": {"task": "semeval", "ns": "bm25"}}
    plain = parse_grid({"shifts": [random_to_bm25], "methods": {"bm25": {}}}, "test grid")[0]
    assert condition_kind(plain, plain.conditions()[0]) == "cross-NS"
    declared_shift = {**random_to_bm25, "in_domain": True}
    declared = parse_grid({"shifts": [declared_shift], "methods": {"bm25": {}}}, "test grid")[0]
    assert condition_kind(declared, declared.conditions()[0]) == "in-domain"
    assert "in_domain" not in plain.model_dump()["shifts"][0]  # unset: every other grid keeps its key
    across = {"train": {"task": "semeval", "ns": "random"}, "test": {"task": "clariq"}, "in_domain": True}
    with pytest.raises(RankuqError, match=r"test grid: shifts\.0: in_domain: semeval and clariq read "
                                          r"different data, so the shift is cross-domain"):  # fmt: skip
        parse_grid({"shifts": [across], "methods": {"bm25": {}}}, "test grid")


def test_a_folder_that_is_not_a_finished_run_is_one_error_naming_the_file_and_the_fix(finished, kept):
    with pytest.raises(RankuqError, match=r"grid\.yaml not found: not a finished run directory; rerun"):
        read_finished_run(kept.parent)
    (kept / "seeds.csv").unlink()
    with pytest.raises(RankuqError, match=r"seeds\.csv not found \(written by rankuq run\)"):
        read_finished_run(kept)


def test_the_per_query_records_of_a_cell_give_its_seeds_csv_values(finished):
    run_dir, _ = finished
    run = read_finished_run(run_dir)
    assert run.queries is not None and run.tested == {"wikiqa": ("wikiqa", None)}
    seeds = pd.read_csv(run_dir / "seeds.csv").set_index(["method", "seed"])
    for metric in ("AP", "R@1", "ECE"):
        parts = run.parts("wikiqa", "ensemble", metric)
        assert sorted(parts) == [0, 1]
        for seed, part in parts.items():
            assert part.value() == pytest.approx(seeds.loc[("ensemble", seed), metric], rel=1e-9)
    assert run.parts("wikiqa", "ensemble", "no such metric") == {}
    ap = run.parts("wikiqa", "bert", "AP")[0]
    assert len(ap.qids) == len(set(ap.qids)) and np.all((ap.rows >= 0) & (ap.rows <= 1))
