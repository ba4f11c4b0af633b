from pathlib import Path

import pytest

from rankuq.bench.config.grid import load_grid
from rankuq.errors import RankuqError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


def test_the_builtin_default_grid_is_valid():
    spec, params = load_grid()
    assert spec.tasks == ["wikiqa"]
    assert {"bm25", "bert", "last_layer_mc", "temperature"} == set(params)
    assert params["last_layer_mc"].T == 100  # Cohen et al. (2021)
    # the model that beats BM25 (rankuq/records/notebook.md "Model fit"): the whole MiniLM, 4 native negatives
    assert (spec.model.layers, spec.model.max_length) == (6, 128)
    assert (spec.train.ns, spec.train.negatives) == ("native", 4)


def test_a_user_grid_is_read_with_method_defaults(tmp_path):
    spec, params = load_grid(write(tmp_path, "tasks: [wikiqa]\nmethods: {ensemble: null, bert: {}}\n"))
    assert params["ensemble"].M == 5
    assert spec.seeds == [0]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "tasks: [wikiqa]\nmethods: {bert: {}}\nsed: [1]\n",
            r"grid.yaml: sed: unknown key; valid keys here: .*seeds",
        ),
        ("tasks: [wikiqa]\nmethods: {bert: {}}\ntrain: {epoch: 2}\n", r"train.epoch: unknown key; .*epochs"),
        ("tasks: [wikiqa]\nmethods: {berty: {}}\n", r"unknown method 'berty'; valid methods: bert, bm25"),
        ("tasks: [ms-marcoo]\nmethods: {bert: {}}\n", r"unknown task 'ms-marcoo'; valid tasks: .*wikiqa"),
        (
            "tasks: [wikiqa]\nmethods: {mc_dropout: {T: -1}}\n",
            r"methods.mc_dropout.T: Input should be greater than 0",
        ),
        (
            "tasks: [wikiqa]\nmethods: {ensemble: {M: -2}}\n",
            r"methods.ensemble.M: .*greater than or equal to 2",
        ),
        ("tasks: [wikiqa]\nmethods: {bert: {}}\nseeds: [1, 1]\n", r"seeds: seeds must be unique"),
        ("tasks: [wikiqa]\nmethods: {bm25: {}}\nbaseline: bert\n", r"baseline 'bert' is not one of the grid"),
        (
            "tasks: [wikiqa]\nmethods: {bert: {}}\neval: {probes: [risk, abstain]}\n",
            r"unknown probe 'abstain'; valid probes: abstention",
        ),
        (
            "tasks: [wikiqa]\nmethods: {bert: {}}\neval: {split: dev}\n",
            r"eval: dev_split 'dev' is the tested split; name another split, or null",
        ),
        (
            "tasks: [wikiqa]\nmethods: {bert: {}}\neval: {precision: fp16}\n",
            r"eval.precision: Input should be 'auto', 'fp32' or 'bf16'",
        ),
        ("tasks: [wikiqa\n", r"grid.yaml, line 2, column 1: not valid YAML \(expected ',' or ']'"),
        ("- wikiqa\n", r"grid.yaml: a grid is a YAML mapping"),
    ],
)
def test_bad_grids_are_one_clear_error(tmp_path, text, match):
    with pytest.raises(RankuqError, match=match):
        load_grid(write(tmp_path, text))


def test_a_missing_grid_file_is_named(tmp_path):
    with pytest.raises(RankuqError, match=r"grid file not found: .*nope\.yaml"):
        load_grid(tmp_path / "nope.yaml")


def test_shifts_name_train_and_test_sides(tmp_path):
    text = (
        "methods: {bert: {}}\n"
        "tasks: [wikiqa]\n"
        "shifts:\n"
        "  - {train: {task: wikiqa}, test: {task: wikiqa, ns: bm25}}\n"
        "  - {name: clariq-to-wikiqa, train: {task: clariq, ns: random}, test: {task: wikiqa}}\n"
    )
    spec, _ = load_grid(write(tmp_path, text))
    assert [c.label() for c in spec.conditions()] == ["wikiqa", "wikiqa→wikiqa:bm25", "clariq-to-wikiqa"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("methods: {bert: {}}\n", r"name at least one task"),
        (
            "methods: {bert: {}}\nshifts: [{train: {task: wikiqa, nss: bm25}, test: {task: wikiqa}}]\n",
            r"shifts.0.train.nss: unknown key; valid keys here: n, ns, task, variant",
        ),
        (
            "methods: {bert: {}}\nshifts: [{train: {task: msdialogue}, test: {task: wikiqa}}]\n",
            r"unknown task 'msdialogue'",
        ),
    ],
)
def test_bad_shifts_are_one_clear_error(tmp_path, text, match):
    with pytest.raises(RankuqError, match=match):
        load_grid(write(tmp_path, text))


