"""Run a grid end to end: shards → trained members (Tune/Train) → predictions (Ray Data) → metrics
→ MLflow → leaderboard. Every stage is cached by a content hash, so a rerun only does what is new."""

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import ray
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rankuq import methods
from rankuq.bench import metrics
from rankuq.bench.assess import cached_probes, headline, significance
from rankuq.bench.engine import MODEL_FILE, ray_session, score_shards, train_members
from rankuq.bench.files import atomic_write
from rankuq.bench.grid import GridSpec, Shift, Side
from rankuq.bench.leaderboard import (
    LEADERBOARD_METRICS,
    RANKING_METRICS,
    board_columns,
    leaderboard,
    metrics_of,
    read_run_dir,
    write_csv,
)
from rankuq.bench.predictions import is_probabilistic
from rankuq.bench.probes import scored_lists
from rankuq.bench.report import write_report
from rankuq.bench.search import TRIALS_FILE, SearchResult, search_risk_b, search_training, tuned_section
from rankuq.bench.tracking import (
    BASELINE_TAG,
    LEVEL_TAG,
    METRICS_TAG,
    PLOT_INDEX,
    ROW_TAG,
    Tracker,
    default_tracking_uri,
)
from rankuq.methods.base import MethodParams
from rankuq.tasks.base import data_root
from rankuq.tasks.shards import build_shards


def content_key(*parts: object) -> str:
    """A short stable hash of JSON-able parts: the cache and MLflow identity of a stage's output."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def member_seed(seed: int, member: int) -> int:
    """Training seed of ensemble member ``member`` of grid seed ``seed``; member 0 is `bert`'s model."""
    return seed + 1000 * member


@dataclass(frozen=True)
class Cell:
    """One (condition, method, seed) of the grid and the trained members it scores with."""

    condition: str  # the train → test label (the task's name when both sides are that task)
    task: str  # the tested task
    method: str
    seed: int
    members: tuple[str, ...]
    key: str  # of its predictions on the tested split
    dev_key: str | None  # of its predictions on the dev split the probes fit on
    tuned: tuple[tuple[str, Any], ...] = ()  # searched key → chosen value, for its trained models


@dataclass(frozen=True)
class Study:
    """A cell's probe metrics, notes and plot files (one seed)."""

    metrics: dict[str, float]
    notes: list[str]
    plots: list[Path]
    key: str  # of the probes' inputs: both predictions and a searched b
    searched: dict[str, Any]  # the searched values this seed used (train.lr, risk.b, …)


