"""The findings report: docs/findings.md, its forest plot, and the function that writes them."""

import json
import math
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from rankuq.bench.findings import statistics
from rankuq.bench.findings.claims import CLAIMS, Claim
from rankuq.bench.findings.plot import forest_plot, offset
from rankuq.bench.findings.preconditions import RULES, Check, ranker_check, shift_hurts
from rankuq.bench.findings.rows import Measured, Row
from rankuq.bench.findings.runs import Run, read_costs, read_run
from rankuq.bench.findings.sides import source_condition
from rankuq.bench.findings.verdicts import LEFT_OUT, assess_runs, judge_all, judged_conditions
from rankuq.bench.results.provenance import STALE
from rankuq.bench.results.rendering import markdown_text
from rankuq.bench.rundir.atomic import atomic_write
from rankuq.errors import RankuqError

VERDICTS = (
    statistics.REPRODUCED,
    statistics.SMALLER,
    statistics.OPPOSITE,
    statistics.INCONCLUSIVE,
    statistics.REFUTED,
    statistics.MIXED,
    statistics.UNTESTABLE,
    statistics.NOT_MEASURED,
)
MARKS = {True: "✓", False: "✗", None: "?"}  # a precondition passed, failed, not checked
PAPERS = {"000": "Penha & Hauff, 2021", "001": "Cohen et al., 2021", "002": "Gisserot-Boukhlef et al., 2024"}


def paper_of(claim: Claim) -> str:
    """The paper a claim comes from, by its id's prefix (GP and cost claims: papers 003/004)."""
    prefix = claim.id.split("-")[0]
    return PAPERS.get(prefix, "Ye et al., 2023 / GPF-BERT, 2023 (003, 004)")


def _number(value: float, scale: str = "absolute") -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:+.1%}" if scale == "relative" else f"{value:+.3f}"


def _p(value: float, estimate: statistics.Estimate | None = None) -> str:
    """A p-value; a bootstrap's at its floor (no replicate crossed 0) as the bound it is."""
    if math.isnan(value):
        return "—"
    if isinstance(estimate, statistics.Effect) and estimate.p_at_floor and value <= estimate.p_floor:
        return f"< {estimate.p_floor:.0e}"
    return "< 1e-04" if value < 1e-4 else f"{value:.2g}"


def _effect(effect: statistics.Estimate | None, scale: str, shift: float = 0.0) -> str:
    """d [95 % CI]; a floor claim's as value − floor (``shift``), the terms of its paper effect."""
    if effect is None:
        return "—"
    low, high = effect.interval()
    return (
        f"{_number(effect.d - shift, scale)} [{_number(low - shift, scale)}, {_number(high - shift, scale)}]"
    )


def _cell(text: str) -> str:
    """The registry's own text in a table cell: only the pipe needs escaping."""
    return text.replace("|", "\\|")


def _run_command(run: Run) -> str:
    return (
        f"`rankuq run {shlex.quote(str(run.folder / 'grid.yaml'))} --run-dir {shlex.quote(str(run.folder))}`"
    )


def _stale(run: Run) -> bool:
    return run.provenance is not None and run.provenance.status == STALE


# Beyond these the data cannot speak to the paper's effect: a minimum detectable effect above 10 (1,000 %
# relative, or 10 points of a metric in [0, 1]) or a hundredfold of the data is not a plan.
MDE_REACH = 10.0
DATA_REACH = 100.0
BEYOND = "beyond reach of this data"


