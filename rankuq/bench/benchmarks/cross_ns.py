"""Cross-NS shifts on dev (issue 29): which test-side negative samplings lower `bert`'s R@1.

For each domain of a finished run (paper000 by default), the `bert` members the run trained on the
domain's no-shift train side score the domain's **dev** lists, built as the run's no-shift test side
builds them (R_10: one relevant and nine non-relevant candidates) but with each test-side negative
sampling in turn (bm25, random, dense). A (train NS, test NS) pair is a shift when `bert`'s R@1 on it
is below its R@1 on the no-shift list: the 95 % interval of the difference, from the paired two-level
bootstrap over seeds and queries (``bench.statistics``), lies below 0. BM25's R@1 on the
same lists stands beside it (random negatives are often easier for BM25, not harder).

Nothing is trained and nothing is written into the run directory: the members are read from
RUN_DIR/models (checked against the predictions keys RUN_DIR/seeds.csv records), the dev lists are
built under --cache. Scoring runs in this process on one thread.

    python -m rankuq.bench.benchmarks.cross_ns [--run-dir paper_runs/paper000] [--domains clariq,wikiqa]
        [--ns bm25,random,dense] [--seeds 0,1,2] [--cache build/cross_ns] [--out cross_ns.csv]
"""

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from rankuq import methods
from rankuq.bench import metrics
from rankuq.bench.config.grid import GridSpec, Shift, dev_side, load_grid, parse_grid
from rankuq.bench.engine.scoring import SCORED_COLUMNS, score_frame
from rankuq.bench.planning.plan import Cell, Plan, plan, side_lists
from rankuq.bench.results.provenance import PREDICTIONS_KEY
from rankuq.bench.rundir.layout import SEEDS_CSV, TRAINING_FILE, RunLayout
from rankuq.bench.statistics import Effect, difference, mean, paired_bootstrap, value
from rankuq.contract import read_shards
from rankuq.errors import RankuqError
from rankuq.methods.base import MethodParams
from rankuq.tasks.base import data_root
from rankuq.tasks.shards import build_shards

METRIC = "R@1"
RANKERS = ("bm25", "bert")
COLUMNS = [
    "domain", "ns", "queries", "seeds",
    "bert R@1", "bert low", "bert high", "bm25 R@1", "bm25 low", "bm25 high",
    "d R@1", "d low", "d high", "p", "shift",
]  # fmt: skip
Grid = tuple[GridSpec, dict[str, MethodParams]]


def no_shift(spec: GridSpec, domain: str) -> Shift | None:
    """The grid's condition named ``domain`` that trains and tests on it (paper000's 'clariq', …)."""
    found = [c for c in spec.conditions() if c.label() == domain and c.train.task == c.test.task == domain]
    return found[0] if found else None


def measurement_grid(
    spec: GridSpec, domains: Sequence[str], strategies: Sequence[str], seeds: Sequence[int], source: str
) -> Grid:
    """The run's grid cut to bm25 and bert, ``seeds``, and one condition per (domain, ns): the
    domain's no-shift train side (so its members' keys are the run's), its no-shift test side with
    the negative sampling ``ns``."""
    missing = [name for name in RANKERS if name not in spec.methods]
    if missing:
        raise RankuqError(
            f"{source}: methods: the grid has no '{missing[0]}'; the measurement needs {RANKERS}"
        )
    shifts = []
    for domain in domains:
        condition = no_shift(spec, domain)
        if condition is None:
            names = [c.label() for c in spec.conditions() if c.train.task == c.test.task == c.label()]
            raise RankuqError(f"{source}: no no-shift condition named '{domain}'; --domains takes {names}")
        trained_on = condition.train.ns or spec.train.ns
        shifts += [
            {
                "name": f"{domain}-{trained_on}-to-{ns}",
                "train": condition.train.model_dump(),
                "test": condition.test.model_dump() | {"ns": ns},
            }
            for ns in strategies
        ]
    trained = {condition.train.task for condition in spec.conditions() if condition.label() in domains}
    raw = spec.model_dump(mode="json") | {
        "tasks": [],
        "shifts": shifts,
        "train_by_task": {task: keys for task, keys in spec.train_by_task.items() if task in trained},
        "methods": {name: spec.methods[name] for name in RANKERS},
        "baseline": "bert",
        "seeds": list(seeds),
    }
    return parse_grid(raw, f"{source} (cut to the cross-NS measurement)")


