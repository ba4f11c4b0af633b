"""`rankuq findings`: the verdict rules on small hand-made tables (worked out by hand below), the kinds
of condition of the paper grids, and the claims measured in the real tiny WikiQA grid run (the session
fixture ``finished``), rewritten byte for byte."""

import re
import shlex
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rankuq.bench.cli import main
from rankuq.bench.findings import (
    CLAIMS,
    NOT_MEASURED,
    NOT_REPRODUCED,
    REFUTED,
    REPRODUCED,
    Claim,
    Run,
    assess,
    condition_kind,
    findings,
    measure,
    overall,
)
from rankuq.bench.grid import load_grid, parse_grid
from rankuq.errors import RankuqError

GRIDS = Path(__file__).parents[2] / "bench" / "grids"
SPEC, _ = parse_grid(
    {"name": "paper000", "tasks": ["wikiqa"], "methods": {"bert": {}, "ensemble": {}}, "baseline": "bert"},
    "test grid",
)
ECE_CLAIM = Claim(
    id="ece",
    grid="paper000",
    text="lower ECE",
    paper="−14 %",
    method="ensemble",
    metric="ECE",
    expect="lower",
)


def hand_made(
    seeds: dict[str, dict[str, list[float]]], board_p: dict[str, float] | None = None, kind: str = "in-domain"
) -> Run:
    """A run of one condition 'c': ``seeds`` maps method → column → per-seed values (seeds 0, 1, 2);
    ``board_p`` the leaderboard's p-values of the ensemble."""
    rows = [
        {"condition": "c", "method": method, "seed": seed, **{k: v[seed] for k, v in columns.items()}}
        for method, columns in seeds.items()
        for seed in range(3)
    ]
    board = pd.DataFrame(
        [{"condition": "c", "method": "ensemble", **{f"{k} p": v for k, v in (board_p or {}).items()}}]
    )
    return Run(Path("runs/hand"), SPEC, pd.DataFrame(rows), board, {"c": (kind, "standard")})


def test_lower_ece_with_the_leaderboard_p_is_reproduced():
    # d = ensemble − bert per seed = −0.05, −0.06, −0.055: mean −0.055, relative −0.055 / 0.11 = −50 %
    run = hand_made(
        {"bert": {"ECE": [0.10, 0.12, 0.11]}, "ensemble": {"ECE": [0.05, 0.06, 0.055]}}, {"ECE": 0.001}
    )
    m = measure(ECE_CLAIM, run, "c")
    assert m.delta[0] == pytest.approx(-0.055) and m.delta[1] == pytest.approx(0.005)
    assert m.relative == pytest.approx(-0.5) and m.p == 0.001 and m.verdict == REPRODUCED


def test_a_significant_rise_refutes_and_an_insignificant_drop_does_not_reproduce():
    higher = hand_made({"bert": {"ECE": [0.1] * 3}, "ensemble": {"ECE": [0.2] * 3}}, {"ECE": 0.01})
    assert measure(ECE_CLAIM, higher, "c").verdict == REFUTED
    lower = hand_made({"bert": {"ECE": [0.1] * 3}, "ensemble": {"ECE": [0.09] * 3}}, {"ECE": 0.3})
    assert measure(ECE_CLAIM, lower, "c").verdict == NOT_REPRODUCED


def test_against_the_best_of_several_values_with_a_t_test_over_seeds():
    # reference = max(u_max, u_std) per seed = 0.28, 0.30, 0.29; d = 0.09, 0.08, 0.07:
    # t = 0.08 / (0.01 / √3) = 13.86 with 2 degrees of freedom, p = 0.0052
    claim = Claim(
        id="u",
        grid="paper000",
        text="",
        paper="",
        method="bert",
        metric="u_lin",
        reference=("u_max", "u_std"),
    )
    run = hand_made({"bert": {"u_lin": [0.37, 0.38, 0.36], "u_max": [0.28, 0.30, 0.29], "u_std": [0.2] * 3}})
    m = measure(claim, run, "c")
    assert m.delta[0] == pytest.approx(0.08)
    assert m.p == pytest.approx(stats.ttest_rel([0.37, 0.38, 0.36], [0.28, 0.30, 0.29]).pvalue)
    assert m.p == pytest.approx(0.0052, abs=1e-4) and m.verdict == REPRODUCED


