"""The plan of a grid: what to build, search, train, fit, score and probe, each with its content key.

``plan(grid, params, layout)`` is pure: no Ray, nothing written; it reads only what the keys hash
(the data files behind the candidate-list folders, and finished searches' choices). A rerun of the
same grid plans the same keys, so every stage finds what an earlier run finished.

A searched training setting changes the members' keys, so a grid with a training search is planned
twice: once to know its searches, then again with their choices (``chosen``).
"""

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from rankuq import methods
from rankuq.backbone import ModelConfig
from rankuq.bench.config.grid import GridSpec, Shift, Side, dev_side
from rankuq.bench.config.search_space import tuned_config, tuned_section
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.planning.jobs import FitJob, ScorerSpec, SearchTrial, TrainJob
from rankuq.bench.rundir.layout import BEST_FILE, RunLayout
from rankuq.methods.base import Fitted, MethodParams, NeuralMethod
from rankuq.tasks.base import data_root
from rankuq.tasks.shards import shard_folder

Chosen = Mapping[tuple[str, str], Mapping[str, JsonValue]]  # (train lists' folder name, trainer) → values


def content_key(*parts: object) -> str:
    """A short stable hash of JSON-able parts: the cache and MLflow identity of a stage's output."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# Part of a post-hoc fit's key: bump it when a fit's maths or its saved state change.
# 2: the maps of methods.calibrators (states name their map).
FIT_VERSION = 2
DATA_SEED = 0  # cuts the lists and draws the training pairs: every grid seed and member sees the same


def member_seed(seed: int, member: int) -> int:
    """Training seed of ensemble member ``member`` of grid seed ``seed``; member 0 is `bert`'s model."""
    return seed + 1000 * member


@dataclass(frozen=True)
class Lists:
    """One side's candidate lists of one split, as ``tasks.shards.build_shards`` takes them."""

    task: str
    split: str
    strategy: str | None
    n: int | None
    variant: str
    include_nota: bool

    def arguments(self) -> dict[str, object]:
        return {
            "strategy": self.strategy,
            "n": self.n,
            "variant": self.variant,
            "include_nota": self.include_nota,
        }


@dataclass(frozen=True)
class Cell:
    """One (condition, method, seed) of the grid and what it scores with."""

    condition: str  # the train → test label (the task's name when both sides are that task)
    task: str  # the tested task
    method: str
    seed: int
    members: tuple[str, ...]  # trained members' keys
    key: str  # of its predictions on the tested split
    dev_key: str | None  # of its predictions on the dev split the probes fit on
    tuned: tuple[tuple[str, JsonValue], ...] = ()  # searched key → chosen value, for its trained models
    fit: str | None = None  # key of its post-hoc fit

    def label(self) -> str:
        return f"{self.method} × {self.condition} seed {self.seed}"


@dataclass(frozen=True)
class SearchJob:
    """A training search: one trained model (trainer × train lists), trials on the grid's first seed."""

    key: str
    name: str  # e.g. "bert on wikiqa"
    choice: tuple[str, str]  # what its result is keyed by in ``Chosen``
    trial: SearchTrial
    keys: tuple[str, ...]  # the searched keys


@dataclass(frozen=True)
class Plan:
    spec: GridSpec
    params: dict[str, MethodParams]
    layout: RunLayout
    lists: dict[Lists, Path]  # every candidate-list folder the grid reads
    searches: list[SearchJob]
    members: dict[str, TrainJob]
    fits: dict[str, FitJob]
    cells: list[Cell]
    tested: dict[str, Path] = field(default_factory=dict)  # condition → its tested lists
    dev: dict[str, Path] = field(default_factory=dict)  # condition → its dev lists (probes)

    @property
    def probes(self) -> list[str]:
        return list(self.spec.eval.probes)

    def scorer(self, cell: Cell, shards: Path, fitted: Fitted | None, threads: int) -> ScorerSpec:
        """How a worker scores ``shards`` for ``cell``."""
        return scorer_spec(self.spec, self.params, self.layout, cell, shards, fitted, threads)


