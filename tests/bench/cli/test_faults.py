"""Faults and bad input (issue 13): each class of bad input gets one stderr line naming the file or
key and the fix, exit code 2 and no traceback; the inputs that used to give silent wrong numbers
now refuse or warn."""

import ast
import codecs
import gzip
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rankuq import tasks
from rankuq.bench.cli.main import main
from rankuq.bench.evaluation import blackbox as evaluate
from rankuq.bench.predictions import predictions_table
from rankuq.bench.rundir.lock import LOCK_FILE

from ...files import write_file

RUN = "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.4 t\nq2 Q0 d3 1 0.8 t\nq2 Q0 d4 2 0.7 t\n"
QRELS = "q1 0 d2 1\nq2 0 d3 1\n"


def _predictions(path: Path, qid: list[str], cid: list[str]) -> Path:
    table = predictions_table(qid, cid, np.arange(len(qid)) % 2, np.linspace(0.1, 0.9, len(qid))[:, None])
    pq.write_table(table, path)
    return path


def _trec(tmp: Path, run: str | bytes, qrels: str = QRELS, name: str = "run.txt") -> list[str]:
    return [
        "evaluate",
        "--run",
        str(write_file(tmp / name, run)),
        "--qrels",
        str(write_file(tmp / "q.txt", qrels)),
    ]


