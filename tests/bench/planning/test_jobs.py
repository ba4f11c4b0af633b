"""Typed job specs: plain JSON data at the Ray boundary and back, the same job again."""

import json
from dataclasses import replace

import pytest

from rankuq.bench.config.grid import parse_grid
from rankuq.bench.planning.jobs import FitJob, ScorerSpec, SearchTrial, TrainJob
from rankuq.bench.planning.plan import Plan, plan
from rankuq.bench.rundir.layout import RunLayout

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
    assert replace(fit, key="other").to_json() != text


def test_with_threads_and_with_values_change_only_what_they_name(planned):
    (fit,) = planned.fits.values()
    four = fit.with_threads(4)
    assert four.scorer.threads == 4 and fit.scorer.threads == 1  # frozen: the original is kept
    assert replace(four, scorer=replace(four.scorer, threads=1)) == fit
    (member,) = planned.members.values()
    changed = member.with_values({"backbone": "tiny"}, {"lr": 3e-3}, {"T": 2})
    assert (changed.model, changed.train, changed.params) == ({"backbone": "tiny"}, {"lr": 3e-3}, {"T": 2})
    assert replace(changed, model=member.model, train=member.train, params=member.params) == member


def test_a_scorer_spec_restores_its_checkpoints_as_a_tuple():
    spec = ScorerSpec("bert", {}, {"backbone": "tiny"}, ("/run/models/a", "/run/models/b"), "/run/cache/x", 2)
    plain = json.loads(spec.to_json())
    assert plain["checkpoints"] == ["/run/models/a", "/run/models/b"]
    assert ScorerSpec.from_dict(plain).checkpoints == ("/run/models/a", "/run/models/b")
    assert ScorerSpec.from_dict(plain) == spec