def scorer_spec(
    spec: GridSpec,
    params: Mapping[str, MethodParams],
    layout: RunLayout,
    cell: Cell,
    shards: Path,
    fitted: Fitted | None,
    threads: int,
) -> ScorerSpec:
    """How a worker scores (or, unfitted, a post-hoc fit reads) ``shards`` for ``cell``."""
    settings = tuned(spec, params, cell.method, dict(cell.tuned))
    return ScorerSpec(
        method=cell.method,
        params=settings.params,
        model=settings.model,
        checkpoints=tuple(str(layout.member(key)) for key in cell.members),
        threads=threads,
        precision=scoring_precision(spec),
        fitted=fitted,
        shards=str(shards),
    )


def scoring_precision(spec: GridSpec) -> str:
    """The scoring precision, "auto" resolved: bfloat16 where scoring gets a GPU."""
    precision = spec.eval.precision
    if precision == "auto":
        return "bf16" if spec.resources.gpus_per_trial > 0 else "fp32"
    return precision


def trainer_of(name: str, params: MethodParams) -> str | None:
    """Who trains ``name``'s models: itself (its own head or loss), `bert` (the shared cross-encoder),
    or nobody (lexical baselines)."""
    method = methods.create(name, params)
    if not method.trains:
        return None
    assert isinstance(method, NeuralMethod)  # the methods that train
    return name if method.training_identity() is not None else "bert"


@dataclass(frozen=True)
class Tuned:
    """A method's parameters, model and train settings with a search's chosen values: typed, and the
    grid's model and train sections as the content keys hash them."""

    params: MethodParams
    model: ModelConfig
    train: TrainConfig
    # The sections' dumps with the chosen values as the search recorded them (JSON), not the typed
    # settings' dumps: validation turns a chosen 0 into 0.0 and the serializer leaves out defaults, so
    # keys hashed from those would change for a cached member's.
    hashed_model: dict[str, JsonValue]
    hashed_train: dict[str, JsonValue]


def tuned(
    spec: GridSpec,
    params: Mapping[str, MethodParams],
    name: str,
    chosen: Mapping[str, JsonValue],
    trained_on: str | None = None,
) -> Tuned:
    """``name``'s parameters, model and train settings with the searched values ``chosen``; the train
    settings those of members trained on the task ``trained_on`` (``train_by_task``)."""
    hashed_model = tuned_section("model", spec.model.model_dump(), chosen)
    train = spec.train if trained_on is None else spec.train_for(trained_on)
    hashed_train = tuned_section("train", train.model_dump(), chosen)
    return Tuned(
        tuned_config(name, params[name], chosen),
        ModelConfig.model_validate(hashed_model),
        TrainConfig.model_validate(hashed_train),
        hashed_model,
        hashed_train,
    )


def train_job(
    spec: GridSpec,
    name: str,
    settings: Tuned,
    shards: Path,
    seed: int,
    pairs_seed: int = DATA_SEED,
    dev: Path | None = None,
) -> TrainJob:
    """The training job of one member of ``name`` (its trainer's model, under ``seed``; its training
    pairs drawn with ``pairs_seed``; with early stopping, selected on the ``dev`` lists)."""
    trainer = trainer_of(name, settings.params)
    assert trainer is not None  # a member is trained: a neural method
    method = methods.create(name, settings.params)
    assert isinstance(method, NeuralMethod)
    identity = method.training_identity()
    resources = spec.resources
    # Data-parallel steps average several batches: another model (one worker keeps the old keys).
    workers = [resources.workers_per_trial] if resources.workers_per_trial > 1 else []
    selected_on = [dev.name] if dev is not None and stops(settings.train) else []
    hashed = (settings.hashed_model, settings.hashed_train)
    return TrainJob(
        key=content_key("member", shards.name, seed, pairs_seed, *hashed, identity, *workers, *selected_on),
        method=trainer,
        # `bert`'s shared model is trained with its defaults, whichever method scores it
        params=settings.params if trainer == name else methods.get(trainer).Params(),
        shards=str(shards),
        seed=seed,
        model=settings.model,
        train=settings.train,
        cpus=resources.cpus_per_trial,
        gpus=resources.gpus_per_trial,
        workers=resources.workers_per_trial,
        trainer=resources.trainer,
        pairs_seed=pairs_seed,
        dev_shards=str(dev) if selected_on else "",
        dev_batch_size=spec.eval.batch_size,
    )


