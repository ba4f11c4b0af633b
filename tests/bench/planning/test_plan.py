"""The pure plan: what a grid trains, fits, scores and probes, with its content keys, without Ray."""

import subprocess
import sys

import pytest
import ray

from rankuq import methods
from rankuq.bench.config.grid import parse_grid
from rankuq.bench.config.training import EarlyStopping
from rankuq.bench.planning.jobs import FitJob, SearchTrial
from rankuq.bench.planning.plan import member_seed, plan, scoring_precision, selection_side, side_lists
from rankuq.bench.rundir.layout import RunLayout
from rankuq.contract import read_shards
from rankuq.errors import RankuqError
from rankuq.methods.last_layer_mc import LastLayerMC
from rankuq.methods.mc_dropout import MCDropout
from rankuq.tasks.base import data_root
from rankuq.tasks.shards import build_shards

GRID = {
    "name": "planned",
    "tasks": ["wikiqa"],
    "methods": {"bm25": {}, "bert": {}, "mc_dropout": {"T": 3}, "ensemble": {"M": 2}, "temperature": {}},
    "seeds": [0, 1],
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 30, "batch_size": 16},
}


def planned(tmp_path, grid=GRID, chosen=None):
    spec, params = parse_grid(grid, "test grid")
    return plan(spec, params, RunLayout(tmp_path / "run"), chosen)


