"""The findings report (bench.findings.render, written by bench.findings.findings): claims measured in
the real tiny WikiQA grid run (the session fixture ``finished``) and rewritten byte for byte, what
paper_runs/ keeps of a run, and docs/findings.md rewritten by its own header's command; the verdict rules
are test_verdicts.py's."""

import re
import shlex
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench import statistics
from rankuq.bench.cli.main import main
from rankuq.bench.config.grid import load_grid
from rankuq.bench.findings.claims import Claim, Paper
from rankuq.bench.findings.conditions import condition_kind
from rankuq.bench.findings.findings import findings
from rankuq.bench.findings.run_tables import break_even_reading, break_even_text
from rankuq.bench.findings.runs import read_finished_run
from rankuq.bench.findings.verdicts import assess, judge_all
from rankuq.errors import RankuqError

TINY_CLAIMS = (
    Claim(
        id="ece-ensemble",
        paper=Paper("a test"),
        grid="tiny",
        text="the ensemble lowers ECE",
        source="a test",
        quote="−14 %",
        paper_effect=-0.14,
        method="ensemble",
        metric="ECE",
        scale="relative",
        expect="lower",
        kinds=("cross-NS",),
        preconditions=("works_in_domain",),
    ),
    Claim(
        id="ra-mc_dropout",
        paper=Paper("a test"),
        grid="tiny",
        text="RA raises R@1",
        source="a test",
        quote="+1.7 %",
        paper_effect=0.017,
        method="mc_dropout",
        metric="RA.R@1",
        reference=("R@1",),
        scale="relative",
        kinds=("cross-NS",),
        preconditions=("b_selected",),
    ),
    Claim(
        id="ap-floor",
        paper=None,
        grid="tiny",
        text="bert reaches AP 0.2",
        source="a test",
        quote="0.2",
        paper_effect=None,
        method="bert",
        metric="AP",
        floor=0.2,
        expect="at least",
        kinds=("cross-NS",),
    ),
)


def test_findings_on_the_real_tiny_run_and_a_byte_identical_rewrite(finished, tmp_path):
    run_dir, board = finished
    # The tiny grid's one condition trains on BM25 lists and tests on WikiQA's native ones: cross-NS.
    spec, _ = load_grid(run_dir / "grid.yaml")
    assert condition_kind(spec, spec.conditions()[0]) == "cross-NS"
    out = tmp_path / "findings.md"
    findings([run_dir], out, TINY_CLAIMS)
    first = out.read_bytes()
    findings([run_dir], out, TINY_CLAIMS)
    assert out.read_bytes() == first
    assert (tmp_path / "findings-forest.png").read_bytes().startswith(b"\x89PNG")
    text = first.decode()
    assert "](findings-forest.png)" in text and "| **inconclusive** |" in text  # the definitions
    # The per-query records give seeds.csv's values: d is the relative ECE change of the seeds' means
    # (a ratio of means), or the difference where bert's ECE is near 0 (the claim then reads absolute).
    seeds = pd.read_csv(run_dir / "seeds.csv").set_index(["method", "seed"])
    ensemble, bert = (np.mean([seeds.loc[(m, s), "ECE"] for s in (0, 1)]) for m in ("ensemble", "bert"))
    [ece, ra, floor] = judge_all([assess(claim, [read_finished_run(run_dir)]) for claim in TINY_CLAIMS])
    expected = (ensemble - bert) / bert if ece.claim.scale == "relative" else ensemble - bert
    assert ece.measured[0].effect.d == pytest.approx(expected, rel=1e-9)
    assert ece.measured[0].value == pytest.approx(board.set_index("method").loc["ensemble", "ECE"], rel=1e-9)
    gain = [
        (seeds.loc[("mc_dropout", s), "RA.R@1"] - seeds.loc[("mc_dropout", s), "R@1"])
        / seeds.loc[("mc_dropout", s), "R@1"]
        for s in (0, 1)
    ]
    if ra.verdict != statistics.UNTESTABLE:
        assert ra.measured[0].effect.d == pytest.approx(np.mean(gain), rel=1e-9)
    else:  # b = 0 in both seeds: the tiny model's dev curve is flat
        assert "b per seed" in ra.note
    assert floor.overall.d == pytest.approx(board.set_index("method").loc["bert", "AP"], rel=1e-9)
    # The verdicts are the taxonomy's, in the table and the per-condition rows.
    for row in (ece, ra, floor):
        assert f"**{row.verdict}**" in text
    assert "| ece-ensemble | wikiqa |" in text