def test_the_same_difference_in_every_seed_takes_the_sign_test_not_an_infinite_t():
    # d = 1/61 in all three seeds (one ClariQ query of 61): t = ∞ would give p = 0; the exact sign
    # test gives 2 · (1/2)³ = 0.25, not significant
    claim = Claim(id="t", grid="paper000", text="", paper="", method="bert", metric="a", reference=("b",))
    b = [0.01803279, 0.05081967, 0.06721311]
    run = hand_made({"bert": {"a": [x + 1 / 61 for x in b], "b": b}})
    m = measure(claim, run, "c")
    assert m.p == pytest.approx(0.25) and m.verdict == NOT_REPRODUCED


def test_a_probe_p_value_counts_only_when_every_seed_is_significant():
    claim = Claim(
        id="ra", grid="paper000", text="", paper="", method="ensemble", metric="RA", reference=("R@1",),
        p_value="RA.p",
    )  # fmt: skip
    columns = {"RA": [0.5] * 3, "R@1": [0.4] * 3}
    run = hand_made({"ensemble": {**columns, "RA.p": [0.01, 0.2, 0.03]}})
    assert measure(claim, run, "c").p == 0.2 and measure(claim, run, "c").verdict == NOT_REPRODUCED
    run = hand_made({"ensemble": {**columns, "RA.p": [0.01, 0.02, 0.03]}})
    assert measure(claim, run, "c").verdict == REPRODUCED


def test_within_a_margin():
    claim = replace(ECE_CLAIM, metric="R@1", expect="within", margin=0.02)
    close = hand_made({"bert": {"R@1": [0.50] * 3}, "ensemble": {"R@1": [0.49] * 3}}, {"R@1": 0.001})
    assert measure(claim, close, "c").verdict == REPRODUCED  # |d| = 0.01 ≤ 0.02, however significant
    far = hand_made({"bert": {"R@1": [0.50] * 3}, "ensemble": {"R@1": [0.45] * 3}}, {"R@1": 0.001})
    assert measure(claim, far, "c").verdict == REFUTED
    far_not_significant = hand_made(
        {"bert": {"R@1": [0.5] * 3}, "ensemble": {"R@1": [0.45] * 3}}, {"R@1": 0.5}
    )
    assert measure(claim, far_not_significant, "c").verdict == NOT_REPRODUCED


def test_a_present_value_and_what_is_not_measured():
    claim = Claim(
        id="b", grid="paper000", text="", paper="", method="bert", metric="break_even.AP",
        reference=("nAUC.AP.u_lin",), expect="present",
    )  # fmt: skip
    every = hand_made({"bert": {"break_even.AP": [20, 50, 20], "nAUC.AP.u_lin": [0.3] * 3}})
    assert measure(claim, every, "c").verdict == REPRODUCED and measure(claim, every, "c").value[0] == 30
    one_missing = hand_made({"bert": {"break_even.AP": [20, np.nan, 20], "nAUC.AP.u_lin": [0.3] * 3}})
    assert measure(claim, one_missing, "c").verdict == NOT_REPRODUCED
    assert measure(claim, hand_made({"bert": {"R@1": [0.3] * 3}}), "c") is None  # the probe did not run
    row = assess(claim, [hand_made({"bert": {"R@1": [0.3] * 3}})])
    assert row.verdict == NOT_MEASURED and "no break_even.AP of bert" in row.note
    assert assess(replace(claim, grid="paper002"), [every]).verdict == NOT_MEASURED
    cross = hand_made({"bert": {"ECE": [0.1] * 3}, "ensemble": {"ECE": [0.0] * 3}}, {"ECE": 0.0}, "cross-NS")
    in_domain = replace(ECE_CLAIM, kinds=("in-domain",))
    assert assess(in_domain, [cross]).verdict == NOT_MEASURED  # no in-domain condition
    assert assess(ECE_CLAIM, [cross]).verdict == REPRODUCED


