"""A self-contained HTML report of a board: the per-condition tables and every plot, embedded as
data URIs with inline CSS, so the one file opens anywhere without a network or the run directory."""

import base64
import secrets
from pathlib import Path
from typing import cast

import jinja2
import pyarrow as pa
from markupsafe import Markup

from rankuq.bench.plots import OVERVIEW_CONDITIONS, OVERVIEW_METHODS, PLOT_WIDTH_PX, overview_png
from rankuq.bench.results.boards import Board, Plot
from rankuq.bench.results.columns import (
    Piece,
    concat,
    framed,
    in_parallel,
    nonempty,
    replaced,
    split,
    text_of,
    where,
    write_pieces,
)
from rankuq.bench.results.leaderboard import PaperTable, footnote, metrics_of
from rankuq.bench.results.rendering import latex_pieces, markdown_pieces, names
from rankuq.errors import RankuqError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_PLOT_BYTES = 16 << 20  # a plot of bench.plots is about 50 KiB
KIND_TITLES = {"reliability": "Reliability diagram", "risk_aversion": "Risk-aversion curve"}

TEMPLATE = jinja2.Template(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>rankuq leaderboard: {{ name }}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 100%; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 1em 0; font-size: 13px; }
th, td { padding: 3px 6px; border-bottom: 1px solid #ddd; text-align: right; vertical-align: top; }
td { white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
.note { color: #666; font-size: 11px; }
td .note { display: block; }
img.overview { width: 100%; max-width: 1280px; height: auto; }  /* its PNG's width; not figure img's */
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
figure { margin: 0; }
figure img { width: {{ plot_width }}px; max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 13px; text-align: center; }
</style>
</head>
<body data-images="{{ images }}" data-images-loaded="0">
<h1>Leaderboard: {{ name }}</h1>
<p class="note">{{ footnote }}</p>
{% if overview -%}
<figure><img class="overview" src="{{ overview }}" alt="Mean ± std of every method on every metric">
<figcaption>Every method on every metric: mean ± std over seeds, one colour per condition</figcaption>
</figure>
{%- else -%}
<p class="note">No overview plot: {{ methods }} methods in {{ conditions }} conditions are more than one
plot shows (at most {{ max_methods }} methods, {{ max_conditions }} conditions); the tables have them all.</p>
{%- endif %}
{% for section in sections %}
<section>
<h2>{{ section.condition }}</h2>
{% if section.table %}
<div class="scroll"><table>
<tr>{% for column in section.columns %}<th>{{ column }}</th>{% endfor %}</tr>
{{ section.html_rows }}
</table></div>
{% endif %}
{% for title, figures in section.kinds %}
<h3>{{ title }}</h3>
<div class="plots">
{% for uri, caption in figures %}
<figure><img src="{{ uri }}" alt="{{ caption }}"><figcaption>{{ caption }}</figcaption></figure>
{% endfor %}
</div>
{% endfor %}
</section>
{% endfor %}
<script>
// Lets a headless browser's --dump-dom tell that every embedded plot decoded.
window.addEventListener("load", () => {
  const decoded = Array.from(document.images).filter((image) => image.complete && image.naturalWidth > 0);
  document.body.dataset.imagesLoaded = decoded.length;
});
</script>
</body>
</html>
""",
    autoescape=True,
)


def kind_title(kind: str) -> str:
    """'abstention_nDCG_at_10' → 'Performance–abstention curve (nDCG@10)',
    'reliability_ERCE' → 'Reliability ERCE'."""
    if kind.startswith("abstention_"):
        return f"Performance–abstention curve ({kind.removeprefix('abstention_').replace('_at_', '@')})"
    text = kind.replace("_", " ")
    return KIND_TITLES.get(kind, text[:1].upper() + text[1:])


def png_uri(data: bytes) -> str:
    return f"data:image/png;base64,{base64.b64encode(data).decode('ascii')}"


def data_uri(path: Path) -> str:
    """The PNG inlined, so the report needs no file beside it; anything else (by its bytes, not its
    name) is refused, as is a link (``bench.results.leaderboard`` checked the index's paths)."""
    if path.suffix.lower() != ".png" or path.is_symlink():
        raise RankuqError(f"{path}: a plot must be a PNG file (not a link); fix the plot index")
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_PLOT_BYTES + 1)
    except OSError as error:
        raise RankuqError(f"{path}: cannot read the plot ({error.strerror}); rerun `rankuq run`") from None
    if not data.startswith(PNG_MAGIC) or len(data) > MAX_PLOT_BYTES:
        raise RankuqError(
            f"{path}: not a PNG image of at most {MAX_PLOT_BYTES >> 20} MiB; rerun `rankuq run` to redraw it"
        )
    return png_uri(data)


def render_report(board: Board) -> str:
    """The report's HTML: the overview plot of every method and metric, then per condition (board
    order, then conditions with plots only) its table, then its plots grouped by kind (in index
    order), each captioned."""
    return text_of(report_pieces(board))


def report_pieces(board: Board) -> list[Piece]:
    """``render_report`` in pieces (``write_pieces``): the template renders a marker where each
    table's rows go, and the rows, built by Arrow, are put there without becoming a Python string."""
    tables = board.tables
    conditions = list(dict.fromkeys([*tables, *(plot.condition for plot in board.plots)]))
    marker = f"rankuq-rows-{secrets.token_hex(8)}"  # no name can hold it: it is drawn now
    bodies = dict(zip(tables, split(_html_rows(tables.rows), tables.edges), strict=True))
    rows = [bodies[c] for c in conditions if c in tables]
    sections = [
        {
            "condition": c,
            "table": c in tables,
            "columns": ["method", "seeds", *tables.rows.cells] if c in tables else [],
            "html_rows": Markup(marker) if c in tables else "",
            "kinds": _kinds([p for p in board.plots if p.condition == c]),
        }
        for c in conditions
    ]
    overview = overview_png(board.table, metrics_of(board.table))
    html = TEMPLATE.render(
        name=board.name,
        footnote=footnote(board.table),
        overview=overview and png_uri(overview),
        methods=f"{board.table.method.nunique():,}",
        conditions=f"{board.table.condition.nunique():,}",
        max_methods=OVERVIEW_METHODS,
        max_conditions=OVERVIEW_CONDITIONS,
        plot_width=PLOT_WIDTH_PX,
        sections=sections,
        images=len(board.plots) + bool(overview),
    )
    first, *texts = html.split(marker)  # each marker, in section order, is one table's rows
    return [first, *(piece for pair in zip(rows, texts, strict=True) for piece in pair)]


# markupsafe.escape's replacements, in its order (the template escapes names so).
HTML_ESCAPES = (("&", "&amp;"), (">", "&gt;"), ("<", "&lt;"), ("'", "&#39;"), ('"', "&#34;"))


def _html_rows(rows: PaperTable) -> pa.Array:
    """A table's rows as HTML, each between blank lines, built a column at a time (the template's
    loop over 200,000 rows × 13 cells took minutes); names escaped as the template escapes them."""
    columns = [replaced(names(rows.methods), HTML_ESCAPES), names(rows.seeds)]
    for cells in rows.cells.values():
        value = where(cells.best, concat("<strong>", cells.value, "</strong>"), cells.value)
        note = concat(' <span class="note">', cells.note, "</span>")
        columns.append(where(nonempty(cells.note), concat(value, note), value))
    return concat(*framed(columns, "\n<tr><td>", "</td></tr>\n"), sep="</td><td>")


def _kinds(plots: list[Plot]) -> list[tuple[str, list[tuple[str, str]]]]:
    """(title, [(data URI, caption)]) per kind, kinds in order of first appearance."""
    kinds: dict[str, list[Plot]] = {}
    for plot in plots:
        kinds.setdefault(plot.kind, []).append(plot)
    return [
        (title, [(data_uri(p.path), f"{title}: {p.method}, {p.condition}") for p in group])
        for title, group in ((kind_title(kind), group) for kind, group in kinds.items())
    ]


def write_report(board: Board, out: Path | None, latex: Path | None = None) -> tuple[Path, ...]:
    """Write, given ``out``, ``out/leaderboard.md`` (the paper layout) and ``out/report.html`` and,
    given ``latex``, the LaTeX tables there; all are rendered (side by side) before any is written, so
    a bad plot leaves nothing behind."""
    folder = [(markdown_pieces, out / "leaderboard.md"), (report_pieces, out / "report.html")] if out else []
    layouts, paths = zip(*folder, *([(latex_pieces, latex)] if latex else []), strict=True)
    _ = board.tables  # worked out once, before the layouts share it
    documents = in_parallel(lambda layout: layout(board), list(layouts))
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
    in_parallel(lambda written: write_pieces(*written), list(zip(paths, documents, strict=True)))
    return cast(tuple[Path, ...], paths)
