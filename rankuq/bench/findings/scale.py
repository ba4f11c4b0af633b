"""The report's header tables: what was run (``scale_table``: per run directory, the rankers' size,
training, seeds, ensemble members and MC passes, test queries per condition, the device and the time
the run records) and what stands in for the papers' setup (``setups_table``: per grid, the papers'
model and datasets, declared in ``claims.setups``, beside this grid's own, read from its run)."""

import json
from collections.abc import Callable, Sequence

from rankuq.bench.config.grid import GridSpec
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.findings.claims.setups import SETUPS, TASKS
from rankuq.bench.findings.run_tables import cell, device_of
from rankuq.bench.findings.runs import FinishedRun
from rankuq.bench.results.rendering import markdown_text
from rankuq.bench.rundir import compute_log
from rankuq.errors import RankuqError

PAPERS_SCALE = (
    "The papers fine-tuned BERT-base cross-encoders (12 layers, 768 hidden; paper 001: BERT-L2 and "
    "BERT-L4, its first 2 and 4 layers; paper 002 used 22 off-the-shelf rerankers) on their full "
    "training sets, 1 to 3 epochs at up to 512 tokens, on GPUs. The rankers here are smaller, as the "
    "table says: a verdict is about them, at this scale, and a claim not seen here may hold at the "
    "papers' scale."
)
MINILM = "all-MiniLM-L6-v2"  # the default backbone: 6 layers, 384 hidden
SAMPLES = ("M", "T")  # ensemble members, stochastic passes (MC dropout, last-layer MC)


def model_text(spec: GridSpec) -> str:
    """This grid's ranker by its size: MiniLM-L6 (the whole all-MiniLM-L6-v2), MiniLM-L2 (its first 2
    layers), or a named backbone."""
    layers = spec.model.layers
    if spec.model.backbone is None:
        if layers is None or layers == 6:
            return f"MiniLM-L6 (the whole {MINILM}: 6 layers, 384 hidden)"
        return f"MiniLM-L{layers} (the first {layers} of the 6 layers of {MINILM})"
    return spec.model.backbone + (f", first {layers} layers" if layers else "")


def samples_text(spec: GridSpec) -> str:
    """Each method's ensemble members (M) and stochastic passes (T), with the methods' defaults."""
    found = []
    for name, params in spec.method_params("the run's grid.yaml").items():
        settings = params.model_dump()
        found += [f"{name} {key}={settings[key]}" for key in SAMPLES if key in settings]
    return ", ".join(found) or "—"


def queries_text(run: FinishedRun) -> str:
    """The test queries each condition scores: one number, a short list, or the range."""
    counts = run.queries.queries() if run.queries is not None else {}
    if not counts:
        return "not recorded"
    if len(counts) == 1:
        return f"{next(iter(counts.values())):,}"
    if len(set(counts.values())) == 1:
        return f"{next(iter(counts.values())):,} in each of {len(counts)} conditions"
    if len(counts) <= 4:
        return ", ".join(f"{markdown_text(c)} {n:,}" for c, n in counts.items())
    return f"{min(counts.values()):,} to {max(counts.values()):,} over {len(counts)} conditions"


def time_text(run: FinishedRun) -> str:
    """The compute time the run directory records: its invocations' wall time and machines
    (compute.json, ``bench.rundir.compute_log``), and a GPU call's machine.json wall_s or cpu_s."""
    found = [compute_log.summary(log)] if (log := compute_log.read_log(run.folder)) else []
    recorded = run.folder / "machine.json"
    if recorded.is_file():
        try:
            described = json.loads(recorded.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RankuqError(f"{recorded}: not a JSON object ({error})") from None
        found += [
            f"{'CPU' if key == 'cpu_s' else 'wall'} {float(described[key]) / 3600:.2f} h"
            for key in ("cpu_s", "wall_s")
            if isinstance(described, dict) and key in described
        ]
    return ", ".join(found) or "not recorded"


def scale_table(runs: Sequence[FinishedRun]) -> list[str]:
    """What every run directory ran: its rankers' size and training, seeds, M and T, the test queries
    per condition, the device and the time it records."""
    if not runs:
        return []
    lines = [
        "## The scale of these rankers",
        "",
        PAPERS_SCALE,
        "",
        "| run directory | grid | ranker | max tokens | training queries per task | training negatives per "
        "relevant | epochs | seeds | M, T | test queries per condition | device | time recorded |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        spec = run.spec
        seeds = ", ".join(map(str, spec.seeds))
        queries, negatives, epochs = (
            by_task(spec, lambda train: f"at most {train.max_queries:,}" if train.max_queries else "all"),
            by_task(spec, lambda train: str(train.negatives)),
            by_task(spec, epochs_text),
        )
        lines.append(
            f"| {markdown_text(str(run.folder))} | {spec.name} | {markdown_text(model_text(spec))} | "
            f"{spec.model.max_length} | {queries} | {negatives} | {epochs} | "
            f"{len(spec.seeds)} ({seeds}) | {markdown_text(samples_text(spec))} | {queries_text(run)} | "
            f"{markdown_text(device_of(run))} | {time_text(run)} |"
        )
    return [*lines, ""]


def epochs_text(train: TrainConfig) -> str:
    return f"up to {train.epochs}{', early stopping on dev' if train.early_stopping else ''}"


def by_task(spec: GridSpec, text: Callable[[TrainConfig], str]) -> str:
    """One train setting as the grid's ``train`` has it, then each task whose override changes it."""
    shown = text(spec.train)
    overrides = {task: text(spec.train_for(task)) for task in spec.train_by_task}
    differ = [f"{task}: {value}" for task, value in overrides.items() if value != shown]
    return markdown_text(f"{shown} ({'; '.join(differ)})" if differ else shown)


def setups_table(runs: Sequence[FinishedRun]) -> list[str]:
    """Per grid, the papers' model and datasets (``claims.setups``) beside this grid's model and the
    tasks its conditions train and test on."""
    grids = {run.spec.name: run for run in runs if run.spec.name in SETUPS}
    if not grids:
        return []
    lines = [
        "## What stands in for the papers' setup",
        "",
        "The papers' rankers and datasets were not available here (no hub downloads, no MSDialog, MANtIS,"
        " UDC or MS MARCO): each grid's tasks stand in for the papers' datasets in the role the last "
        "column gives, and its ranker is the smaller one of the table above.",
        "",
        "| grid | paper | their model | the model here | their datasets | the tasks here | how they stand"
        " in |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, run in grids.items():
        setup = SETUPS[name]
        tested = dict.fromkeys(
            [*(side.task for side in run.trained.values()), *(t for t, _ in run.tested.values())]
        )
        tasks = ", ".join(TASKS.get(task, task) for task in tested)
        ours = markdown_text(model_text(run.spec))
        lines.append(
            f"| {name} | {cell(setup.papers)} | {cell(setup.model)} | {ours} | {cell(setup.datasets)} | "
            f"{markdown_text(tasks)} | {cell(setup.stand_in)} |"
        )
    return [*lines, ""]