@pytest.fixture
def no_ray(monkeypatch):
    """Any attempt to start or join Ray fails the test (the suite may hold a session already)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the plan started Ray")

    monkeypatch.setattr(ray, "init", refuse)


def test_the_plan_shares_bert_s_members_and_writes_nothing(tmp_path, no_ray):
    grid = planned(tmp_path)
    assert not (tmp_path / "run").exists()
    cells = {(cell.method, cell.seed): cell for cell in grid.cells}
    assert len(grid.cells) == 5 * 2
    for seed in (0, 1):
        bert = cells["bert", seed].members
        assert len(bert) == 1 and cells["mc_dropout", seed].members == bert
        assert cells["temperature", seed].members == bert  # post-hoc: bert's model, not retrained
        ensemble = cells["ensemble", seed].members
        assert len(ensemble) == 2 and ensemble[0] == bert[0]  # member 0 is bert's model
        assert cells["bm25", seed].members == ()
    # bert × 2 seeds + one more ensemble member per seed
    assert len(grid.members) == 4
    assert sorted(job.seed for job in grid.members.values()) == [0, 1, member_seed(0, 1), member_seed(1, 1)]
    defaults = methods.get("bert").Params()  # bert's shared model, whichever method scores it
    assert all(job.method == "bert" and job.params == defaults for job in grid.members.values())


def test_keys_are_stable_and_follow_what_they_hash(tmp_path, no_ray):
    first, again = planned(tmp_path), planned(tmp_path)
    assert [c.key for c in first.cells] == [c.key for c in again.cells]
    assert len({c.key for c in first.cells}) == len(first.cells)
    changed = planned(tmp_path, {**GRID, "train": {**GRID["train"], "lr": 3e-5}})
    key = {(c.method, c.seed): c.key for c in first.cells}
    for cell in changed.cells:
        same = key[cell.method, cell.seed] == cell.key
        assert same == (cell.method == "bm25")  # a training setting changes every trained cell only
    assert set(changed.members).isdisjoint(first.members)


def test_other_dropout_masks_redraw_only_what_they_draw(tmp_path, no_ray, monkeypatch):
    """Method.draws is in the keys of mc_dropout's predictions and last_layer_mc's members (its training
    draws masks too); every other key stands."""
    grid = {**GRID, "methods": {**GRID["methods"], "last_layer_mc": {"T": 5}}}
    before = planned(tmp_path, grid)
    monkeypatch.setattr(MCDropout, "draws", MCDropout.draws + 1)
    monkeypatch.setattr(LastLayerMC, "draws", LastLayerMC.draws + 1)
    after = planned(tmp_path, grid)
    key = {(c.method, c.seed): c.key for c in before.cells}
    redrawn = {c.method for c in after.cells if key[c.method, c.seed] != c.key}
    assert redrawn == {"mc_dropout", "last_layer_mc"}
    new_members = {job.method for k, job in after.members.items() if k not in before.members}
    assert new_members == {"last_layer_mc"}


def test_a_post_hoc_method_is_fitted_on_dev_and_probed_on_test(tmp_path, no_ray):
    grid = planned(tmp_path)
    temperature = [cell for cell in grid.cells if cell.method == "temperature"]
    assert all(cell.fit in grid.fits and cell.dev_key is None for cell in temperature)
    job = grid.fits[temperature[0].fit]
    assert "wikiqa-dev-" in job.shards and job.scorer.method == "temperature"
    assert all(cell.fit is None and cell.dev_key for cell in grid.cells if cell.method != "temperature")
    assert FitJob.from_dict(job.to_dict()) == job  # plain data at the Ray boundary


def test_a_training_search_is_planned_and_its_choice_changes_the_members(tmp_path, no_ray):
    search = {"metric": "R@1", "num_samples": 2, "space": {"train.lr": {"choice": [1e-5, 3e-3]}}}
    grid = planned(tmp_path, {**GRID, "search": search})
    (job,) = grid.searches  # one trained model: bert's shared cross-encoder on wikiqa
    assert job.name == "bert on wikiqa" and job.keys == ("train.lr",)
    assert job.trial.job.workers == 1 and "wikiqa-dev-" in job.trial.dev_shards
    assert SearchTrial.from_dict(job.trial.to_dict()) == job.trial
    tuned = planned(tmp_path, {**GRID, "search": search}, {job.choice: {"train.lr": 3e-3}})
    assert {j.train.lr for j in tuned.members.values()} == {3e-3}
    assert set(tuned.members).isdisjoint(grid.members)


def test_run_plan_prints_the_plan_and_starts_no_ray(tmp_path):
    """In a fresh interpreter, as a user types it: Ray is never initialised, nothing is written."""
    run_dir = tmp_path / "run"
    code = (
        "import sys, ray; from rankuq.bench.cli.main import main; "
        f"code = main(['run', '--plan', '--run-dir', {str(run_dir)!r}]); "
        "assert not ray.is_initialized(), 'Ray started'; sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "members to train: 2 (0 cached)" in done.stdout  # the default grid: bert and last_layer_mc, 1 seed
    assert "last_layer_mc" in done.stdout and "CPU-hours" in done.stdout and "GPU-hours" in done.stdout
    assert not run_dir.exists()


def test_training_follows_paper_000_by_default_and_bagging_is_opt_in(tmp_path):
    grid = planned(tmp_path)
    train_lists = [lists for lists in grid.lists if lists.split == "train"]
    assert [lists.strategy for lists in train_lists] == ["bm25"]  # NS_classic; the tested lists stay native
    assert all(lists.strategy is None for lists in grid.lists if lists.split != "train")
    assert {job.pairs_seed for job in grid.members.values()} == {0}  # the data seed, for every member
    bagged = planned(tmp_path, {**GRID, "methods": {"ensemble": {"M": 3, "bagging": True}}})
    seeds = sorted((job.seed, job.pairs_seed) for job in bagged.members.values())
    assert seeds == [(0, 0), (1, 0), (1000, 1000), (1001, 1001), (2000, 2000), (2001, 2001)]
    native = planned(tmp_path, {**GRID, "train": {**GRID["train"], "ns": None}})
    assert [lists.strategy for lists in native.lists if lists.split == "train"] == [None]


def test_early_stopping_selects_on_the_train_side_s_dev_lists_and_is_out_of_the_key_when_unset(tmp_path):
    plain = planned(tmp_path)
    assert all(job.train.early_stopping is None and not job.dev_shards for job in plain.members.values())
    shift = {"train": {"task": "clariq"}, "test": {"task": "wikiqa"}}
    grid = {**GRID, "tasks": [], "shifts": [shift], "methods": {"bert": {}}, "seeds": [0]}
    stopping = {**grid, "train": {**GRID["train"], "epochs": 3, "early_stopping": {"patience": 1}}}
    (job,) = planned(tmp_path, stopping).members.values()
    (plain_job,) = planned(tmp_path, grid).members.values()
    assert job.key != plain_job.key and job.train.early_stopping == EarlyStopping(patience=1, metric="AP")
    assert "clariq" in job.dev_shards and "dev" in job.dev_shards  # the source's dev, never the target's


def test_early_stopping_n_selects_on_r_n_dev_lists_of_the_train_side(tmp_path, no_ray):
    """Balanced-pair train sides (n: 2) gave AP on pairs, near 1; ``n: 10`` scores R_10 dev lists of
    the train side's task and negative sampling, and changes only the members that set it."""
    pairs = {"task": "clariq", "ns": "bm25", "n": 2, "variant": "imbalance"}
    shift = {"train": pairs, "test": {**pairs, "n": 10}}
    grid = {**GRID, "tasks": [], "shifts": [shift], "methods": {"bert": {}}, "seeds": [0]}
    on_pairs = {**grid, "train": {**GRID["train"], "epochs": 3, "early_stopping": {"patience": 1}}}
    on_r10 = {**grid, "train": {**on_pairs["train"], "early_stopping": {"patience": 1, "n": 10}}}
    (pairs_job,) = planned(tmp_path, on_pairs).members.values()
    (r10_job,) = planned(tmp_path, on_r10).members.values()
    assert pairs_job.key != r10_job.key and pairs_job.dev_shards != r10_job.dev_shards
    assert "n" not in pairs_job.train.model_dump()["early_stopping"]  # unset: the old members' keys
    for grid_, job, size in ((on_pairs, pairs_job, 2), (on_r10, r10_job, 10)):
        spec, _ = parse_grid(grid_, "test grid")
        (condition,) = spec.conditions()
        lists = side_lists(spec, selection_side(condition.train, spec.train), "dev")
        cache = tmp_path / "run" / "cache"
        built = build_shards("clariq", "dev", root=data_root(), cache_dir=cache, **lists.arguments())
        assert str(built) == job.dev_shards
        labels = read_shards(built).select(["qid", "label"]).to_pandas().groupby("qid")["label"]
        assert set(labels.size()) == {size} and set(labels.apply(lambda x: int((x > 0).sum()))) == {1}