def _truncated_gz(tmp: Path) -> list[str]:
    whole = gzip.compress(RUN.encode() * 2000)
    return _trec(tmp, whole[: len(whole) // 2], name="run.txt.gz")


def _repeated_predictions(tmp: Path) -> list[str]:
    return [
        "evaluate",
        "--predictions",
        str(_predictions(tmp / "p.parquet", ["a", "a", "a"], ["x", "y", "x"])),
    ]


def _string_labels(tmp: Path) -> list[str]:
    table = pq.read_table(_predictions(tmp / "p.parquet", ["a", "a"], ["x", "y"]))
    table = table.set_column(2, "label", pa.array(["1", "0"]))
    pq.write_table(table, tmp / "p.parquet")
    return ["evaluate", "--predictions", str(tmp / "p.parquet")]


def _dev_without_probe(tmp: Path) -> list[str]:
    path = _predictions(tmp / "p.parquet", ["a", "a"], ["x", "y"])
    return ["evaluate", "--predictions", str(path), "--dev", str(tmp / "not-even-there.parquet")]


def _board(run_dir: Path, change: Callable[[str], str | bytes]) -> list[str]:
    csv = run_dir / "leaderboard.csv"
    write_file(csv, change(csv.read_text()))
    return ["leaderboard", str(run_dir), "--out", str(run_dir / "out")]


# (name, argv builder taking (tmp_path, run_dir), what the line must name)
CASES: list[tuple[str, Callable[[Path, Path], list[str]], str]] = [
    ("truncated .gz run", lambda t, r: _truncated_gz(t), "run.txt.gz: truncated or corrupt gzip"),
    ("run of NUL bytes", lambda t, r: _trec(t, b"\0" * (1 << 17)), "run.txt, line 1: longer than 64 KiB"),
    ("binary run", lambda t, r: _trec(t, b"\xff\xfe" * 10), "run.txt, line 1: not UTF-8"),
    (
        "repeated docno, --strict",
        lambda t, r: [*_trec(t, RUN + "q1 Q0 d1 3 0.1 t\n"), "--strict"],
        "run.txt, line 5: docno d1 appears again for qid q1 (first on line 1)",
    ),
    (
        "repeated (qid, cid) in predictions",
        lambda t, r: _repeated_predictions(t),
        "row 2 repeats (qid a, cid x)",
    ),
    ("predictions label of strings", lambda t, r: _string_labels(t), "column label holds string"),
    ("--dev without a probe", lambda t, r: _dev_without_probe(t), "not-even-there.parquet): only the risk"),
    (
        "leaderboard cut mid-row",
        lambda t, r: _board(r, lambda s: s[: len(s) // 2]),
        "leaderboard.csv: cut off",
    ),
    (
        "leaderboard row short of fields",
        lambda t, r: _board(r, lambda s: s.replace(s.splitlines()[2], "wikiqa,bert,2") if s else s),
        "leaderboard.csv, line 3: 3 fields",
    ),
    ("empty leaderboard", lambda t, r: _board(r, lambda s: ""), "leaderboard.csv: cut off"),
    ("garbage leaderboard", lambda t, r: _board(r, lambda s: '"a,b\n'), "leaderboard.csv"),
    ("leaderboard not UTF-8", lambda t, r: _board(r, lambda s: b"\xff\n"), "leaderboard.csv: cannot read"),
]


@pytest.mark.parametrize(("build", "named"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input_exits_2_with_one_line_naming_it(tmp_path, run_dir, capsys, build, named):
    argv = build(tmp_path, run_dir)
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith("rankuq: error: ") and named in err
    assert not (run_dir / "out").exists()


def test_a_bom_is_not_part_of_the_first_qid(tmp_path, capsys):
    bom = codecs.BOM_UTF8.decode()
    plain = evaluate.evaluate_file(
        trec_run=write_file(tmp_path / "a", RUN), qrels=write_file(tmp_path / "b", QRELS)
    )
    with_bom = evaluate.evaluate_file(
        trec_run=write_file(tmp_path / "c", bom + RUN), qrels=write_file(tmp_path / "d", bom + QRELS)
    )
    assert with_bom == plain and plain["R@1"] == 0.5


def test_a_repeated_docno_keeps_the_last_line_as_ir_measures_does(tmp_path, caplog):
    ir_measures = pytest.importorskip("ir_measures")
    run = write_file(tmp_path / "run", RUN + "q1 Q0 d2 3 0.95 t\nq2 Q0 d3 3 0.1 t\nq1 Q0 d2 4 0.99 t\n")
    qrels = write_file(tmp_path / "qrels", QRELS)
    values = evaluate.evaluate_file(trec_run=run, qrels=qrels)
    expected = ir_measures.calc_aggregate(
        [ir_measures.parse_measure(m) for m in ("R@1", "RR", "AP")],
        ir_measures.read_trec_qrels(str(qrels)),
        ir_measures.read_trec_run(str(run)),
    )
    assert {str(k): v for k, v in expected.items()} == pytest.approx(
        {k: values[k] for k in ("R@1", "RR", "AP")}
    )
    assert values["R@1"] == 0.5  # q1: d2 kept at 0.99 ranks first; q2: d3 kept at 0.1 ranks last
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "run, line 5: docno d2 appears again for qid q1 (first on line 2)" in warning
    assert "3 repeated (qid, docno) lines in all" in warning


def test_the_duplicate_warning_is_one_stderr_line_of_the_real_command(tmp_path):
    argv = [*_trec(tmp_path, RUN + "q1 Q0 d1 3 0.1 t\n"), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "rankuq.bench.cli", *argv], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("\n") == 1 and "1 repeated (qid, docno) lines" in done.stderr
    assert json.loads(done.stdout)["R@1"] == 1.0  # d1 kept at 0.1: relevant d2 now ranks first


GRID = "tasks: [wikiqa]\nmethods: {bert: {}}\n"
BAD_GRIDS = [
    (
        "duplicate key",
        GRID + "seeds: [1]\nseeds: [2]\n",
        ", line 4, column 1: not valid YAML (key 'seeds' is given twice; keep one)",
    ),
    ("name .", GRID + "name: .\n", "name: '.' is not a plain name"),
    ("name ..", GRID + "name: ..\n", "name: '..' is not a plain name"),
    ("name a path", GRID + "name: a/b\n", "name: 'a/b' is not a plain name"),
    (
        "shift name ..",
        GRID + "shifts: [{name: .., train: {task: wikiqa}, test: {task: wikiqa}}]\n",
        "shifts.0.name",
    ),
    (
        "T huge",
        "tasks: [wikiqa]\nmethods: {mc_dropout: {T: 1000000000}}\n",
        "methods.mc_dropout.T: Input should be less",
    ),
    (
        "M huge",
        "tasks: [wikiqa]\nmethods: {ensemble: {M: 100000}}\n",
        "methods.ensemble.M: Input should be less",
    ),
    ("layers 999", GRID + "model: {layers: 999}\n", "model.layers: Input should be less than or equal to 48"),
    ("seed 10**20", GRID + "seeds: [100000000000000000000]\n", "seeds.0: Input should be less than or equal"),
    ("seed -5", GRID + "seeds: [-5]\n", "seeds.0: Input should be greater than or equal to 0"),
    ("10,000 seeds", GRID + f"seeds: {list(range(10_000))}\n", "seeds: List should have at most 1000 items"),
    (
        "n 1000000",
        GRID + "shifts: [{train: {task: wikiqa}, test: {task: wikiqa, n: 1000000}}]\n",
        "shifts.0.test.n",
    ),
    (
        "unknown ns",
        GRID + "shifts: [{train: {task: wikiqa}, test: {task: wikiqa, ns: strategys}}]\n",
        "'strategys'",
    ),
    (
        "unknown variant",
        GRID + "shifts: [{train: {task: wikiqa, variant: nto}, test: {task: wikiqa}}]\n",
        "'nto'",
    ),
    ("unknown eval.split", GRID + "eval: {split: tset}\n", "tasks.0: task wikiqa has no 'tset' split"),
    (
        "native lists where there are none",
        GRID + "shifts: [{train: {task: wikiqa}, test: {task: clariq, ns: native}}]\n",
        "shifts.0.test.ns: clariq/test has no native candidate lists",
    ),
    ("python tag", "!!python/object/apply:os.system [echo hi]\n", "could not determine a constructor"),
]


@pytest.mark.parametrize(("text", "named"), [c[1:] for c in BAD_GRIDS], ids=[c[0] for c in BAD_GRIDS])
def test_a_grid_the_code_cannot_run_exits_2_before_anything_is_written(tmp_path, capsys, text, named):
    grid = write_file(tmp_path / "grid.yaml", text)
    assert main(["run", str(grid), "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith(f"rankuq: error: {grid}") and named in err
    assert not (tmp_path / "run").exists()


def _wikiqa_with(data: Path, split: str, change: Callable[[list[str]], list[str]]) -> None:
    """A copy of the real WikiQA files under ``data``, ``split``'s lines changed."""
    (data / "wikiqa").mkdir(parents=True)
    for name in ("train", "dev", "test"):
        with gzip.open(tasks.data_root() / "wikiqa" / f"WikiQA-{name}.tsv.gz", "rt", newline="") as file:
            lines = file.read().split("\n")
        with gzip.open(data / "wikiqa" / f"WikiQA-{name}.tsv.gz", "wt", newline="") as out:
            out.write("\n".join(change(lines) if name == split else lines))


def _field_lost(lines: list[str]) -> list[str]:
    return [*lines[:5], lines[5].split("\t", 1)[1], *lines[6:]]


def _label(lines: list[str]) -> list[str]:
    return [*lines[:9], lines[9].rsplit("\t", 1)[0] + "\tyes", *lines[10:]]


def _split_question(lines: list[str]) -> list[str]:
    return [*lines[:2], *lines[3:40], lines[2], *lines[40:]]


BAD_ROWS = [
    (
        "row short of a field",
        "train",
        _field_lost,
        "WikiQA-train.tsv.gz: line 6: 6 tab-separated fields, expected 7",
    ),
    ("label not 0 or 1", "test", _label, "WikiQA-test.tsv.gz: line 10: Label is 'yes', expected 0 or 1"),
    ("question's rows apart", "train", _split_question, "WikiQA-train.tsv.gz: line 40: QuestionID"),
    ("header changed", "train", lambda lines: lines[1:], "WikiQA-train.tsv.gz: line 1: header is"),
]


@pytest.mark.parametrize("existing", [False, True], ids=["new run dir", "user's run dir"])
@pytest.mark.parametrize(
    ("split", "change", "named"), [r[1:] for r in BAD_ROWS], ids=[r[0] for r in BAD_ROWS]
)
def test_a_bad_data_row_exits_2_and_writes_nothing(tmp_path, capsys, split, change, named, existing):
    """The lists are built (every row read) before the store, Ray or training; a run directory this
    run made is removed, a user's is left as it was."""
    data, run_dir = tmp_path / "data", tmp_path / "runs" / "mine"
    _wikiqa_with(data, split, change)
    grid = write_file(tmp_path / "grid.yaml", "tasks: [wikiqa]\nmethods: {bm25: {}, bert: {}}\n")
    if existing:
        run_dir.mkdir(parents=True)
        write_file(run_dir / "notes.txt", "mine")
    argv = ["run", str(grid), "--data-dir", str(data), "--run-dir", str(run_dir)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith(f"rankuq: error: {data / 'wikiqa'}") and named in err
    if existing:  # the user's folder and file stay; the run's lock file (empty) is all it added
        assert sorted(p.name for p in run_dir.iterdir()) == [LOCK_FILE, "notes.txt"]
        assert (run_dir / "notes.txt").read_text() == "mine"
    else:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "grid.yaml"]  # not even runs/


def _index(run_dir: Path, change: Callable[[list[dict]], object]) -> list[str]:
    index = run_dir / "plots" / "index.json"
    index.write_text(json.dumps(change(json.loads(index.read_text()))))
    return ["leaderboard", str(run_dir), "--out", str(run_dir / "out")]


def _linked(run_dir: Path, target: Path) -> list[str]:
    (run_dir / "plots" / "evil.png").symlink_to(target)
    return _index(run_dir, lambda entries: [*entries, {**entries[0], "path": "evil.png"}])


def _not_png(run_dir: Path) -> list[str]:
    (run_dir / "plots" / "fake.png").write_text("root:x:0:0:root:/root:/bin/bash\n")
    return _index(run_dir, lambda entries: [*entries, {**entries[0], "path": "fake.png"}])


def _deep(run_dir: Path) -> list[str]:
    (run_dir / "plots" / "index.json").write_text("[" * 100_000 + "]" * 100_000)
    return ["leaderboard", str(run_dir), "--out", str(run_dir / "out")]


EMBEDS = [
    (
        "index path outside",
        lambda r: _index(r, lambda e: [{**e[0], "path": "../../../../etc/passwd"}]),
        "passwd",
    ),
    ("index path absolute", lambda r: _index(r, lambda e: [{**e[0], "path": "/etc/passwd"}]), "/etc/passwd"),
    ("symlinked plot", lambda r: _linked(r, Path("/etc/passwd")), "plot 'evil.png' is a link"),
    ("link to a real plot", lambda r: _linked(r, next((r / "plots").glob("*.png"))), "'evil.png' is a link"),
    ("text named .png", _not_png, "fake.png: not a PNG image"),
    (
        "index 100k deep",
        _deep,
        "index.json: not a JSON list of {condition, method, kind, path} objects (nested",
    ),
]


@pytest.mark.parametrize(("build", "named"), [c[1:] for c in EMBEDS], ids=[c[0] for c in EMBEDS])
def test_the_report_embeds_only_png_plots_of_the_plots_folder(run_dir, capsys, build, named):
    assert main(build(run_dir)) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err and named in err
    assert not (run_dir / "out").exists()


def test_a_grid_name_with_a_quote_is_matched_not_injected(tracking_uri, tmp_path, capsys):
    argv = ["leaderboard", "--tracking-uri", tracking_uri, "--out", str(tmp_path / "out")]
    assert main([*argv, "--grid", "it's' or tags.`rankuq.level` = 'grid"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no grid run named \"it's' or tags." in err
    assert not (tmp_path / "out").exists()


PACKAGE = Path(__file__).resolve().parents[3]
SOURCES = [p for folder in ("bench", "tasks", "methods", "rankuq") for p in (PACKAGE / folder).rglob("*.py")]


def _calls(pattern: str) -> list[tuple[Path, str]]:
    return [(p, line) for p in SOURCES for line in p.read_text().splitlines() if pattern in line]


def _whole_calls(name: str) -> list[tuple[Path, str]]:
    """Every call of ``name`` ("ray.init") with its whole text, a call over several lines included."""
    found = []
    for path in SOURCES:
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == name:
                found.append((path, ast.get_source_segment(source, node) or ""))
    return found


def test_what_holds_keeps_holding():
    """yaml safe loading only, torch.load(weights_only=True), no shell, no pickle of user files,
    Ray's dashboard off: checked in every source file of the package."""
    assert len(SOURCES) > 50
    loads = _calls("torch.load(")
    assert loads and all("weights_only=True" in line for _, line in loads), loads
    assert not _calls("shell=True")
    assert not [c for c in _calls("pickle") if "import pickle" in c[1] or "pickle.load" in c[1]]
    assert not _calls("read_pickle") and not _calls("yaml.unsafe_load") and not _calls("yaml.full_load")
    yaml_loads = [c for c in _calls("yaml.load(") + _calls("yaml.safe_load(")]
    assert yaml_loads and all("safe_load" in line or "UniqueKeyLoader" in line for _, line in yaml_loads)
    # A session that starts Ray starts it without the dashboard; the cluster benchmark's driver only
    # joins the head it started itself with --include-dashboard=false (ray.init refuses the flag there).
    inits = [c for c in _whole_calls("ray.init") if c[0].parent.name != "cluster"]
    assert inits and all("include_dashboard=False" in line for _, line in inits), inits
    heads = [c for c in _calls("--include-dashboard") if c[0].parent.name == "cluster"]
    assert heads and all("false" in line.lower() for _, line in heads), heads
