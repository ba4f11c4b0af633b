"""Typed job specs: plain JSON data at the Ray boundary and back, the same job again."""

import hashlib
import json

import pytest

from rankuq.backbone import ModelConfig
from rankuq.bench.config.grid import parse_grid
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.planning.jobs import FitJob, ScorerSpec, SearchTrial, TrainJob
from rankuq.bench.planning.plan import Plan, plan
from rankuq.bench.rundir.layout import RunLayout
from rankuq.errors import RankuqError
from rankuq.methods.mc_dropout import MCDropout

# bert's members, a post-hoc fit (temperature) and a training search: every kind of job.
GRID = {
    "name": "jobs",
    "tasks": ["wikiqa"],
    "methods": {"bert": {}, "temperature": {}},
    "seeds": [0],
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 30, "batch_size": 16},
    "search": {"num_samples": 2, "space": {"train.lr": {"choice": [1e-5, 3e-3]}}},
}


@pytest.fixture
def planned(tmp_path) -> Plan:
    spec, params = parse_grid(GRID, "test grid")
    return plan(spec, params, RunLayout(tmp_path / "run"))


def test_jobs_cross_the_ray_boundary_as_plain_data(planned):
    (member,) = planned.members.values()
    (fit,) = planned.fits.values()
    (search,) = planned.searches
    for kind, job in ((TrainJob, member), (FitJob, fit), (SearchTrial, search.trial)):
        plain = json.loads(job.to_json())  # what Ray carries: JSON values only (tuples become lists)
        assert kind.from_dict(plain) == job, kind.__name__
    assert fit.scorer.checkpoints == (str(planned.layout.member(member.key)),)
    assert FitJob.from_dict(json.loads(fit.to_json())).scorer.checkpoints == fit.scorer.checkpoints


def test_from_dict_takes_the_fields_it_knows_and_defaults_the_rest(planned):
    (member,) = planned.members.values()
    plain = member.to_dict()
    assert TrainJob.from_dict({**plain, "retired_field": 1}) == member
    older = {name: value for name, value in plain.items() if name not in ("trainer", "pairs_seed")}
    restored = TrainJob.from_dict(older)
    assert (restored.trainer, restored.pairs_seed) == ("train", 0)


def test_to_json_sorts_keys_at_every_level(planned):
    (fit,) = planned.fits.values()
    text = fit.to_json()
    assert list(json.loads(text)) == ["key", "scorer", "shards"]
    assert list(json.loads(text)["scorer"]) == sorted(json.loads(text)["scorer"])
    assert fit.model_copy(update={"key": "other"}).to_json() != text


def test_with_threads_changes_only_the_threads(planned):
    (fit,) = planned.fits.values()
    four = fit.with_threads(4)
    assert four.scorer.threads == 4 and fit.scorer.threads == 1  # frozen: the original is kept
    assert four.with_threads(1) == fit


def test_the_settings_cross_typed_and_the_method_validates_its_parameters(tmp_path):
    spec, params = parse_grid({**GRID, "methods": {"mc_dropout": {"T": 3}}}, "test grid")
    planned = plan(spec, params, RunLayout(tmp_path / "run"))
    (member,) = planned.members.values()
    assert isinstance(member.model, ModelConfig) and isinstance(member.train, TrainConfig)
    assert member.train.epochs == 1 and member.model.max_length == 32
    cell = planned.cells[0]
    scorer = planned.scorer(cell, planned.tested[cell.condition], None, 1)
    restored = ScorerSpec.from_dict(json.loads(scorer.to_json()))
    assert isinstance(restored.params, MCDropout.Params) and restored.params.T == 3
    with pytest.raises(RankuqError, match=r"methods\.mc_dropout\.T: Input should be greater than 0"):
        ScorerSpec.from_dict({**scorer.to_dict(), "params": {"T": 0}})


def test_a_scorer_spec_restores_its_checkpoints_as_a_tuple():
    spec = ScorerSpec(
        method="bert",
        params={},
        model=ModelConfig(backbone="tiny"),
        checkpoints=("/run/models/a", "/run/models/b"),
        shards="/run/cache/x",
        threads=2,
    )
    plain = json.loads(spec.to_json())
    assert plain["checkpoints"] == ["/run/models/a", "/run/models/b"]
    assert ScorerSpec.from_dict(plain).checkpoints == ("/run/models/a", "/run/models/b")
    assert ScorerSpec.from_dict(plain) == spec


def _key_digest(planned: Plan) -> str:
    """Every content key a plan holds, in one digest: members, fits, searches, cells (tested and dev)."""
    keys = [*sorted(planned.members), *sorted(planned.fits), *(search.key for search in planned.searches)]
    keys += [f"{cell.key} {cell.dev_key}" for cell in planned.cells]
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()


# Measured at main 69e4e52, before the jobs carried typed settings (dict sections hashed then), by
# planning these grids on /work/shared/data and taking _key_digest: a change means cached members,
# fits and predictions (and the committed paper_runs/) no longer resolve. Changed once on purpose
# since: BM25's lists order equal scores by corpus row (strategy version 1 in the lists' keys), so the
# tiny grid's BM25 lists got new keys (a031b1e6… and cc9c61c8… before).
GOLDEN_KEYS = "7e358960b1f437d8c6a419896f448b4b5233377a531817b8f3e67f8fcb829493"
CHOSEN_KEYS = "57043f3dc01fecc9d5cce6e89f5860302b024d7a98d6960010c2a4194714353a"


def test_the_golden_grid_plans_the_keys_it_planned_before_the_settings_were_typed(tiny_grid, tmp_path):
    spec, params = parse_grid(tiny_grid, "test grid")
    assert _key_digest(plan(spec, params, RunLayout(tmp_path / "run"))) == GOLDEN_KEYS


def test_chosen_values_are_hashed_as_the_search_recorded_them(tiny_grid, tmp_path):
    """A search's JSON choice: ints for float fields (validation makes them floats) and a default the
    serializer leaves out (precision fp32) keep the keys they had."""
    searched = {"methods": {"bert": {}, "temperature": {}}, "seeds": [0], "search": GRID["search"]}
    spec, params = parse_grid({**tiny_grid, **searched}, "test grid")
    layout = RunLayout(tmp_path / "run")
    (search,) = plan(spec, params, layout).searches
    chosen = {"train.lr": 1, "train.warmup": 0, "train.precision": "fp32", "model.dropout": 0}
    tuned = plan(spec, params, layout, {search.choice: chosen})
    assert {job.train.lr for job in tuned.members.values()} == {1.0}  # typed: a float
    assert _key_digest(tuned) == CHOSEN_KEYS