def _power(claim: Claim, m: Measured) -> str:
    """The minimum detectable effect and the data the paper's effect would need, for an inconclusive
    condition (80 % power, α = 0.05); capped and worded beyond reach (``MDE_REACH``, ``DATA_REACH``)."""
    if m.effect is None or m.verdict != statistics.INCONCLUSIVE:
        return ""
    mde = statistics.minimum_detectable_effect(m.effect)
    reach = f"{MDE_REACH:.0%}" if claim.scale == "relative" else f"{MDE_REACH:g}"
    shown = _number(mde, claim.scale).lstrip("+") if mde <= MDE_REACH else f"above {reach}: {BEYOND}"
    text = f"MDE {shown}"
    if m.p < statistics.ALPHA <= m.adjusted_p:  # its CI may exclude 0: before the correction
        before = f"p {_p(m.p)}, adjusted {_p(m.adjusted_p)}"
        text = f"significant before the BH correction only ({before}); {text}"
    if claim.paper_effect and claim.expect in ("higher", "lower"):  # the others test a margin or floor
        need = statistics.scale_for_power(m.effect, claim.paper_effect)
        if not need.factor <= DATA_REACH:
            return f"{text}; the paper's effect needs more than ×{DATA_REACH:.0f} the data: {BEYOND}"
        text += f"; the paper's effect needs ×{need.factor:.1f} the data"
        if need.seeds is not None:
            text += f" ({need.seeds} seeds"
            text += f" or {need.queries} queries per seed)" if need.queries is not None else ")"
    return text


def _checks(m: Measured) -> str:
    return "; ".join(f"{MARKS[c.passed]} {c.name}: {c.detail}" for c in m.checks) or "—"


def _header(command: str, forest: str, runs: Sequence[Run]) -> list[str]:
    return [
        "# Findings: the papers' claims measured with rankuq",
        "",
        f"Generated by `{command}`; do not edit by hand (rerunning it rewrites this file and "
        f"[{forest}]({forest})).",
        "",
        *_scale(runs),
        f"![Every claim's effect with its 95 % CI beside the paper's effect]({forest})",
        "",
        "## How to read it",
        "",
        "Each claim compares a method's metric with a reference (another method, another metric of the "
        "same cell, the same model without shift, or a floor) on the same queries. d is the effect in the"
        " paper's own terms (absolute, or relative to the reference, as the paper states it), with a 95 %"
        " confidence interval from one procedure for every claim: a paired two-level bootstrap that draws"
        " seeds, then queries within each seed, the same draws for both sides (docs/statistics.md). A "
        "relative d is a ratio of means over the seeds; where the reference is near 0 (below 0.05 in a "
        "condition, as an ECE can be) the claim is judged in absolute terms, the paper's relative effect "
        "taken of the measured reference (said in the row). A floor claim's d is its value − the floor. p"
        " is the bootstrap p of the test that decides the verdict (two-sided for d = 0; TOST inside a "
        "margin, or leaving it; two-sided against a floor), shown raw and (adjusted) by Benjamini–Hochberg"
        " over every judged condition of the report (the claims' overall tests form a second family); α "
        "= 0.05. A claim over several conditions is judged from their inverse-variance pooled estimate, "
        "never a vote, unless Cochran's Q says the conditions disagree (mixed). Where a claim rests on one"
        " condition while its grid has more, the row says so and why.",
        "",
        "A condition is judged only when its preconditions hold (✓; ✗ failed, ? could not be checked); "
        "a condition that fails one still shows its d and CI, marked *not judged*, so that evidence "
        "either way stays in view:",
        "",
        *(f"- **{name}**: {rule}" for name, rule in RULES.items()),
        "",
        "| verdict | meaning |",
        "| --- | --- |",
        *(f"| **{v}** | {statistics.DEFINITIONS[v]} |" for v in VERDICTS),
        "",
    ]


PAPERS_SCALE = (
    "The papers fine-tuned BERT-base cross-encoders (paper 001: BERT-L2 and BERT-L4; paper 002 several "
    "pretrained rerankers) on their full training sets, 1 to 3 epochs at up to 512 tokens, on GPUs. The "
    "rankers here are smaller, as the table says: a verdict is about them, at this scale, and a claim "
    "not seen here may hold at the papers' scale."
)