def stops(train: TrainConfig) -> bool:
    """Whether members trained with these settings stop early on the dev split."""
    return train.early_stopping is not None


def selection_side(side: Side, train: TrainConfig) -> Side:
    """The side whose dev lists early stopping scores: the train side, its lists cut to
    ``early_stopping.n`` candidates, one of them relevant, and its negatives drawn with
    ``early_stopping.ns``, where those are set."""
    stopping = train.early_stopping
    if stopping is None:
        return side
    update: dict[str, object] = {}
    if stopping.n is not None:
        update |= {"n": stopping.n, "variant": "imbalance"}
    if stopping.ns is not None:
        update["ns"] = stopping.ns
    return side.model_copy(update=update) if update else side


def side_lists(spec: GridSpec, side: Side, split: str) -> Lists:
    """Candidate lists of one side; lists are cut with the data seed so every grid seed sees the same.
    Training lists take ``train.ns`` where the side names no negative sampling."""
    return Lists(
        side.task,
        split,
        side.ns or (spec.train.ns if split == "train" else None),
        side.n,
        side.variant,
        # NOTA lists are what the nota variant and probe are about; ranking metrics skip them anyway,
        # except on retrieved lists, measured against the full judgments: there they count as 0.
        include_nota=split == "train"
        or side.variant in ("nota", "retrieved")
        or spec.eval.include_nota
        or "nota" in spec.eval.probes,
    )


def plan(
    spec: GridSpec, params: dict[str, MethodParams], layout: RunLayout, chosen: Chosen | None = None
) -> Plan:
    """The grid's plan; ``chosen``: the searches' choices (None: read those a finished search left)."""
    root = data_root(spec.data_dir)
    folders: dict[Lists, Path] = {}

    def folder(lists: Lists) -> Path:
        if lists not in folders:
            folders[lists] = shard_folder(
                lists.task, lists.split, root=root, cache_dir=layout.cache, **lists.arguments()
            )
        return folders[lists]

    conditions = spec.conditions()
    dev_split = spec.eval.dev_split
    # train.epochs 0 (zero-shot) reads no training lists
    trained = {c.label(): folder(side_lists(spec, c.train, "train")) for c in conditions if spec.train.epochs}
    tested = {c.label(): folder(side_lists(spec, c.test, spec.eval.split)) for c in conditions}
    dev = (
        {c.label(): folder(side_lists(spec, dev_side(c, dev_split, root), dev_split)) for c in conditions}
        if dev_split
        else {}
    )
    searches = _searches(spec, params, layout, conditions, trained, folder)
    if chosen is None:
        found = {job.choice: search_choice(layout, job) for job in searches}
        chosen = {choice: values for choice, values in found.items() if values is not None}
    members: dict[str, TrainJob] = {}
    fits: dict[str, FitJob] = {}
    cells: list[Cell] = []
    for condition in conditions:
        label = condition.label()
        shards = trained.get(label, Path())  # nothing trains on Path() (train.epochs 0)
        for name in params:
            method = methods.create(name, params[name])
            values = dict(chosen.get((shards.name, str(trainer_of(name, params[name]))), {}))
            settings = tuned(spec, params, name, values, condition.train.task)
            # A post-hoc method fits on the dev split, so it cannot score it: its probes fit on test.
            fit_split = dev_split or "dev"
            fit_on = (
                folder(side_lists(spec, dev_side(condition, fit_split, root), fit_split))
                if method.posthoc
                else None
            )
            # Early stopping selects on the train side's dev lists, as a search does (never the target's).
            selected_on = None
            if stops(settings.train):
                assert dev_split is not None  # GridSpec refuses early stopping and searches without one
                selecting = selection_side(condition.train, settings.train)
                selected_on = folder(side_lists(spec, selecting, dev_split))
            for seed in spec.seeds:
                # train.epochs 0: no member; the scorer takes model.backbone as given (zero-shot)
                count = method.members() if method.trains and settings.train.epochs else 0
                bagging = getattr(settings.params, "bagging", False)  # members 1… draw their own pairs
                jobs = [
                    train_job(spec, name, settings, shards, s, s if bagging and m else DATA_SEED, selected_on)
                    for m, s in enumerate(member_seed(seed, m) for m in range(count))
                ]
                members |= {job.key: job for job in jobs}
                keys = tuple(job.key for job in jobs)
                identity: tuple[object, ...] = (
                    name,
                    settings.params.model_dump(),
                    settings.hashed_model,
                    list(keys),
                    seed,
                    fit_on and fit_on.name,
                )
                identity += (scoring_precision(spec),)
                identity += (f"draws {method.draws}",) if method.draws else ()  # 0 left out: keys stand
                fit = content_key("fit", FIT_VERSION, *identity) if fit_on else None
                identity += (fit,) if fit else ()  # a refit map scores anew
                scored_dev = None if fit_on else dev.get(label)
                cell = Cell(
                    condition=label,
                    task=condition.test.task,
                    method=name,
                    seed=seed,
                    members=keys,
                    key=content_key("predictions", tested[label].name, *identity),
                    dev_key=content_key("predictions", scored_dev.name, *identity) if scored_dev else None,
                    tuned=tuple(values.items()),
                    fit=fit,
                )
                cells.append(cell)
                if fit_on and cell.fit:
                    # the method before its fit, on the lists it fits on (threads: set when it runs)
                    unfitted = scorer_spec(spec, params, layout, cell, fit_on, None, 1)
                    fits[cell.fit] = FitJob(key=cell.fit, scorer=unfitted, shards=str(fit_on))
    return Plan(spec, params, layout, folders, searches, members, fits, cells, tested, dev)