class GridRun:
    def __init__(
        self,
        spec: GridSpec,
        params: dict[str, MethodParams],
        run_dir: Path,
        tracking_uri: str | None = None,
        address: str | None = None,
        console: Console | None = None,
    ) -> None:
        self.spec, self.params, self.address = spec, params, address
        self.run_dir = run_dir.resolve()
        self.tracking_uri = tracking_uri or default_tracking_uri(self.run_dir)
        self.console = console or Console(stderr=True)
        self._ray = ExitStack()  # holds the Ray session from its first need: a finished grid never starts Ray

    def run(self) -> pd.DataFrame:
        """Run (or resume) the grid; return the leaderboard."""
        root = data_root(self.spec.data_dir)  # fails before anything is written
        self.run_dir.mkdir(parents=True, exist_ok=True)
        conditions = self.spec.conditions()
        train_shards = {c.label(): self._shards(c.train, "train", root) for c in conditions}
        eval_shards = {c.label(): self._shards(c.test, self.spec.eval.split, root) for c in conditions}
        dev_split = self.spec.eval.dev_split
        dev_shards = (
            {c.label(): self._shards(c.test, dev_split, root) for c in conditions} if dev_split else {}
        )
        # Post-hoc methods (temperature) fit on another split of the tested lists, found beside them.
        fit_splits = {methods.get(name).calibration_split for name in self.params} - {None}
        fit_shards = {
            (c.label(), split): self._shards(c.test, split, root) for c in conditions for split in fit_splits
        }
        search = self.spec.search
        # Training searches score the dev lists of the train side: a shift is not tuned on its target.
        train_dev = (
            {c.label(): self._shards(c.train, dev_split, root) for c in conditions}
            if search and search.training_keys()
            else {}
        )
        with self._ray:
            if search:
                self._start_ray()  # the searches are Tune experiments (a finished one is only read)
            searches = self._search_training(conditions, train_shards, train_dev)
            jobs, cells = self._plan(conditions, train_shards, eval_shards, dev_shards, fit_shards, searches)
            self._train(jobs)
            predictions, dev = {}, {}
            for cell in self._progress_over("scoring cells", cells):
                predictions[cell] = self._predict(cell, eval_shards[cell.condition], cell.key, "predictions")
                if cell.dev_key:
                    dev[cell] = self._predict(
                        cell, dev_shards[cell.condition], cell.dev_key, "predictions-dev"
                    )
            risk = self._search_risk(cells, dev)
        studies = {
            cell: self._study(cell, predictions[cell], dev.get(cell), risk.get(cell))
            for cell in self._progress_over("probing cells", cells)
        }
        results = pd.DataFrame([self._evaluate(cell, predictions[cell], studies[cell]) for cell in cells])
        board = leaderboard(results, self._significance(predictions), self.spec.baseline)
        csv, index = write_csv(board, self.run_dir), self._plot_index(studies)
        # leaderboard.md (paper 000's layout) and report.html, read back as `rankuq leaderboard` does
        files = (*write_report(read_run_dir(self.run_dir), self.run_dir), csv, index)
        self._track(studies, results, board, files, [*searches.values(), *risk.values()])
        return board

    def _shards(self, side: Side, split: str, root: Path) -> Path:
        """Candidate lists of one side; lists are cut with data seed 0 so every grid seed sees the same."""
        return build_shards(
            side.task,
            split,
            root=root,
            cache_dir=self.run_dir / "cache",
            # NOTA lists are what the nota variant and probe are about; ranking metrics skip them anyway.
            include_nota=split == "train"
            or side.variant == "nota"
            or self.spec.eval.include_nota
            or "nota" in self.spec.eval.probes,
            strategy=side.ns,
            n=side.n,
            variant=side.variant,
        )

    def _trainer(self, name: str) -> str | None:
        """Who trains ``name``'s models: itself (its own head or loss), `bert` (the shared
        cross-encoder), or nobody (lexical baselines)."""
        method = methods.get(name)()
        if not method.trains:
            return None
        return name if method.training_identity(self.params[name]) is not None else "bert"

    def _tuned(self, name: str, chosen: dict[str, Any]) -> tuple[MethodParams, dict, dict]:
        """``name``'s parameters, model and train settings with the searched values ``chosen``."""
        params = self.params[name]
        return (
            type(params)(**tuned_section(name, params.model_dump(), chosen)),
            tuned_section("model", self.spec.model.model_dump(), chosen),
            tuned_section("train", self.spec.train.model_dump(), chosen),
        )

    def _job(
        self, name: str, params: MethodParams, shards: Path, seed: int, model: dict, train: dict
    ) -> dict:
        """The training job of one member of ``name`` (its trainer's model, under ``seed``)."""
        trainer = self._trainer(name)
        identity = methods.get(name)().training_identity(params)
        resources = self.spec.resources
        # Data-parallel steps average several batches: another model (one worker keeps the old keys).
        workers = [resources.workers_per_trial] if resources.workers_per_trial > 1 else []
        return {
            "key": content_key("member", shards.name, seed, model, train, identity, *workers),
            "method": trainer,
            "params": params.model_dump() if trainer == name else {},
            "shards": str(shards),
            "seed": seed,
            "model": model,
            "train": train,
            "cpus": resources.cpus_per_trial,
            "gpus": resources.gpus_per_trial,
            "workers": resources.workers_per_trial,
        }

    def _search_training(
        self, conditions: list[Shift], train_shards: dict[str, Path], dev_shards: dict[str, Path]
    ) -> dict[tuple[str, str], SearchResult]:
        """One search per trained model (trainer × train side) that a searched key changes, run on the
        grid's first seed and scored on the train side's dev lists; keyed by (shards, trainer)."""
        search, spec = self.spec.search, self.spec
        found: dict[tuple[str, str], SearchResult] = {}
        if not dev_shards:
            return found
        for condition in conditions:
            shards, dev = train_shards[condition.label()], dev_shards[condition.label()]
            for name in self.params:
                trainer = self._trainer(name)
                keys = search.keys_for(trainer) if trainer else []
                if not keys or (shards.name, trainer) in found:
                    continue
                model, train = spec.model.model_dump(), spec.train.model_dump()
                job = self._job(name, self.params[name], shards, spec.seeds[0], model, train)
                key = content_key("search", job["key"], dev.name, search.identity(keys))
                job |= {
                    "dev": {"shards": str(dev), "metric": search.metric, "batch_size": spec.eval.batch_size},
                    "storage": str(self.run_dir / "ray"),
                    "workers": 1,  # a trial trains in its own process (bench.search)
                }
                folder = self.run_dir / "search" / key
                result = search_training(
                    f"{trainer} on {condition.train.label()}", job, search, keys, folder, self._concurrency()
                )
                self.console.print(result.line())
                found[shards.name, trainer] = result
        return found

    def _plan(
        self,
        conditions: list[Shift],
        train_shards: dict[str, Path],
        eval_shards: dict[str, Path],
        dev_shards: dict[str, Path],
        fit_shards: dict[tuple[str, str], Path],
        searches: dict[tuple[str, str], SearchResult],
    ) -> tuple[dict, list[Cell]]:
        jobs: dict[str, dict] = {}
        cells = []
        for condition in conditions:
            label = condition.label()
            shards = train_shards[label]
            for name in self.params:
                method = methods.get(name)()
                search = searches.get((shards.name, self._trainer(name)))
                chosen = search.best if search else {}
                params, model, train = self._tuned(name, chosen)
                # A post-hoc method fitted on the dev split cannot score it: its probes fit on test.
                dev = None if method.calibration_split == self.spec.eval.dev_split else dev_shards.get(label)
                for seed in self.spec.seeds:
                    count = method.members(params) if method.trains else 0
                    members = [
                        self._job(name, params, shards, member_seed(seed, m), model, train)
                        for m in range(count)
                    ]
                    jobs |= {job["key"]: job for job in members}
                    keys = tuple(job["key"] for job in members)
                    fit = fit_shards.get((label, method.calibration_split))
                    fitted = fit.name if fit else None
                    identity = (
                        name,
                        params.model_dump(),
                        model,
                        list(keys),
                        seed,
                        fitted,
                        self.scoring_precision,
                    )
                    key = content_key("predictions", eval_shards[label].name, *identity)
                    dev_key = content_key("predictions", dev.name, *identity) if dev else None
                    tuned = tuple(chosen.items())
                    cells.append(Cell(label, condition.test.task, name, seed, keys, key, dev_key, tuned))
        return jobs, cells

    @property
    def scoring_precision(self) -> str:
        """The scoring precision, "auto" resolved: bfloat16 where scoring gets a GPU."""
        precision = self.spec.eval.precision
        if precision == "auto":
            return "bf16" if self.spec.resources.gpus_per_trial > 0 else "fp32"
        return precision

    @property
    def models_dir(self) -> Path:
        return self.run_dir / "models"

    def _start_ray(self) -> None:
        if not ray.is_initialized():
            self._ray.enter_context(ray_session(self.address))

    def _train(self, jobs: dict[str, dict]) -> None:
        pending = [job for key, job in jobs.items() if not (self.models_dir / key / MODEL_FILE).exists()]
        self.console.print(f"[bold]training[/] {len(pending)} members ({len(jobs) - len(pending)} cached)")
        if not pending:
            return
        self._start_ray()
        with self._progress("training members", len(pending)) as advance:
            train_members(pending, self.models_dir, self.run_dir / "ray", self._concurrency(), advance)

    def _concurrency(self) -> int:
        """Trials at once: as set, else as many as the cluster's CPUs hold."""
        cpus = ray.cluster_resources().get("CPU", 1)
        return self.spec.resources.max_concurrent_trials or max(
            1, int(cpus // self.spec.resources.cpus_per_trial)
        )

    def _predict(self, cell: Cell, shards: Path, key: str, folder: str) -> pa.Table:
        path = self.run_dir / folder / cell.task / cell.method / f"seed-{cell.seed}-{key}.parquet"
        if path.exists():
            return pq.read_table(path)
        self._start_ray()
        threads = max(1, min(os.cpu_count() or 1, int(ray.available_resources().get("CPU", 1))))
        params, model, _ = self._tuned(cell.method, dict(cell.tuned))
        table = score_shards(
            cell.method,
            params.model_dump(),
            model,
            [self.models_dir / key / MODEL_FILE for key in cell.members],
            shards,
            self.spec.eval.batch_size,
            threads,
            gpus=min(1.0, self.spec.resources.gpus_per_trial),
            precision=self.scoring_precision,
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = path.with_name(f".{path.name}.tmp")
        pq.write_table(table, staging)
        os.replace(staging, path)
        return table

    def _search_risk(self, cells: list[Cell], dev: dict[Cell, pa.Table]) -> dict[Cell, SearchResult]:
        """Each stochastic cell's RA b, searched on its dev predictions (with one draw b changes nothing)."""
        search = self.spec.search
        if search is None or "risk.b" not in search.space:
            return {}
        found = {}
        for cell in cells:
            lists = scored_lists(dev[cell], "dev").with_relevant() if cell in dev else None
            if lists is None or lists.samples is None:
                continue
            key = content_key("search-b", cell.dev_key, search.identity(["risk.b"]))
            found[cell] = search_risk_b(
                f"risk.b of {cell.method} × {cell.condition} seed {cell.seed}",
                lists,
                search,
                self.run_dir / "search" / key,
                str(self.run_dir / "ray"),
                cell.seed,
            )
            self.console.print(found[cell].line())
        return found

    def _study(self, cell: Cell, table: pa.Table, dev: pa.Table | None, risk: SearchResult | None) -> Study:
        """The probes of one seed (cached), RA at the searched b when there is one."""
        searched = {**dict(cell.tuned), **(risk.best if risk else {})}
        b = searched.get("risk.b")
        key = content_key("probes", cell.key, cell.dev_key, b)
        folder = self.run_dir / "probes" / cell.task / cell.method / f"seed-{cell.seed}-{key}"
        options = {"risk": {"b": b}} if b is not None else {}
        found = cached_probes(folder, table, dev, self.spec.eval.probes, cell.seed, options)
        return Study(*found, key=key, searched=searched)

    def _evaluate(self, cell: Cell, table: pa.Table, study: Study) -> dict[str, object]:
        names = list(RANKING_METRICS) + (["ECE"] if is_probabilistic(table) else [])
        values = metrics.compute(table, names, drop_queries_without_relevant=True)
        return {
            "condition": cell.condition,
            "method": cell.method,
            "seed": cell.seed,
            "ECE": np.nan,
            **values,
            **headline(study.metrics),
        }

    def _significance(self, predictions: dict[Cell, pa.Table]) -> dict[tuple[str, str], dict[str, float]]:
        """Each (condition, method)'s p-values against the baseline method of that condition."""
        baseline = self.spec.baseline
        if baseline is None:
            return {}
        p_values = {}
        for condition in dict.fromkeys(cell.condition for cell in predictions):
            tables: dict[str, list[pa.Table]] = {}
            for cell, table in predictions.items():
                if cell.condition == condition:
                    tables.setdefault(cell.method, []).append(table)
            tests = significance(tables, baseline, RANKING_METRICS)
            p_values.update({(condition, method): values for method, values in tests.items()})
        return p_values

    def _plot_index(self, studies: dict[Cell, Study]) -> Path:
        """plots/ holds each (condition, method)'s plots of its first seed, listed in index.json."""
        folder = self.run_dir / "plots"
        folder.mkdir(exist_ok=True)
        index, seen = [], set()
        for cell, study in studies.items():
            if (cell.condition, cell.method) in seen:
                continue
            seen.add((cell.condition, cell.method))
            name = re.sub(r"[^\w.-]+", "_", cell.condition)  # shift labels hold ':' and '→'
            for plot in study.plots:
                target = folder / f"{plot.stem}-{name}-{cell.method}.png"
                shutil.copyfile(plot, target)
                index.append(
                    {
                        "condition": cell.condition,
                        "method": cell.method,
                        "kind": plot.stem,
                        "path": target.name,
                    }
                )
        path = folder / PLOT_INDEX
        atomic_write(path, json.dumps(index, indent=1, ensure_ascii=False))
        return path

    def _track(
        self,
        studies: dict[Cell, Study],
        results: pd.DataFrame,
        board: pd.DataFrame,
        files: tuple[Path, ...],
        searches: list[SearchResult],
    ) -> None:
        """Log what MLflow does not hold yet; a rerun of finished cells logs nothing. A run counts as
        held once finished, so one an interrupted driver left open is completed, never duplicated."""
        local = self.tracking_uri == default_tracking_uri(self.run_dir)
        tracker = Tracker(self.tracking_uri, self.run_dir / "mlartifacts" if local else None)
        spec = self.spec
        grid_key = content_key("grid", spec.model_dump(mode="json"))
        metrics = metrics_of(board)
        grid_tags = {LEVEL_TAG: "grid", BASELINE_TAG: spec.baseline or "", METRICS_TAG: json.dumps(metrics)}
        changed = tracker.find(grid_key, finished=True) is None
        parent = tracker.open(grid_key, spec.name, tags=grid_tags)
        for search in searches:
            self._track_search(tracker, parent, grid_key, search)
        plots = json.loads(files[-1].read_text())  # the plot index
        for row, summary in board.iterrows():
            condition, method = summary.condition, summary.method
            cells = [cell for cell in studies if (cell.condition, cell.method) == (condition, method)]
            cell_key = content_key("cell", grid_key, condition, method, [studies[cell].key for cell in cells])
            if tracker.find(cell_key, finished=True):
                continue
            changed = True
            tags = {"method": method, "task": cells[0].task, "shift": condition}
            child = tracker.open(
                cell_key, f"{method} × {condition}", parent, {**tags, LEVEL_TAG: "cell", ROW_TAG: str(row)}
            )
            seeds = results[(results.condition == condition) & (results.method == method)]
            for cell, values in zip(cells, seeds.to_dict("records"), strict=True):
                # Keyed by its cell too: two conditions with one test side share bm25's predictions.
                seed_key = content_key("seed", cell_key, cell.key)
                self._track_seed(tracker, child, seed_key, cell, values, studies[cell], tags)
            own = [e["path"] for e in plots if (e["condition"], e["method"]) == (condition, method)]
            tracker.log(
                child,
                metrics=_finite(summary, board_columns(metrics)),  # "R@1 std" → R_at_1_std (mlflow_name)
                params={**tags, "seeds": len(cells)},
                artifacts=tuple(files[-1].parent / name for name in own),
            )
            tracker.finish(child)
        if changed:
            tracker.log(parent, artifacts=files)
        tracker.finish(parent)

    def _track_search(self, tracker: Tracker, parent: str, grid_key: str, search: SearchResult) -> None:
        """A search's run: the chosen values as params, the best dev metric, the trial table."""
        key = content_key("search", grid_key, search.folder.name)
        if tracker.find(key):
            return
        run = tracker.open(key, f"search {search.name}", parent, {LEVEL_TAG: "search"})
        values = {
            f"dev {search.metric}": search.score,
            "trials": search.trials,
            "stopped early": search.stopped,
        }
        tracker.log(run, metrics=values, params=search.best, artifacts=(search.folder / TRIALS_FILE,))
        tracker.finish(run)

    def _track_seed(
        self,
        tracker: Tracker,
        parent: str,
        key: str,
        cell: Cell,
        row: dict,
        study: Study,
        tags: dict[str, str],
    ) -> None:
        """A seed's run: its leaderboard metrics, every probe metric, its plots, and the probes' notes."""
        if tracker.find(key, finished=True):  # logged before the driver was interrupted
            return
        seed_run = tracker.open(
            key,
            f"{cell.method} × {cell.condition} seed {cell.seed}",
            parent,
            {**tags, LEVEL_TAG: "seed", "seed": str(cell.seed)},
        )
        method_params = self._tuned(cell.method, dict(cell.tuned))[0].model_dump()
        params = {**tags, "seed": cell.seed, **method_params, **study.searched}
        values = {**_finite(study.metrics, study.metrics), **_finite(row, LEADERBOARD_METRICS)}
        notes = {"rankuq.notes": "\n".join(study.notes)[:5000]} if study.notes else {}
        tracker.log(seed_run, metrics=values, params=params, tags=notes, artifacts=tuple(study.plots))
        tracker.finish(seed_run)

    def _progress_over(self, what: str, cells: list[Cell]) -> Iterator[Cell]:
        with self._progress(what, len(cells)) as advance:
            for cell in cells:
                yield cell
                advance(f"{cell.method} × {cell.condition} seed {cell.seed}")

    @contextmanager
    def _progress(self, what: str, total: int) -> Iterator:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=self.console, transient=False) as progress:
            bar = progress.add_task(what, total=total)
            yield lambda done: progress.update(bar, advance=1, description=f"{what} (last: {done})")


def _finite(row: dict | pd.Series, names) -> dict[str, float]:
    return {n: float(row[n]) for n in names if n in row and np.isfinite(row[n])}