def test_the_baseline_against_another_method_reads_that_method_s_leaderboard_p():
    # bert − ensemble per seed = 0.10, 0.12, 0.14: mean 0.12, relative 0.12 / 0.6 = +20 %
    claim = Claim(
        id="fit", grid="paper000", text="", paper="", method="bert", metric="AP", against="ensemble"
    )
    run = hand_made({"bert": {"AP": [0.70, 0.72, 0.74]}, "ensemble": {"AP": [0.6] * 3}}, {"AP": 0.001})
    m = measure(claim, run, "c")
    assert m.delta[0] == pytest.approx(0.12) and m.relative == pytest.approx(0.2)
    assert m.p == 0.001 and m.verdict == REPRODUCED
    assert claim.compared() == "ensemble"


def test_a_floor_is_reached_in_every_seed_none_or_some():
    claim = Claim(
        id="floor", grid="paper000", text="", paper="", method="bert", metric="AP", expect="at least",
        margin=0.70, condition="c",
    )  # fmt: skip
    every = measure(claim, hand_made({"bert": {"AP": [0.71, 0.72, 0.70]}}), "c")
    assert every.verdict == REPRODUCED and every.delta[0] == pytest.approx(0.01) and np.isnan(every.p)
    some = measure(claim, hand_made({"bert": {"AP": [0.69, 0.72, 0.71]}}), "c")
    assert some.verdict == NOT_REPRODUCED
    assert measure(claim, hand_made({"bert": {"AP": [0.6] * 3}}), "c").verdict == REFUTED
    elsewhere = assess(replace(claim, condition="other"), [hand_made({"bert": {"AP": [0.8] * 3}})])
    assert elsewhere.verdict == NOT_MEASURED and "condition other" in elsewhere.note


def test_the_verdict_over_conditions_is_the_majority_s():
    assert overall([REPRODUCED, REPRODUCED, NOT_REPRODUCED]) == REPRODUCED
    assert overall([REFUTED, REFUTED, REPRODUCED]) == REFUTED
    assert overall([REPRODUCED, REFUTED, NOT_REPRODUCED]) == NOT_REPRODUCED
    assert overall([REPRODUCED, REFUTED]) == NOT_REPRODUCED
    assert overall([]) == NOT_MEASURED


def test_the_kinds_of_the_paper_000_conditions():
    spec, _ = load_grid(GRIDS / "paper000.yaml")
    kinds = {shift.label(): condition_kind(spec, shift) for shift in spec.conditions()}
    assert kinds["clariq"] == "in-domain"
    assert kinds["wikiqa-to-clariq"] == "cross-domain" and kinds["wikiqa-to-trecqa_clean"] == "cross-domain"
    assert kinds["clariq-bm25-to-random"] == "cross-NS" and kinds["clariq-bm25-to-random-nota"] == "cross-NS"
    trecqa = parse_grid({"shifts": [{"train": {"task": "trecqa"}, "test": {"task": "trecqa_clean"}}],
                         "methods": {"bm25": {}}}, "test grid")[0]  # fmt: skip
    assert condition_kind(trecqa, trecqa.conditions()[0]) == "cross-NS"  # native test lists, BM25 training


@pytest.mark.parametrize(
    ("grid", "tasks"),
    [
        ("paper002", {"wikiqa", "clariq", "semeval", "trecqa_clean"}),
        ("fit_wikiqa", {"wikiqa"}),
        ("fit_trecqa", {"trecqa_clean"}),
    ],
)
def test_the_model_fit_claims_name_conditions_of_their_grid(grid, tasks):
    spec, _ = load_grid(GRIDS / f"{grid}.yaml")
    labels = {shift.label() for shift in spec.conditions()}
    named = {claim.condition for claim in CLAIMS if claim.condition is not None and claim.grid == grid}
    assert named == labels == tasks