def test_a_results_folder_of_the_files_git_keeps_gives_the_same_findings(finished, kept, tmp_path):
    """What paper_runs/ commits of a grid (the fixture ``kept``) is all findings reads: the same rows as
    the whole run directory."""
    run_dir, _ = finished
    claims = TINY_CLAIMS
    out = tmp_path / "findings.md"
    findings([run_dir], out, claims)
    whole = out.read_text()
    findings([kept], out, claims)
    assert out.read_text().replace(str(kept), "RUN") == whole.replace(str(run_dir), "RUN")
    (kept / "leaderboard.csv").unlink()
    with pytest.raises(RankuqError, match=r"leaderboard\.csv not found"):
        findings([kept], out, claims)


def test_docs_findings_md_is_what_its_own_command_writes_from_the_committed_results(tmp_path, monkeypatch):
    """docs/findings.md is generated, not typed: its header's command, run on the paper_runs/ folders git
    keeps (and planning each grid to check that its cells are this checkout's), rewrites it exactly."""
    root = Path(__file__).parents[3]
    doc = (root / "docs" / "findings.md").read_text()
    found = re.search(r"Generated by `(rankuq findings [^`]+)`", doc)
    assert found is not None
    args = shlex.split(found.group(1))[2:]
    out = tmp_path / "docs" / "findings.md"
    args[args.index("--out") + 1] = str(out)
    monkeypatch.chdir(root)  # the command names paper_runs/… and docs/… from the repository's root
    readme = tmp_path / "README.md"  # the README's summary block is rewritten by the same command
    readme.write_text((root / "README.md").read_text())
    args[args.index("--readme") + 1] = str(readme)
    assert main(["findings", *args]) == 0
    assert out.read_text().replace(str(out), "docs/findings.md").replace(str(readme), "README.md") == doc
    assert (
        readme.read_text().replace(f"{out.name}-forest", "findings-forest")
        == (root / "README.md").read_text()
    )
    # The forest plot's numbers (its PNG's bytes follow matplotlib's version): the same as committed,
    # and every line the number its claim's row in the table shows.
    drawn = out.with_name("findings-forest.csv").read_text()
    assert drawn == (root / "docs" / "findings-forest.csv").read_text()
    table = {line.split(":", 1)[0].removeprefix("| "): line for line in doc.splitlines() if ": " in line[:80]}
    forest = pd.read_csv(out.with_name("findings-forest.csv"))
    assert len(forest) > 100 and set(forest.claim) <= set(table)
    for line in forest.itertuples():
        ours = table[line.claim].split(" | ")[4]  # the "ours: d [95 % CI]" cell
        assert _numbers_agree(ours, line), (line.claim, ours)


def _numbers_agree(cell: str, line) -> bool:
    """The table cell prints the line's d, low and high (a range: from low to high) as the report
    rounds them: 0.1 % for a relative panel's %, 0.001 otherwise."""
    # an untestable row's number follows its cause: "*not judged* (cause); measured: …"
    shown = cell.rsplit("); measured: ", 1)[-1] if cell.startswith("*not judged*") else cell
    printed = [float(x.rstrip("%")) for x in re.findall(r"[+-](?:\d+\.\d+%?|inf%?)", shown)]
    relative = line.panel == "relative"
    drawn = {"estimate": [line.d, line.low, line.high], "range": [line.low, line.high]}.get(line.drawn, [])
    unit = 0.05 if relative else 0.0005  # half the printed precision
    return len(printed) >= len(drawn) and all(
        a == b or abs(a - b) <= unit + 1e-9 for a, b in zip(printed, drawn, strict=False)
    )


