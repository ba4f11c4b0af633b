"""The findings use case: ``findings`` measures every claim in run directories and writes the report
(docs/findings.md), its forest plot, and a README's summary block."""

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from rankuq.atomic import atomic_write
from rankuq.bench.findings.claims import CLAIMS, Claim
from rankuq.bench.findings.plot import forest_data, forest_plot
from rankuq.bench.findings.render import README_END, README_START, readme_summary, render
from rankuq.bench.findings.run_tables import is_stale, reproducing_command
from rankuq.bench.findings.runs import read_costs, read_finished_run
from rankuq.bench.findings.verdicts import assess_runs, judge_all
from rankuq.errors import RankuqError


def _readme_with(readme: Path, block: str) -> str:
    """``readme``'s text with its findings block replaced by ``block``."""
    try:
        text = readme.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RankuqError(f"{readme}: cannot read it ({error}); name a Markdown file with --readme") from None
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise RankuqError(
            f"{readme}: no findings block; put the two lines {README_START} and {README_END} where the "
            "summary goes"
        )
    return text[:start] + block + text[end + len(README_END) :]


def findings(
    run_dirs: Sequence[Path],
    out: Path,
    claims: Sequence[Claim] = CLAIMS,
    cost: Sequence[Path] = (),
    allow_stale: bool = False,
    readme: Path | None = None,
) -> Path:
    """Measure every claim in the run directories (the cost claims in method_cost's CSVs ``cost``),
    write ``out``, its forest plot beside it (the PNG, and the numbers it draws as a CSV), and the
    summary block of ``readme`` if given;
    returns ``out``. A run whose cells this checkout would make otherwise (stale) is refused unless
    ``allow_stale``, which writes it marked."""
    if not run_dirs:
        raise RankuqError("rankuq findings: name at least one run directory of `rankuq run`")
    if readme is not None:
        _readme_with(readme, "")  # a README without its block fails before the claims are measured
    costs = read_costs(cost)  # a bad --cost file fails before the runs are planned (seconds each)
    runs = [read_finished_run(Path(folder)) for folder in run_dirs]
    folders = [run.folder.resolve() for run in runs]
    twice = sorted({str(folder) for folder in folders if folders.count(folder) > 1})
    if twice:
        raise RankuqError(f"rankuq findings: run directory {twice[0]} is given twice; give it once")
    stale = [run for run in runs if is_stale(run)]
    if stale and not allow_stale:
        run = stale[0]
        assert run.provenance is not None
        raise RankuqError(
            f"{run.folder}: {run.provenance.describe()}; rerun {reproducing_command(run)} "
            "(it redoes what changed), or pass --allow-stale to write the findings with the run marked stale"
        )
    given = [arg for path in cost for arg in ("--cost", str(path))]
    given += ["--allow-stale"] if allow_stale else []
    given += ["--readme", str(readme)] if readme is not None else []
    command = shlex.join(["rankuq", "findings", *map(str, run_dirs), *given, "--out", str(out)])
    rows = judge_all([row for claim in claims for row in assess_runs(claim, runs, costs)])
    forest = out.with_name(f"{out.stem}-forest.png")
    out.parent.mkdir(parents=True, exist_ok=True)
    forest_plot(rows, forest)
    # the numbers the plot draws, beside it: what a regeneration is checked against, as the PNG's bytes
    # depend on matplotlib's version
    atomic_write(forest.with_suffix(".csv"), forest_data(rows).to_csv(index=False, float_format="%.6g"))
    atomic_write(out, render(rows, command, runs, forest.name))
    if readme is not None:
        report = Path(os.path.relpath(out.resolve(), readme.resolve().parent)).as_posix()
        atomic_write(readme, _readme_with(readme, readme_summary(rows, report)))
    return out