def check_members(grid: Plan, run_dir: Path, reference: Mapping[str, str]) -> None:
    """Every bert member is a whole folder of ``run_dir``, and the no-shift cells (test NS
    ``reference[domain]``) plan the predictions keys seeds.csv records for the run's own cells."""
    seeds_csv = run_dir / SEEDS_CSV
    if not seeds_csv.is_file():
        raise RankuqError(f"{seeds_csv}: not found; give --run-dir a finished run (rankuq run … --run-dir)")
    recorded = pd.read_csv(seeds_csv, dtype={PREDICTIONS_KEY: str})
    keys = {(r.condition, r.method, int(r.seed)): r[PREDICTIONS_KEY] for _, r in recorded.iterrows()}
    tested = {c.label(): c.test for c in grid.spec.conditions()}
    for cell in grid.cells:
        if cell.method != "bert":
            continue
        for key in cell.members:
            if not (grid.layout.member(key) / TRAINING_FILE).is_file():
                raise RankuqError(
                    f"{grid.layout.member(key)}: no trained member ({cell.label()}); finish the run first"
                )
        if tested[cell.condition].ns == reference[cell.task]:
            found = keys.get((cell.task, "bert", cell.seed))
            if found != cell.key:
                raise RankuqError(
                    f"{seeds_csv}: bert × {cell.task} seed {cell.seed} has predictions key {found}, this "
                    f"checkout plans {cell.key}: the members are not the run's; use the checkout that made it"
                )


def dev_lists(spec: GridSpec, condition: Shift, cache: Path) -> Path:
    """The condition's dev lists as the grid builds them (``plan``'s dev side), under ``cache``."""
    split = spec.eval.dev_split or "dev"
    root = data_root(spec.data_dir)
    lists = side_lists(spec, dev_side(condition, split, root), split)
    return build_shards(lists.task, lists.split, root=root, cache_dir=cache, **lists.arguments())


def per_query(grid: Plan, cell: Cell, folder: Path, frame: pd.DataFrame) -> pd.Series:
    """``cell``'s per-query R@1 on the lists ``frame`` (read from ``folder``), scored in-process."""
    spec = grid.scorer(cell, folder, None, threads=1)
    method = methods.create(spec.method, spec.params)
    checkpoints = [Path(path) for path in spec.checkpoints]
    score = method.make_scorer(spec.model, checkpoints, folder)
    table = score_frame(score, frame, grid.spec.eval.batch_size, method.probabilistic)
    qids, values = metrics.per_query(table, [METRIC], drop_queries_without_relevant=True)
    return pd.Series(values[METRIC], index=qids)


def aligned(series: Sequence[pd.Series]) -> list[np.ndarray]:
    """The values of the queries every series holds, in one order (the bootstrap's paired rows)."""
    common = sorted(set.intersection(*(set(s.index) for s in series)))
    return [s.loc[common].to_numpy(dtype=float) for s in series]


def is_shift(change: Effect) -> bool:
    """A shift lowers bert's R@1: the difference's 95 % interval lies below 0."""
    return bool(change.high < 0)


def shift_rows(
    domain: str,
    bert: Mapping[str, Sequence[pd.Series]],
    bm25: Mapping[str, pd.Series],
    reference: str,
    resamples: int = 10_000,
) -> list[dict[str, Any]]:
    """One row per test NS of ``domain``: bert's R@1 (mean over seeds, 95 % CI), BM25's, and bert's
    difference against its R@1 on the ``reference`` (no-shift) lists, with the shift decision. Every
    side holds the queries all lists hold; every seed scores the same queries (crossed design)."""
    strategies = list(bert)
    seeds = len(bert[reference])
    flat = aligned([*(s for ns in strategies for s in bert[ns]), *(bm25[ns] for ns in strategies)])
    by_ns = {ns: flat[i * seeds : (i + 1) * seeds] for i, ns in enumerate(strategies)}
    lexical = dict(zip(strategies, flat[len(strategies) * seeds :], strict=True))

    def bootstrap(sides: list[list[np.ndarray]], contrast: Any) -> Effect:
        return paired_bootstrap(sides, [mean()] * len(sides), contrast, resamples, design="crossed")

    rows = []
    for ns in strategies:
        own = bootstrap([by_ns[ns]], value(0))
        lex = bootstrap([[lexical[ns]]], value(0))
        change = bootstrap([by_ns[ns], by_ns[reference]], difference(0, 1))
        numbers = [own.d, own.low, own.high, lex.d, lex.low, lex.high, change.d, change.low, change.high]
        rows.append(
            dict(
                zip(
                    COLUMNS,
                    [domain, ns, len(lexical[ns]), seeds, *numbers, change.p, is_shift(change)],
                    strict=True,
                )
            )
        )
    return rows