def test_a_readme_summary_is_the_reports_verdict_table_between_its_markers(finished, tmp_path):
    run_dir, _ = finished
    out, readme = tmp_path / "docs" / "findings.md", tmp_path / "README.md"
    readme.write_text("# A project\n\nbefore\n<!-- findings:start -->\nold\n<!-- findings:end -->\nafter\n")
    findings([run_dir], out, TINY_CLAIMS, readme=readme)
    text = readme.read_text()
    assert text.startswith("# A project\n\nbefore\n<!-- findings:start -->\n**What the runs found**")
    assert text.endswith("<!-- findings:end -->\nafter\n") and "old" not in text
    assert "[docs/findings.md](docs/findings.md)" in text  # linked relative to the README
    table = text[text.index("| paper | claims |") : text.index("<!-- findings:end -->")].strip()
    assert table in out.read_text()  # the report's own per-paper table
    assert f"--readme {readme}" in out.read_text()  # the header's command rewrites both


def test_a_readme_without_the_block_fails_before_anything_is_written(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# no block\n")
    out = tmp_path / "findings.md"
    with pytest.raises(
        RankuqError, match=r"README\.md: no findings block; put the two lines <!-- findings:start -->"
    ):
        findings([tmp_path / "never-read"], out, TINY_CLAIMS, readme=readme)
    assert not out.exists()


def test_break_even_shows_censored_seeds_as_more_than_the_dev_size():
    """Paper 002's Table 5 break-even (9 to 80 reference queries): a seed whose u_lin never stayed
    ahead within the dev split's N queries reads "> N"; seeds censored below 80 cannot be placed
    against the paper's 80, seeds past it (or censored at N ≥ 80) are beyond it."""
    nan = float("nan")
    assert [break_even_text(v, 50) for v in (10.0, nan)] == ["10", "> 50"]
    assert break_even_reading([10.0, 5.0, 50.0], 122) == "every seed within the paper's 80"
    assert break_even_reading([50.0, nan, nan], 50).startswith("2 of 3 seeds censored before 80")
    assert break_even_reading([nan, nan, nan], 93) == "3 of 3 seeds beyond the paper's 80"
    assert break_even_reading([100.0, 20.0], 122) == "1 of 2 seeds beyond the paper's 80"


def test_an_inconclusive_row_significant_only_before_the_correction_says_so(lower_ece):
    """A CI that excludes 0 with a raw p of 0.028 but a BH-adjusted 0.058 is not a finding: the row
    reads inconclusive and says why, beside its minimum detectable effect."""
    from rankuq.bench.findings.render import _power
    from rankuq.bench.findings.rows import Measured

    rng = np.random.default_rng(0)
    side = [rng.normal(0.1, 0.05, (40, 1)) for _ in range(3)]
    effect = statistics.paired_bootstrap(
        [side, [np.zeros((40, 1))] * 3], [statistics.mean()] * 2, statistics.difference(), resamples=200
    )
    row = Measured("c", effect, 0.1, 0.0, verdict=statistics.INCONCLUSIVE, p=0.028, adjusted_p=0.058)
    assert _power(lower_ece, row).startswith(
        "significant before the BH correction only (p 0.028, adjusted 0.058); MDE "
    )
    assert _power(lower_ece, replace(row, adjusted_p=0.2, p=0.2)).startswith("MDE ")


def test_a_run_s_device_is_its_machine_record_else_its_resources(finished, tmp_path):
    """A full-scale GPU run directory carries machine.json: the report names its GPU and weights."""
    import json
    import shutil

    from rankuq.bench.findings.run_tables import device_of

    run_dir, _ = finished
    assert device_of(read_finished_run(run_dir)) == "CPU"
    copy = tmp_path / "gpu-run"
    shutil.copytree(run_dir, copy)
    record = {
        "device": "cuda",
        "gpu": "NVIDIA H100 80GB HBM3",
        "weights": "pretrained all-MiniLM-L6-v2 (bf16)",
    }
    (copy / "machine.json").write_text(json.dumps(record))
    device = "NVIDIA H100 80GB HBM3 (weights: pretrained all-MiniLM-L6-v2 (bf16))"
    assert device_of(read_finished_run(copy)) == device
    (copy / "machine.json").write_text("[1]")
    with pytest.raises(RankuqError, match=r"machine\.json: not a JSON object"):
        device_of(read_finished_run(copy))
