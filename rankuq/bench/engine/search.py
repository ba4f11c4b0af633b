"""The grid's hyperparameter searches, as Ray Tune experiments scored on the dev split.

A training search tunes one trained model (a trainer on a train side): each trial trains it on the
grid's first seed with sampled settings (the members' training loop, in the trial's own process)
and reports the dev metric after every epoch, so the scheduler (ASHA) can stop poor trials early.
A ``risk.b`` search ranks a cell's dev predictions by RA with sampled b, no training. Each search
is cached in its folder: ``trials.csv`` (one row per trial and epoch) and ``best.json``.
"""

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import optuna
import pandas as pd
from pydantic import JsonValue
from ray import tune
from ray.tune import ResultGrid, Trainable
from ray.tune.schedulers import ASHAScheduler, FIFOScheduler, TrialScheduler
from ray.tune.search import BasicVariantGenerator, ConcurrencyLimiter, SearchAlgorithm, Searcher
from ray.tune.search.optuna import OptunaSearch

from rankuq.atomic import staged_folder
from rankuq.bench.config.search_space import SearchConfig, tuned_config
from rankuq.bench.engine.member_training import search_trial
from rankuq.bench.engine.session import leave_ctrl_c_to_driver
from rankuq.bench.planning.jobs import SearchResult, SearchTrial, TrainJob
from rankuq.bench.planning.plan import SearchJob
from rankuq.bench.probes.base import ScoredLists
from rankuq.bench.probes.risk import risk_aware_mean
from rankuq.bench.rundir.layout import BEST_FILE, TRIALS_FILE
from rankuq.errors import RankuqError


def tuned_job(job: TrainJob, chosen: Mapping[str, JsonValue]) -> TrainJob:
    """A member job with the chosen training settings and parameters of its trainer."""
    return job.model_copy(
        update={
            "model": tuned_config("model", job.model, chosen),
            "train": tuned_config("train", job.train, chosen),
            "params": tuned_config(job.method, job.params, chosen),
        }
    )


def _training_trial(config: dict[str, JsonValue], trial: dict[str, object]) -> None:
    """One trial: the member with the sampled values, reporting its dev metric every epoch."""
    spec = SearchTrial.from_dict(trial)
    search_trial(spec.model_copy(update={"job": tuned_job(spec.job, config)}))


def _risk_trial(config: dict[str, float], lists: ScoredLists, metric: str) -> None:
    tune.report({metric: risk_aware_mean(lists, config["risk.b"], metric), "epoch": 1})


def search_training(
    job: SearchJob, search: SearchConfig, folder: Path, storage: str, concurrency: int | None
) -> SearchResult:
    """Search ``job.keys`` for its member, each trial scored on the job's dev lists."""
    # The trial trains in its own process, not in a TorchTrainer: a trial the scheduler stops is killed,
    # and Ray Train V2 frees a killed trainer's placement group only through the State API, which fails
    # without the dashboard (off in rankuq) or beside other Ray instances: later trials waited forever.
    member = job.trial.job
    trainable = tune.with_resources(
        tune.with_parameters(_training_trial, trial=job.trial.to_dict()),
        {"CPU": member.cpus, "GPU": member.gpus},
    )
    scheduler = _scheduler(search, member.train.epochs)
    keys = list(job.keys)
    return _search(job.name, trainable, search, keys, scheduler, member.seed, folder, storage, concurrency)


def search_risk_b(
    name: str, lists: ScoredLists, search: SearchConfig, folder: Path, storage: str, seed: int
) -> SearchResult:
    """Search RA's b on a cell's dev ``lists`` (their queries with a relevant candidate)."""
    trainable = tune.with_parameters(_risk_trial, lists=lists, metric=search.metric)
    return _search(name, trainable, search, ["risk.b"], FIFOScheduler(), seed, folder, storage, None)


def _search(
    name: str,
    trainable: Callable[..., None] | type[Trainable],
    search: SearchConfig,
    keys: list[str],
    scheduler: TrialScheduler,
    seed: int,
    folder: Path,
    storage: str,
    concurrency: int | None,
) -> SearchResult:
    """The search's result from ``folder``, running its Tune experiment first if it is new."""
    cached = (folder / BEST_FILE).exists()
    if not cached:
        leave_ctrl_c_to_driver()
        tuner = tune.Tuner(
            trainable,
            param_space=search.domains(keys),
            tune_config=tune.TuneConfig(
                metric=search.metric,
                mode=search.mode,
                search_alg=_searcher(search.algorithm, seed, concurrency),
                scheduler=scheduler,
                num_samples=search.num_samples,
            ),
            run_config=tune.RunConfig(storage_path=storage, name=f"search-{folder.name}", verbose=0),
        )
        table = _trial_table(name, tuner.fit(), keys, search.metric)
        _write(folder, table, {"name": name, **_best(table, search, keys)})
    record = json.loads((folder / BEST_FILE).read_text())
    return SearchResult(metric=search.metric, folder=folder, cached=cached, **record)


def _trial_table(name: str, results: ResultGrid, keys: list[str], metric: str) -> pd.DataFrame:
    """One row per trial and reported epoch: trial, the sampled keys, epoch, metric."""
    rows = []
    for result in results:  # type: ignore[attr-defined]  # ResultGrid iterates by __getitem__
        if result.error is not None:
            raise RankuqError(f"search {name}: trial {result.metrics.get('trial_id')} failed: {result.error}")
        values = {key: result.config[key] for key in keys}
        history = result.metrics_dataframe[["epoch", metric]].to_dict("records")
        rows += [{"trial": result.metrics["trial_id"], **values, **report} for report in history]
    return pd.DataFrame(rows)


def _write(folder: Path, table: pd.DataFrame, record: dict[str, object]) -> None:
    """The trial table and the choice, written whole or not at all."""
    with staged_folder(folder) as staging:
        table.to_csv(staging / TRIALS_FILE, index=False)
        (staging / BEST_FILE).write_text(json.dumps(record, indent=1))


def _best(table: pd.DataFrame, search: SearchConfig, keys: list[str]) -> dict[str, object]:
    """The best trial among those that ran the most epochs (all, unless the scheduler stopped every
    trial early), by its dev metric at that epoch; the first such trial on ties."""
    last = table[table.epoch == table.epoch.max()]
    scores = last[search.metric]
    row = last.to_dict("index")[scores.idxmax() if search.mode == "max" else scores.idxmin()]  # plain types
    reached = table.groupby("trial").epoch.max()
    return {
        "best": {key: row[key] for key in keys},
        "score": row[search.metric],
        "trials": len(reached),
        "stopped": int((reached < table.epoch.max()).sum()),
    }


def _searcher(algorithm: str, seed: int, concurrency: int | None) -> SearchAlgorithm | Searcher:
    """The seeded search algorithm, with at most ``concurrency`` trials at once (Tune ignores
    TuneConfig.max_concurrent_trials beside a BasicVariantGenerator of one's own)."""
    if algorithm == "optuna":
        optuna.logging.set_verbosity(optuna.logging.WARNING)  # not a line per trial
        searcher = OptunaSearch(seed=seed)
        return ConcurrencyLimiter(searcher, max_concurrent=concurrency) if concurrency else searcher
    return BasicVariantGenerator(max_concurrent=concurrency or 0, random_state=seed)


def _scheduler(search: SearchConfig, epochs: int) -> TrialScheduler:
    config = search.scheduler
    if config.name == "fifo":
        return FIFOScheduler()
    return ASHAScheduler(
        time_attr="epoch",
        max_t=epochs,
        grace_period=config.grace_period,
        reduction_factor=config.reduction_factor,
    )