@pytest.mark.parametrize(
    ("more", "match"),
    [
        (
            {"eval": {"dev_split": None}},
            "train.early_stopping scores the train side's dev split; set eval.dev_split",
        ),
        ({"train": {"early_stopping": {"patience": 1, "metric": "ERCE"}}}, "by the calibration probe"),
        ({"train": {"early_stopping": {"patience": 0}}}, "train.early_stopping.patience"),
    ],
)
def test_bad_early_stopping_is_one_clear_error(more, match):
    grid = {**GRID, "train": {"early_stopping": {"patience": 1}}, **more}
    with pytest.raises(RankuqError, match=match):
        parse_grid(grid, "test grid")


def test_train_by_task_changes_only_the_members_trained_on_that_task(tmp_path, no_ray):
    grid = {**GRID, "tasks": ["wikiqa", "clariq"], "methods": {"bert": {}}, "seeds": [0]}
    override = {**grid, "train_by_task": {"clariq": {"negatives": 4, "epochs": 3}}}
    plain, changed = (
        {job.shards: job for job in planned(tmp_path, g).members.values()} for g in (grid, override)
    )
    [wikiqa] = [shards for shards in plain if "wikiqa" in shards]
    [clariq] = [shards for shards in plain if "clariq" in shards]
    assert changed[wikiqa] == plain[wikiqa]  # same key, same settings: a cached member stays cached
    assert changed[clariq].key != plain[clariq].key
    assert (changed[clariq].train.negatives, changed[clariq].train.epochs) == (4, 3)
    assert changed[clariq].train.max_queries == 30  # the grid's train keys it does not name stand
    spec, _ = parse_grid(grid, "test grid")
    assert "train_by_task" not in spec.model_dump()  # unset: every grid keeps its content key


@pytest.mark.parametrize(
    ("override", "match"),
    [
        (
            {"semeval": {"epochs": 2}},
            r"train_by_task.semeval: no condition trains on semeval \(trained: \['wikiqa'\]\)",
        ),
        ({"wikiqa": {"ns": "random"}}, "train_by_task.wikiqa.ns: the training lists are the shift's"),
        (
            {"wikiqa": {"epoch": 2}},
            "train_by_task.wikiqa.epoch: unknown key; valid keys here: batch_size, early_stopping, epochs, ",
        ),
        ({"wikiqa": {"epochs": 0}}, "train_by_task.wikiqa.epochs: 0 .zero-shot. is for the whole grid"),
    ],
)
def test_a_bad_train_by_task_is_one_clear_error(override, match):
    with pytest.raises(RankuqError, match=match):
        parse_grid({**GRID, "train_by_task": override}, "test grid")


@pytest.mark.parametrize(
    ("precision", "gpus", "resolved"),
    [("auto", 0, "fp32"), ("auto", 0.5, "bf16"), ("fp32", 1, "fp32"), ("bf16", 0, "bf16")],
)
def test_auto_precision_is_bf16_where_scoring_gets_a_gpu(precision, gpus, resolved):
    grid = {**GRID, "eval": {"precision": precision}, "resources": {"gpus_per_trial": gpus}}
    assert scoring_precision(parse_grid(grid, "grid.yaml")[0]) == resolved


def test_zero_epochs_plans_no_member_and_no_training_lists(tmp_path, no_ray, cross_encoder):
    """train.epochs 0: the cells score model.backbone as given; nothing trains, no train lists."""
    grid = {
        "tasks": ["wikiqa"],
        "methods": {"bm25": {}, "bert": {}, "mc_dropout": {"T": 3}, "platt": {}},
        "model": {"backbone": str(cross_encoder)},
        "train": {"epochs": 0},
    }
    zero = planned(tmp_path, grid)
    assert zero.members == {} and all(cell.members == () for cell in zero.cells)
    assert {lists.split for lists in zero.lists} == {"test", "dev"}  # the default grid's train lists: none
    assert len(zero.fits) == 1  # platt fits its map on the checkpoint's dev logits