def _searches(
    spec: GridSpec,
    params: dict[str, MethodParams],
    layout: RunLayout,
    conditions: list[Shift],
    trained: dict[str, Path],
    folder: Callable[[Lists], Path],
) -> list[SearchJob]:
    """One search per trained model (trainer × train side) that a searched key changes, run on the
    grid's first seed and scored on the train side's dev lists (a shift is not tuned on its target)."""
    search = spec.search
    if search is None or not search.training_keys() or not spec.eval.dev_split:
        return []
    found: dict[tuple[str, str], SearchJob] = {}
    for condition in conditions:
        shards = trained[condition.label()]
        dev = folder(side_lists(spec, condition.train, spec.eval.dev_split))
        for name in params:
            trainer = trainer_of(name, params[name])
            keys = search.keys_for(trainer) if trainer else []
            if not keys or (shards.name, str(trainer)) in found:
                continue
            settings = tuned(spec, params, name, {}, condition.train.task)
            job = train_job(spec, name, settings, shards, spec.seeds[0], dev=dev)
            key = content_key("search", job.key, dev.name, search.identity(keys))
            # A trial trains in its Tune trial's own process (bench.engine.search): one worker.
            trial = SearchTrial(
                job=job.model_copy(update={"workers": 1}),
                dev_shards=str(dev),
                metric=search.metric,
                batch_size=spec.eval.batch_size,
            )
            name_ = f"{trainer} on {condition.train.label()}"
            found[shards.name, str(trainer)] = SearchJob(
                key, name_, (shards.name, str(trainer)), trial, tuple(keys)
            )
    return list(found.values())


def search_choice(layout: RunLayout, job: SearchJob) -> dict[str, JsonValue] | None:
    """The values a finished search chose, read from its folder (None: not run yet)."""
    best = layout.search(job.key) / BEST_FILE
    return json.loads(best.read_text())["best"] if best.is_file() else None
