"""The board rendered: Markdown with the bold best and the rule, compact rich tables that fit a terminal,
booktabs LaTeX with escaped names."""

from rich.console import Console

from rankuq.bench.results.boards import Board, read_run_dir
from rankuq.bench.results.leaderboard import (
    LEADERBOARD_METRICS,
)
from rankuq.bench.results.rendering import paper_latex, paper_markdown, rich_tables


def test_markdown_has_a_table_per_condition_bold_best_and_the_rule(run_dir):
    text = paper_markdown(read_run_dir(run_dir))
    assert text.startswith("# Leaderboard: my-grid\n\n## wikiqa\n\n| method ")
    assert "## clariq-to-wikiqa" in text
    assert "| ensemble        |       2 | **0.440 ± 0.020** (+10.00% †) " in text
    assert "| bm25            |       2 | 0.380 ± 0.000 (-5.00%)" in text
    assert "p < 0.05" in text and "lower is better for ECE;" in text


def test_rich_tables_print_one_compact_table_per_condition(run_dir):
    tables = rich_tables(read_run_dir(run_dir))
    assert [t.title for t in tables] == ["my-grid: wikiqa", "my-grid: clariq-to-wikiqa"]
    assert [c.header for c in tables[0].columns] == ["method", "R@1", "ECE", "nAUC AP u_max"]
    assert tables[0].columns[0]._cells[1].plain == "bert (baseline)\n2 seeds"
    ensemble_r1 = tables[0].columns[1]._cells[2]
    assert ensemble_r1.plain == "0.440†\n±0.020" and ensemble_r1.spans[0].style == "bold"
    assert tables[0].columns[2]._cells[0].plain == "—"  # bm25 has no ECE


def test_a_full_board_is_one_table_per_condition_that_fits_130_columns(run_dir):
    """Fifteen metrics (every leaderboard column) in one table of at most 130 terminal columns,
    nothing cut: a name of several words ("nAUC AP u_max", "bert (baseline)") wraps at its spaces."""
    table = read_run_dir(run_dir).table
    for metric in LEADERBOARD_METRICS:
        for suffix in ("", " std", " p"):
            table[f"{metric}{suffix}"] = table[f"R@1{suffix}"]
    console = Console(width=130, record=True)
    tables = rich_tables(Board("my-grid", table, ()))
    assert len(tables) == 2 and len(tables[0].columns) == 1 + len(LEADERBOARD_METRICS)
    for shown in tables:
        console.print(shown)
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= 130
    assert "0.440†" in text and "…" not in text and "(baseline)" in text
    assert all(word in text for metric in LEADERBOARD_METRICS for word in metric.split())


def test_latex_has_a_booktabs_table_per_condition_with_escaped_names(run_dir):
    board = read_run_dir(run_dir)
    board.table.loc[0, "method"] = "bm25_k1&b"
    text = paper_latex(board)
    assert text.count(r"\begin{table}") == 2 and text.count(r"\toprule") == 2
    assert r"\caption{my-grid: wikiqa}" in text
    assert r"method & seeds & R@1 & ECE & nAUC AP u\_max \\" in text
    assert r"bm25\_k1\&b & 2 & $0.380 \pm 0.000$ & -- & -- \\" in text
    assert r"ensemble & 2 & $\mathbf{0.440 \pm 0.020}$\textsuperscript{\dag} &" in text
    assert r"$0.200 \pm 0.030$\textsuperscript{\ddag}" in text
    assert "Benjamini–Hochberg" in text.splitlines()[-1] and "in brackets" not in text


def test_leaderboard_md_escapes_html_and_pipes_in_names(run_dir):
    from rankuq.bench.results.boards import read_run_dir
    from rankuq.bench.results.rendering import paper_markdown

    csv = run_dir / "leaderboard.csv"
    csv.write_text(
        csv.read_text().replace("ensemble", "<script>alert(1)</script>").replace("wikiqa,", "a|b,")
    )
    text = paper_markdown(read_run_dir(run_dir))
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "## a\\|b" in text


def test_one_seed_shows_the_mean_alone_and_says_1_seed(run_dir):
    """A single seed has no spread: no "± 0.000" in any layout, "1 seed" under the method's name;
    two seeds keep their std, a deterministic method's 0.000 included."""
    table = read_run_dir(run_dir).table
    table.loc[table.method == "ensemble", "seeds"] = 1
    board = Board("my-grid", table, ())
    text = paper_markdown(board)
    assert "| ensemble        |       1 | **0.440** (+10.00% †) " in text
    assert "| bm25            |       2 | 0.380 ± 0.000 (-5.00%)" in text
    assert "the mean alone for one seed" in text
    name, r1 = (column._cells[2] for column in rich_tables(board)[0].columns[:2])
    assert name.plain == "ensemble\n1 seed" and r1.plain == "0.440†"
    assert r"$\mathbf{0.440}$\textsuperscript{\dag}" in paper_latex(board)


def test_the_title_names_the_grid_in_grid_yaml_else_the_folder(run_dir):
    assert read_run_dir(run_dir).name == "my-grid"  # no grid.yaml: the folder's name
    (run_dir / "grid.yaml").write_text("name: paper-000\ntasks: [wikiqa]\n")
    board = read_run_dir(run_dir)
    assert board.name == "paper-000"
    assert paper_markdown(board).startswith("# Leaderboard: paper-000\n")
    assert rich_tables(board)[0].title == "paper-000: wikiqa"