def markdown(table: pd.DataFrame, reference: Mapping[str, str]) -> str:
    """The table as a Markdown pipe table: values with their 95 % intervals, three decimals; the
    no-shift list of each domain (test NS ``reference[domain]``) has no difference."""

    def ci(row: pd.Series, name: str, low: str, high: str) -> str:
        return f"{row[name]:.3f} [{row[low]:.3f}, {row[high]:.3f}]"

    lines = [
        "| domain | test NS | queries | seeds | bert R@1 [95 % CI] | BM25 R@1 [95 % CI] "
        "| bert's d against the no-shift list [95 % CI] | shift |",
        "| --- | --- | ---: | ---: | --- | --- | --- | --- |",
    ]
    for _, row in table.iterrows():
        change = (
            "(no-shift list)"
            if row["ns"] == reference[row["domain"]]
            else ci(row, "d R@1", "d low", "d high")
        )
        cells = [
            row["domain"],
            row["ns"],
            str(row["queries"]),
            str(row["seeds"]),
            ci(row, "bert R@1", "bert low", "bert high"),
            ci(row, "bm25 R@1", "bm25 low", "bm25 high"),
            change,
            "yes" if row["shift"] else "no",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def measure(grid: Plan, cache: Path, reference: Mapping[str, str], resamples: int) -> pd.DataFrame:
    """Score every condition's dev lists with bert (each seed) and BM25; the table of shift_rows."""
    bert: dict[str, dict[str, list[pd.Series]]] = {}
    bm25: dict[str, dict[str, pd.Series]] = {}
    for condition in grid.spec.conditions():
        domain, ns = condition.test.task, str(condition.test.ns)
        folder = dev_lists(grid.spec, condition, cache)
        frame = read_shards(folder).select(SCORED_COLUMNS).to_pandas()
        cells = [c for c in grid.cells if c.condition == condition.label()]
        started = time.perf_counter()
        bert.setdefault(domain, {})[ns] = [
            per_query(grid, c, folder, frame) for c in cells if c.method == "bert"
        ]
        lexical = next(c for c in cells if c.method == "bm25")  # deterministic: one seed is enough
        bm25.setdefault(domain, {})[ns] = per_query(grid, lexical, folder, frame)
        took = time.perf_counter() - started
        print(f"{condition.label()}: {folder.name}, {len(frame)} rows, scored in {took:.0f} s", flush=True)
    rows = [row for d in bert for row in shift_rows(d, bert[d], bm25[d], reference[d], resamples)]
    return pd.DataFrame(rows, columns=COLUMNS)


def references(spec: GridSpec, domains: Sequence[str], strategies: Sequence[str]) -> dict[str, str]:
    """Each domain's no-shift test NS (its reference list), which ``strategies`` must name."""
    found = {}
    for domain in domains:
        condition = no_shift(spec, domain)
        assert condition is not None  # measurement_grid checked it
        found[domain] = str(condition.test.ns)
        if found[domain] not in strategies:
            raise RankuqError(f"--ns {','.join(strategies)}: name the no-shift test NS '{found[domain]}' too")
    return found


def _options(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, default=Path("paper_runs/paper000"))
    parser.add_argument("--domains", default="clariq,wikiqa,semeval,trecqa_clean")
    parser.add_argument("--ns", default="bm25,random,dense", help="test-side negative samplings")
    parser.add_argument("--seeds", default=None, help="the run's seeds to score (default: all)")
    parser.add_argument(
        "--cache", type=Path, default=Path("build/cross_ns"), help="where dev lists are built"
    )
    parser.add_argument("--out", type=Path, default=Path("cross_ns.csv"))
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        source = args.run_dir / "grid.yaml"
        spec, _ = load_grid(source)
        seeds = [int(s) for s in _options(args.seeds)] if args.seeds else list(spec.seeds)
        if not set(seeds) <= set(spec.seeds):
            raise RankuqError(f"--seeds {args.seeds}: {source} trained seeds {spec.seeds} only")
        domains, strategies = _options(args.domains), _options(args.ns)
        cut = measurement_grid(spec, domains, strategies, seeds, str(source))
        reference = references(spec, domains, strategies)
        grid = plan(*cut, RunLayout(args.run_dir))
        check_members(grid, args.run_dir, reference)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table = measure(grid, args.cache, reference, args.resamples)
    except RankuqError as error:
        print(f"cross_ns: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    table.to_csv(args.out, index=False, float_format="%.4f")
    print(markdown(table, reference))


if __name__ == "__main__":
    main()