def _scale(runs: Sequence[Run]) -> list[str]:
    """The scale of every grid's rankers: backbone, depth, tokens, training data, epochs, device."""
    if not runs:
        return []
    lines = [
        "## The scale of these rankers",
        "",
        PAPERS_SCALE,
        "",
        "| run directory | grid | backbone | layers | max tokens | training queries per task | epochs "
        "| device |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        model, train = run.spec.model, run.spec.train
        queries = f"at most {train.max_queries:,}" if train.max_queries else "all"
        stops = ", early stopping on dev" if train.early_stopping else ""
        lines.append(
            f"| {markdown_text(str(run.folder))} | {run.spec.name} | "
            f"{markdown_text(model.backbone or 'all-MiniLM-L6-v2')} | "
            f"{model.layers or 6} | {model.max_length} | {queries} | up to {train.epochs}{stops} | "
            f"{markdown_text(device_of(run))} |"
        )
    return [*lines, ""]


def device_of(run: Run) -> str:
    """Where a run's members trained: the machine its run directory records, else the grid's
    resources (no GPU per trial: the CPU)."""
    recorded = run.folder / "machine.json"  # written by the full-scale GPU call (benchmarks.gpu.fullscale)
    if recorded.is_file():
        try:
            described = json.loads(recorded.read_text(encoding="utf-8"))
            name, weights = described.get("gpu") or described["device"], described.get("weights")
        except (OSError, ValueError, KeyError, AttributeError) as error:
            raise RankuqError(f"{recorded}: not a JSON object with a device ({error})") from None
        return f"{name} (weights: {weights})" if weights else str(name)
    return "CPU" if run.spec.resources.gpus_per_trial == 0 else "GPU (not recorded)"


def _counts(rows: Sequence[Row], heading: str = "## Verdicts per paper") -> list[str]:
    papers = list(dict.fromkeys(paper_of(row.claim) for row in rows))
    lines = [
        heading,
        "",
        "| paper | claims | " + " | ".join(VERDICTS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in VERDICTS) + " |",
    ]
    for paper in papers:
        mine = [row for row in rows if paper_of(row.claim) == paper]
        counts = " | ".join(str(sum(row.verdict == v for row in mine)) for v in VERDICTS)
        lines.append(f"| {paper} | {len(mine)} | {counts} |")
    return [*lines, ""]


def _claims_table(rows: Sequence[Row], title: str) -> list[str]:
    lines = [
        title,
        "",
        "| claim | the paper | paper's d | measured | ours: d [95 % CI] | p (adjusted) | verdict "
        "| produced by |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        claim = row.claim
        measured = f"{claim.method}: {claim.metric} vs {claim.compared()} ({claim.expect}"
        measured += (
            f" ±{_number(claim.margin, claim.scale).lstrip('+')})" if claim.expect == "within" else ")"
        )
        if row.overall is not None:
            ours = _effect(row.overall, claim.scale, offset(claim)) + _judged_on(row)
            p = f"{_p(row.overall_p, row.overall)} ({_p(row.overall_adjusted_p)})"
        else:
            ours, p = _not_judged(row), "—"
        run = _run_command(row.run) if row.run is not None else f"`{row.command}`" if row.command else "—"
        if row.run is not None:
            run += f" on the {markdown_text(device_of(row.run))}"
        if row.run is not None and _stale(row.run):
            run += " (a stale run: see the run directories below)"
        effect = claim.paper_effect
        paper_effect = "none given" if effect is None else _number(effect, claim.scale)
        lines.append(
            f"| {claim.id}: {_cell(claim.text)} | {_cell(claim.paper)} ({_cell(claim.source)}) | "
            f"{paper_effect} | "
            f"{_cell(measured)} | {ours} | {p} | **{row.verdict}** | {run} |"
        )
    return [*lines, ""]


def _judged_on(row: Row) -> str:
    """Which conditions the overall estimate pools: several (with Cochran's Q where they disagree),
    or one while the grid measured more (and why the others are out)."""
    judged = judged_conditions(row)
    if len(judged) > 1:
        text = f" pooled over {len(judged)} conditions"
        estimate = row.overall
        if row.verdict == statistics.MIXED and isinstance(estimate, statistics.Pooled):
            text += f"; Cochran's Q {estimate.q:.1f}, p {_p(estimate.q_p)}: the conditions disagree"
        return text
    others = [m for m in row.measured if m.verdict in LEFT_OUT]
    if len(judged) == 1 and others:
        why = "; ".join(
            f"{markdown_text(m.condition)}: {m.failed.name if m.failed else m.verdict}" for m in others
        )
        return f" (rests on one condition, {markdown_text(judged[0].condition)}; the others are out: {why})"
    return ""


def _not_judged(row: Row) -> str:
    """An untestable claim's failed precondition, and its effect all the same (pooled over the
    conditions that have one), so that evidence either way stays in view."""
    shown = [m for m in row.measured if m.effect is not None]
    if row.verdict != statistics.UNTESTABLE or not shown:
        return _cell(row.note) or "—"
    effects = [m.effect for m in shown if m.effect is not None]
    estimate: statistics.Estimate = effects[0] if len(effects) == 1 else statistics.pooled(effects)
    where = markdown_text(shown[0].condition) if len(shown) == 1 else f"pooled over {len(shown)} conditions"
    measured = _effect(estimate, row.claim.scale, offset(row.claim))
    return f"*not judged* ({_cell(row.note)}); measured: {measured} ({where})"


def _conditions_table(rows: Sequence[Row], heading: bool = True) -> list[str]:
    lines = [
        *(["## Per condition", ""] if heading else []),
        "| claim | condition | value vs reference | d [95 % CI] | p | p adjusted | preconditions | verdict "
        "| power |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        for m in row.measured:
            scale = row.claim.scale
            p = _p(m.p, m.effect) if m.effect is not None else "—"
            verdict = m.verdict + (f": {_cell(m.note)}" if m.note else "")
            effect = _effect(m.effect, scale, offset(row.claim))
            lines.append(
                f"| {row.claim.id} | {markdown_text(m.condition)} | {m.value:.3f} vs {m.reference:.3f} | "
                f"{effect} | {p} | {_p(m.adjusted_p)} | {_cell(_checks(m))} | {verdict} | "
                f"{_power(row.claim, m)} |"
            )
    return [*lines, ""]


def _runs_table(runs: Sequence[Run]) -> list[str]:
    checked = [(run, run.provenance) for run in runs if run.provenance is not None]
    if not checked:
        return []
    lines = [
        "## Run directories",
        "",
        "Whether each run's cells are what this checkout makes of its grid.yaml "
        "(`rankuq.bench.results.provenance`: the predictions key and probes version seeds.csv "
        "records per cell against the grid's plan now), and whether it has per-query records.",
        "",
        "| run directory | grid | cells | made by this checkout | per-query records |",
        "| --- | --- | --- | --- | --- |",
    ]
    for run, found in checked:
        records = "queries.parquet" if run.queries is not None else "none: rerun"
        lines.append(
            f"| {markdown_text(str(run.folder))} | {run.spec.name} | {found.cells} | "
            f"{_cell(found.describe())} | {records} |"
        )
    return lines


def _preconditions_table(runs: Sequence[Run]) -> list[str]:
    """Every condition of every run with per-query records: does bert work where it was trained
    (above BM25 on its training domain's lists), and, for a shifted condition, does the shift hurt it
    on the same test lists? bert against BM25 in the condition itself is shown, not required."""
    lines = [
        "## Preconditions per condition",
        "",
        "Whether each condition can test a claim (the rules at the top): `bert`'s AP against BM25's where it"
        " was trained, and, for a shift, against the AP of bert trained on the tested lists' own domain and"
        " negatives, on the same lists (95 % CIs, the same bootstrap). bert against BM25 in the condition "
        "itself is shown for reading, not required: the papers study rankers that the shift breaks.",
        "",
        "| grid | condition | kind | trained in | bert works where trained | the shift hurts bert | bert "
        "against BM25 here |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        if run.queries is None:
            continue
        for condition, (kind, _) in run.kinds.items():
            source = source_condition(run, condition)
            works = ranker_check(run, source) if source is not None else None
            hurts = shift_hurts(run, condition) if kind != "in-domain" else None
            here = ranker_check(run, condition)
            lines.append(
                f"| {run.spec.name} | {markdown_text(condition)} | {kind} | "
                f"{markdown_text(source) if source else '? none in the grid'} | {_mark(works)} | "
                f"{_mark(hurts)} | {_mark(here)} |"
            )
    return [*lines, ""] if len(lines) > 6 else []


def _mark(found: Check | None) -> str:
    return "—" if found is None else _cell(f"{MARKS[found.passed]} {found.detail}")


BREAK_EVEN = "break_even.AP"  # the abstention probe's smallest reference size from which u_lin beats u_std
PAPER_BREAK_EVEN = (9, 80)  # Gisserot-Boukhlef et al. 2024, Table 5: per dataset (38 on average)


def _works(run: Run, condition: str) -> bool | None:
    """Whether bert works where ``condition``'s ranker was trained (None: not checkable)."""
    source = source_condition(run, condition) if run.queries is not None else None
    return ranker_check(run, source).passed if source is not None else None


def break_even_text(value: float, largest: float) -> str:
    """A seed's break-even: the size, or "> N" when u_lin never stayed ahead within the N reference
    queries the dev split has (censored)."""
    return f"> {largest:.0f}" if math.isnan(value) else f"{value:.0f}"


def break_even_reading(values: Sequence[float], largest: float) -> str:
    """Where the seeds' break-evens fall against the paper's largest (no test: a size per seed)."""
    high = PAPER_BREAK_EVEN[1]
    beyond = sum(v > high or (math.isnan(v) and largest >= high) for v in values)
    unknown = sum(math.isnan(v) and largest < high for v in values)
    if unknown:
        return f"{unknown} of {len(values)} seeds censored before {high}: the dev split is too small to tell"
    if beyond:
        return f"{beyond} of {len(values)} seeds beyond the paper's {high}"
    return f"every seed within the paper's {high}"


def _break_even_table(runs: Sequence[Run]) -> list[str]:
    """bert's break-even per seed in each condition of the runs that measured it (paper 002, §5.5)."""
    lines = [
        "## Reference size at which u_lin overtakes u_std",
        "",
        f"Paper 002 (Gisserot-Boukhlef et al. 2024, Table 5) reports the number of reference queries from "
        f"which u_lin stays ahead of u_std: {PAPER_BREAK_EVEN[0]} to {PAPER_BREAK_EVEN[1]} per dataset, 38 "
        "on average. Here bert's, per seed (the abstention probe's `break_even.AP`, on reference sets drawn "
        'from the dev split, sizes 5, 10, 20, 50, 100, … and the whole split); "> N": u_lin never stayed '
        "ahead within the N queries the dev split has (censored). A size per seed, no test: the rows are "
        "described, not judged, and read only where bert works where it was trained.",
        "",
        "| grid | condition | bert works where trained | dev queries (N) | break-even per seed "
        "| against the paper |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        if BREAK_EVEN not in run.seeds:
            continue
        bert = run.seeds[run.seeds.method == "bert"].sort_values("seed")
        for condition, cell in bert.groupby("condition", sort=False):
            values = cell[BREAK_EVEN].tolist()
            largest = float(cell[f"{BREAK_EVEN}.largest"].max())
            sizes = ", ".join(break_even_text(v, largest) for v in values)
            works = _works(run, str(condition))
            lines.append(
                f"| {run.spec.name} | {markdown_text(condition)} | {MARKS[works]} | {largest:.0f} | "
                f"{sizes} | {break_even_reading(values, largest) if works else '—'} |"
            )
    return [*lines, ""] if len(lines) > 8 else []


def render(
    rows: Sequence[Row], command: str, runs: Sequence[Run] = (), forest: str = "findings-forest.png"
) -> str:
    """docs/findings.md: how to read it, the verdicts per paper, a row per claim, each claim's
    conditions, this setup's sanity checks, and whether each run directory is this checkout's."""
    claims = [row for row in rows if not row.claim.sanity]
    sanity = [row for row in rows if row.claim.sanity]
    lines = [
        *_header(command, forest, runs),
        *_counts(claims),
        *_claims_table(claims, "## The papers' claims"),
        *_conditions_table(claims),
        *_break_even_table(runs),
        *_claims_table(
            sanity,
            "## Sanity checks of this setup\n\nNot the papers' claims: floors this project requires before "
            "it reads a ranker's uncertainty (a fine-tuned cross-encoder above BM25, WikiQA AP of at least "
            "0.70), judged as the claims are.",
        ),
        *_conditions_table(sanity, heading=False),
        *_preconditions_table(runs),
        *_runs_table(runs),
    ]
    return "\n".join(lines) + "\n"


README_START = "<!-- findings:start -->"
README_END = "<!-- findings:end -->"


def readme_summary(rows: Sequence[Row], report: str) -> str:
    """The block a README keeps between README_START and README_END: the verdicts per paper of
    ``rows`` (the report's own table), linked to the ``report`` and its forest plot."""
    claims = [row for row in rows if not row.claim.sanity]
    forest = report.removesuffix(".md") + "-forest.png"
    return "\n".join(
        [
            README_START,
            *_counts(
                claims,
                f"**What the runs found**, generated by `rankuq findings` into [{report}]({report}) "
                f"with every claim's effect, CI, paper's effect and preconditions ([forest plot]({forest})); "
                "verdicts per paper:",
            ),
            README_END,
        ]
    )


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
    write ``out`` and its forest plot beside it, and the summary block of ``readme`` if given;
    returns ``out``. A run whose cells this checkout would make otherwise (stale) is refused unless
    ``allow_stale``, which writes it marked."""
    if not run_dirs:
        raise RankuqError("rankuq findings: name at least one run directory of `rankuq run`")
    if readme is not None:
        _readme_with(readme, "")  # a README without its block fails before the claims are measured
    runs = [read_run(Path(folder)) for folder in run_dirs]
    folders = [run.folder.resolve() for run in runs]
    twice = sorted({str(folder) for folder in folders if folders.count(folder) > 1})
    if twice:
        raise RankuqError(f"rankuq findings: run directory {twice[0]} is given twice; give it once")
    stale = [run for run in runs if _stale(run)]
    if stale and not allow_stale:
        run = stale[0]
        assert run.provenance is not None
        raise RankuqError(
            f"{run.folder}: {run.provenance.describe()}; rerun {_run_command(run)} (it redoes what changed), "
            "or pass --allow-stale to write the findings with the run marked stale"
        )
    costs = read_costs(cost)
    given = [arg for path in cost for arg in ("--cost", str(path))]
    given += ["--allow-stale"] if allow_stale else []
    given += ["--readme", str(readme)] if readme is not None else []
    command = shlex.join(["rankuq", "findings", *map(str, run_dirs), *given, "--out", str(out)])
    rows = judge_all([row for claim in claims for row in assess_runs(claim, runs, costs)])
    forest = out.with_name(f"{out.stem}-forest.png")
    out.parent.mkdir(parents=True, exist_ok=True)
    forest_plot(rows, forest)
    atomic_write(out, render(rows, command, runs, forest.name))
    if readme is not None:
        report = Path(os.path.relpath(out.resolve(), readme.resolve().parent)).as_posix()
        atomic_write(readme, _readme_with(readme, readme_summary(rows, report)))
    return out