def test_a_shift_may_rerank_a_run_file_checked_when_the_grid_loads(tmp_path):
    run = tmp_path / "bm25.trec"
    run.write_text("q1 Q0 d1 1 1.0 bm25\n")
    shift = "{train: {task: wikiqa}, test: {task: wikiqa, ns: 'run:%s'}}"
    spec, _ = load_grid(write(tmp_path, f"shifts: [{shift % run}]\nmethods: {{bert: {{}}}}\n"))
    assert spec.shifts[0].test.ns == f"run:{run}"
    missing = write(tmp_path, f"shifts: [{shift % (tmp_path / 'none.trec')}]\nmethods: {{bert: {{}}}}\n")
    with pytest.raises(RankuqError, match=r"grid.yaml: .*'run:.*none\.trec': run file not found"):
        load_grid(missing)
    unknown = write(
        tmp_path, "shifts: [{train: {task: wikiqa, ns: bm26}, test: {task: wikiqa}}]\nmethods: {bert: {}}\n"
    )
    with pytest.raises(RankuqError, match=r"unknown negative-sampling strategy 'bm26'"):
        load_grid(unknown)


def test_the_grid_loader_is_a_safe_loader():
    import yaml

    from rankuq.bench.config.grid import UniqueKeyLoader

    assert issubclass(UniqueKeyLoader, yaml.SafeLoader)
    with pytest.raises(yaml.constructor.ConstructorError):
        yaml.load("!!python/object/apply:os.system [echo hi]", Loader=UniqueKeyLoader)


def test_a_task_name_with_a_slash_gives_a_plain_condition_name():
    """beir/<name> (and any task name a folder cannot hold) is a condition named beir-<name>, in --plan
    too: the grid validates before any data is read (issue 42)."""
    from rankuq.bench.config.grid import condition_name, parse_grid

    assert condition_name("beir/scifact") == "beir-scifact"
    assert condition_name("beir/cqadupstack/android") == "beir-cqadupstack-android"
    assert condition_name("parquet:/data/my lists.parquet") == "parquet-data-my-lists.parquet"
    spec, _ = parse_grid({"tasks": ["beir/scifact", "wikiqa"], "methods": {"bm25": {}}}, "test grid")
    assert [c.label() for c in spec.conditions()] == ["beir-scifact", "wikiqa"]
    assert spec.conditions()[0].test.task == "beir/scifact"


def test_two_conditions_of_one_name_are_refused():
    from rankuq.bench.config.grid import parse_grid

    shift = {"name": "wikiqa", "train": {"task": "clariq"}, "test": {"task": "wikiqa"}}
    with pytest.raises(RankuqError, match="two conditions are named 'wikiqa'; give a shift another name"):
        parse_grid({"tasks": ["wikiqa"], "shifts": [shift], "methods": {"bm25": {}}}, "test grid")


REFERENCED = (
    "methods: {bert: {}}\ntrain: {ns: null}\nshifts:\n"
    "  - {name: wikiqa-ref-clariq, train: {task: wikiqa}, test: {task: wikiqa}, reference: {task: clariq}}\n"
)


def test_a_reference_side_is_where_the_probes_fit_and_unset_keeps_the_key(tmp_path):
    from rankuq.bench.config.grid import dev_side
    from rankuq.bench.findings.conditions import condition_kind
    from rankuq.tasks import data_root

    spec, _ = load_grid(write(tmp_path, REFERENCED))
    (condition,) = spec.conditions()
    assert dev_side(condition, "dev", data_root()).task == "clariq"
    assert condition_kind(spec, condition) == "cross-reference"
    plain, _ = load_grid(write(tmp_path, "methods: {bert: {}}\ntrain: {ns: null}\ntasks: [wikiqa]\n"))
    (in_domain,) = plain.conditions()
    assert "reference" not in in_domain.model_dump()  # grids without one keep their content keys
    assert dev_side(in_domain, "dev", data_root()).task == "wikiqa"
    assert condition_kind(plain, in_domain) == "in-domain"


def test_a_reference_side_is_checked_as_the_other_sides_are(tmp_path):
    text = REFERENCED.replace("reference: {task: clariq}", "reference: {task: clariq, ns: native}")
    with pytest.raises(RankuqError, match=r"shifts.0.reference.ns: clariq/dev has no native candidate lists"):
        load_grid(write(tmp_path, text))