@pytest.mark.parametrize(
    ("more", "match"),
    [
        ({"model": {"backbone": "tiny"}}, r"train.epochs: 0 scores model.backbone as it is, and tiny has no"),
        (
            {"methods": {"ensemble": {}}},
            r"methods.ensemble: with train.epochs: 0 only .*bert.*; ensemble combines",
        ),
        ({"methods": {"sngp": {}}}, r"methods.sngp: .*sngp trains a head of its own"),
        ({"train": {"epochs": 0, "early_stopping": {"patience": 1}}}, r"train.early_stopping .* drop them"),
    ],
)
def test_zero_epochs_refuse_what_needs_training(cross_encoder, more, match):
    grid = {"tasks": ["wikiqa"], "methods": {"bert": {}}, "model": {"backbone": str(cross_encoder)}}
    with pytest.raises(RankuqError, match=match):
        parse_grid({**grid, "train": {"epochs": 0}, **more}, "test grid")


def beir_from_trecqa(root):
    """TrecQA's clean test split written as a test-only BEIR folder (corpus, queries, qrels/test.tsv)
    beside a link to the real WikiQA folder: a data root for a WikiQA → BEIR shift."""
    import json

    from rankuq import tasks

    lists = tasks.get("trecqa_clean")().load("test", tasks.data_root()).to_pandas()
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True)
    candidates = lists.drop_duplicates("cid")
    (folder / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": c, "title": "", "text": t}) + "\n"
            for c, t in zip(candidates.cid, candidates.text, strict=True)
        )
    )
    queries = lists.drop_duplicates("qid")
    (folder / "queries.jsonl").write_text(
        "".join(
            json.dumps({"_id": q, "text": list(c)[-1]}) + "\n"
            for q, c in zip(queries.qid, queries.context, strict=True)
        )
    )
    qrels = [
        "query-id\tcorpus-id\tscore",
        *(f"{q}\t{c}\t{label}" for q, c, label in zip(lists.qid, lists.cid, lists.label, strict=True)),
    ]
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    (root / "wikiqa").symlink_to(tasks.data_root() / "wikiqa")
    return root


def test_a_test_only_target_takes_its_dev_lists_and_post_hoc_fits_from_the_source(tmp_path, no_ray):
    """A BEIR folder with only test qrels as a shift's target: the probes' dev lists and temperature's
    fit come from the source's dev split (paper 002's domain transfer), the tested lists from the
    target; a plain task keeps its own dev split."""
    root = beir_from_trecqa(tmp_path / "data")
    grid = {
        **GRID,
        "data_dir": str(root),
        "tasks": [],
        "methods": {"bm25": {}, "bert": {}, "temperature": {}},
        "shifts": [{"name": "wikiqa-to-beir", "train": {"task": "wikiqa"}, "test": {"task": "beir"}}],
    }
    shifted = planned(tmp_path, grid)
    assert shifted.tested["wikiqa-to-beir"].name.startswith("beir-test-")
    assert shifted.dev["wikiqa-to-beir"].name.startswith("wikiqa-dev-")
    assert {job.shards.split("/")[-1][:11] for job in shifted.fits.values()} == {"wikiqa-dev-"}
    plain = planned(tmp_path / "plain", {**grid, "shifts": [], "tasks": ["wikiqa"]})
    assert plain.dev["wikiqa"].name.startswith("wikiqa-dev-")


def test_early_stopping_ns_draws_the_dev_lists_negatives_like_the_test_lists_and_only_where_set():
    """A member trained on random negatives and tested on BM25 lists (003/004's in-domain setting) is
    chosen on BM25 dev lists: ``early_stopping.ns``; unset, the train side's negatives as before."""
    side = {"task": "semeval", "ns": "random", "n": 2, "variant": "imbalance"}
    grid = {**GRID, "tasks": [], "shifts": [{"train": side, "test": {**side, "ns": "bm25", "n": 10}}]}
    stopping = {"patience": 2, "n": 10}
    for ns, drawn in ((None, "random"), ("bm25", "bm25")):
        chosen = {**stopping, "ns": ns} if ns else stopping
        spec, _ = parse_grid({**grid, "train": {**GRID["train"], "early_stopping": chosen}}, "test grid")
        (condition,) = spec.conditions()
        selecting = selection_side(condition.train, spec.train)
        drawn_as = (selecting.task, selecting.ns, selecting.n, selecting.variant)
        assert drawn_as == ("semeval", drawn, 10, "imbalance")
        assert ("ns" in spec.train.model_dump()["early_stopping"]) == (ns is not None)  # unset: keys kept
