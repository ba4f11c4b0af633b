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

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import ray
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import methods
from bench import metrics
from bench.assess import cached_probes, headline, significance
from bench.engine import MODEL_FILE, ray_session, score_shards, train_members
from bench.grid import GridSpec, Shift, Side
from bench.leaderboard import (
    LEADERBOARD_METRICS,
    RANKING_METRICS,
    board_columns,
    leaderboard,
    metrics_of,
    read_run_dir,
    write_csv,
)
from bench.predictions import is_probabilistic
from bench.report import write_report
from bench.tracking import (
    BASELINE_TAG,
    LEVEL_TAG,
    METRICS_TAG,
    PLOT_INDEX,
    ROW_TAG,
    Tracker,
    default_tracking_uri,
)
from methods.base import MethodParams
from tasks.base import data_root
from tasks.shards import build_shards


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

    @property
    def probe_key(self) -> str:
        return content_key("probes", self.key, self.dev_key)


@dataclass(frozen=True)
class Study:
    """A cell's probe metrics, notes and plot files (one seed)."""

    metrics: dict[str, float]
    notes: list[str]
    plots: list[Path]


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
        jobs, cells = self._plan(conditions, train_shards, eval_shards, dev_shards, fit_shards)
        with self._ray:
            self._train(jobs)
            predictions, dev = {}, {}
            for cell in self._progress_over("scoring cells", cells):
                predictions[cell] = self._predict(cell, eval_shards[cell.condition], cell.key, "predictions")
                if cell.dev_key:
                    dev[cell] = self._predict(
                        cell, dev_shards[cell.condition], cell.dev_key, "predictions-dev"
                    )
        studies = {
            cell: Study(
                *cached_probes(
                    self._probe_dir(cell), predictions[cell], dev.get(cell), self.spec.eval.probes, cell.seed
                )
            )
            for cell in self._progress_over("probing cells", cells)
        }
        results = pd.DataFrame([self._evaluate(cell, predictions[cell], studies[cell]) for cell in cells])
        board = leaderboard(results, self._significance(predictions), self.spec.baseline)
        csv, index = write_csv(board, self.run_dir), self._plot_index(studies)
        # leaderboard.md (paper 000's layout) and report.html, read back as `rankuq leaderboard` does
        files = (*write_report(read_run_dir(self.run_dir), self.run_dir), csv, index)
        self._track(studies, results, board, files)
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

    def _plan(
        self,
        conditions: list[Shift],
        train_shards: dict[str, Path],
        eval_shards: dict[str, Path],
        dev_shards: dict[str, Path],
        fit_shards: dict[tuple[str, str], Path],
    ) -> tuple[dict, list[Cell]]:
        spec = self.spec
        model, train = spec.model.model_dump(), spec.train.model_dump()
        jobs: dict[str, dict] = {}
        cells = []
        for condition in conditions:
            label = condition.label()
            for name, params in self.params.items():
                method = methods.get(name)()
                for seed in spec.seeds:
                    members = []
                    identity = method.training_identity(params) if method.trains else None
                    trainer = (name, params.model_dump()) if identity is not None else ("bert", {})
                    for member in range(method.members(params) if method.trains else 0):
                        job_seed = member_seed(seed, member)
                        shards = train_shards[label]
                        key = content_key("member", shards.name, job_seed, model, train, identity)
                        jobs[key] = {
                            "key": key,
                            "method": trainer[0],
                            "params": trainer[1],
                            "shards": str(shards),
                            "seed": job_seed,
                            "model": model,
                            "train": train,
                            "cpus": spec.resources.cpus_per_trial,
                            "gpus": spec.resources.gpus_per_trial,
                        }
                        members.append(key)
                    fit = fit_shards.get((label, method.calibration_split))
                    identity = (name, params.model_dump(), model, members, seed, fit.name if fit else None)
                    key = content_key("predictions", eval_shards[label].name, *identity)
                    # A post-hoc method fitted on the dev split cannot score it: its probes fit on test.
                    dev = dev_shards.get(label) if method.calibration_split != spec.eval.dev_split else None
                    dev_key = content_key("predictions", dev.name, *identity) if dev else None
                    cells.append(Cell(label, condition.test.task, name, seed, tuple(members), key, dev_key))
        return jobs, cells

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
        cpus = ray.cluster_resources().get("CPU", 1)
        concurrent = self.spec.resources.max_concurrent_trials or max(
            1, int(cpus // self.spec.resources.cpus_per_trial)
        )
        with self._progress("training members", len(pending)) as advance:
            train_members(pending, self.models_dir, self.run_dir / "ray", concurrent, advance)

    def _predict(self, cell: Cell, shards: Path, key: str, folder: str) -> pa.Table:
        path = self.run_dir / folder / cell.task / cell.method / f"seed-{cell.seed}-{key}.parquet"
        if path.exists():
            return pq.read_table(path)
        self._start_ray()
        threads = max(1, min(os.cpu_count() or 1, int(ray.available_resources().get("CPU", 1))))
        table = score_shards(
            cell.method,
            self.params[cell.method].model_dump(),
            self.spec.model.model_dump(),
            [self.models_dir / key / MODEL_FILE for key in cell.members],
            shards,
            self.spec.eval.batch_size,
            threads,
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = path.with_name(f".{path.name}.tmp")
        pq.write_table(table, staging)
        os.replace(staging, path)
        return table

    def _probe_dir(self, cell: Cell) -> Path:
        return self.run_dir / "probes" / cell.task / cell.method / f"seed-{cell.seed}-{cell.probe_key}"

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
        staging = path.with_name(f".{path.name}.tmp")
        staging.write_text(json.dumps(index, indent=1, ensure_ascii=False))
        os.replace(staging, path)
        return path

    def _track(
        self, studies: dict[Cell, Study], results: pd.DataFrame, board: pd.DataFrame, files: tuple[Path, ...]
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
        plots = json.loads(files[-1].read_text())  # the plot index
        for row, summary in board.iterrows():
            condition, method = summary.condition, summary.method
            cells = [cell for cell in studies if (cell.condition, cell.method) == (condition, method)]
            cell_key = content_key("cell", grid_key, condition, method, [cell.probe_key for cell in cells])
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
        params = {**tags, "seed": cell.seed, **self.params[cell.method].model_dump()}
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