def test_every_claim_of_the_issue_is_declared_once():
    ids = [claim.id for claim in CLAIMS]
    assert len(ids) == len(set(ids))
    grids = {
        "paper000",
        "paper001",
        "paper001_l4",
        "paper002",
        "gp",
        "fit_wikiqa",
        "fit_trecqa",
        "gp_fit",
        "method_cost",
    }
    assert {claim.grid for claim in CLAIMS} == grids


def cost_table(seconds: dict[str, list[float]]) -> pd.DataFrame:
    """method_cost's CSV: per method, its seconds in repeats 0, 1, 2 at MiniLM-L6."""
    labels = {"mc_dropout": "mc_dropout (T=10)", "ensemble": "ensemble (M=5)"}
    command = "python -m rankuq.bench.benchmarks.method_cost --out c.csv"
    setting = {"layers": 6, "pairs": 256, "precision": "fp32", "command": command}
    return pd.DataFrame(
        {**setting, "method": method, "label": labels.get(method, method), "repeat": repeat, "seconds": value}
        for method, values in seconds.items()
        for repeat, value in enumerate(values)
    )


def test_the_cost_claims_compare_each_repeat_s_time_over_bert_s():
    claim = next(c for c in CLAIMS if c.id == "gp-cost-sngp-vs-mc_dropout")
    bert, sngp, mc = [1.0, 1.1, 0.9], [1.1, 1.2, 1.0], [11.0, 12.0, 10.0]
    row = assess(claim, [], cost_table({"bert": bert, "sngp": sngp, "mc_dropout": mc, "ensemble": [5] * 3}))
    (m,) = row.measured
    ratios = np.divide(sngp, bert)  # 1.1, 1.0909, 1.1111
    reference = np.divide(mc, bert)  # 11, 10.909, 11.111
    assert m.value[0] == pytest.approx(ratios.mean())
    assert m.delta[0] == pytest.approx((ratios - reference).mean())
    assert m.p == pytest.approx(stats.ttest_rel(ratios, reference).pvalue) and m.p < 0.05
    assert (m.verdict, m.seeds, m.unit, row.verdict) == (REPRODUCED, 3, "repeats", REPRODUCED)
    assert m.condition == "MiniLM-L6, 256 WikiQA test pairs, fp32; vs mc_dropout (T=10)"
    assert row.command.endswith("method_cost --out c.csv")
    # Dearer than the ensemble in every repeat: refuted; no file, or no timing of it: not measured.
    dear = replace(claim, id="vs-ensemble", against="ensemble")
    table = cost_table({"bert": bert, "sngp": [6.0, 6.7, 5.2], "ensemble": [5.0, 5.6, 4.4]})
    assert assess(dear, [], table).verdict == REFUTED
    assert assess(claim, [], None).verdict == NOT_MEASURED
    missing = assess(claim, [], cost_table({"bert": bert, "sngp": sngp}))
    assert missing.verdict == NOT_MEASURED and "no timings of sngp and mc_dropout" in missing.note


def summary(text: str) -> dict[str, list[str]]:
    """claim id → the cells of its summary row."""
    lines = text.split("## Per condition")[0].splitlines()[8:]  # below the table's header
    rows = [line.split(" | ") for line in lines if line.startswith("| ")]
    return {cells[0].removeprefix("| ").split(":")[0]: cells for cells in rows}


def test_findings_on_the_real_tiny_run_and_a_byte_identical_rewrite(finished, tmp_path):
    run_dir, board = finished
    # The tiny grid's one condition trains on BM25 lists and tests on WikiQA's native ones: cross-NS.
    spec, _ = load_grid(run_dir / "grid.yaml")
    assert condition_kind(spec, spec.conditions()[0]) == "cross-NS"
    claims = [replace(claim, grid="tiny") for claim in CLAIMS if claim.grid == "paper000"]
    ece = replace(claims[0], id="ece-any-shift", kinds=("cross-NS",))
    out = tmp_path / "findings.md"
    findings([run_dir], out, [*claims, ece])
    first = out.read_bytes()
    findings([run_dir], out, [*claims, ece])
    assert out.read_bytes() == first
    rows = summary(first.decode())
    assert set(rows) == {claim.id for claim in claims} | {"ece-any-shift"}
    for gone in ("000-ece-in-domain-ensemble", "000-ece-cross-domain-mc_dropout", "000-nota-ensemble"):
        assert "**not measured**" in rows[gone][4]  # no in-domain, cross-domain or NOTA condition
    # Against the baseline: the leaderboard's means and p-values.
    ensemble = board.set_index("method").loc["ensemble"]
    assert f"{ensemble['R@1']:.3f} ± {ensemble['R@1 std']:.3f}" in rows["000-ensemble-effective"][3]
    assert f"p = {ensemble['R@1 p']:.3g}" in rows["000-ensemble-effective"][3]
    mc = board.set_index("method").loc["mc_dropout"]
    assert f"{mc['ECE']:.3f} ± {mc['ECE std']:.3f}" in rows["ece-any-shift"][3]
    assert f"p = {mc['ECE p']:.3g}" in rows["ece-any-shift"][3]
    # Within a cell: RA against the mean ranking, p the largest of the seeds' paired tests.
    seeds = pd.read_csv(run_dir / "seeds.csv")
    ra = seeds[seeds.method == "mc_dropout"]
    gain = ra["RA.R@1"] - ra["R@1"]
    assert f"d = {gain.mean():.3f} ± {gain.std(ddof=1):.3f}" in rows["000-ra-cross-ns-mc_dropout"][3]
    assert f"p = {ra['RA.R@1.p_value'].max():.3g}" in rows["000-ra-cross-ns-mc_dropout"][3]
    for claim_id in (
        "000-ra-mc_dropout",
        "000-ra-cross-ns-ensemble",
        "000-ensemble-effective",
        "ece-any-shift",
    ):
        assert rows[claim_id][4].strip("*") in (REPRODUCED, NOT_REPRODUCED, REFUTED)
    assert "| 000-ensemble-effective | wikiqa | 2 |" in first.decode()  # the per-condition table


def test_a_results_folder_of_three_files_gives_the_same_findings(finished, kept, tmp_path):
    """What results/ commits of a grid (the fixture ``kept``) is all findings reads: the same rows as
    the whole run directory."""
    run_dir, _ = finished
    claims = [replace(claim, grid="tiny") for claim in CLAIMS if claim.grid == "paper000"]
    out = tmp_path / "findings.md"
    findings([run_dir], out, claims)
    whole = out.read_text()
    findings([kept], out, claims)
    assert out.read_text().replace(str(kept), "RUN") == whole.replace(str(run_dir), "RUN")
    (kept / "leaderboard.csv").unlink()
    with pytest.raises(RankuqError, match=r"leaderboard\.csv not found"):
        findings([kept], out, claims)


def test_docs_findings_md_is_what_its_own_command_writes_from_the_committed_results(tmp_path, monkeypatch):
    """docs/findings.md is generated, not typed: its header's command, run on the results/ folders git
    keeps (and planning each grid to check that its cells are this checkout's), rewrites it exactly."""
    root = Path(__file__).parents[2]
    doc = (root / "docs" / "findings.md").read_text()
    found = re.search(r"Generated by `(rankuq findings [^`]+)`", doc)
    assert found is not None
    args = shlex.split(found.group(1))[2:]
    out = tmp_path / "findings.md"
    args[args.index("--out") + 1] = str(out)
    monkeypatch.chdir(root)  # the command names results/… and docs/… from the repository's root
    assert main(["findings", *args]) == 0
    assert out.read_text().replace(str(out), "docs/findings.md") == doc
