"""Users' own tables as tasks: ``parquet:<path>`` (contract 1) and ``hf:<path>`` (Hugging Face datasets).

- ``parquet:<path>``: a contract-1 Parquet file, or a folder of them, holding every split (its
  ``split`` column says which); the ``task``, ``ns`` and ``nota`` columns are recomputed.
- ``hf:<path>[?contract=column&…]``: a dataset saved with ``datasets``' ``save_to_disk`` (a
  ``DatasetDict``: its splits, ``validation`` read as dev; a single ``Dataset``: its ``split``
  column, or all rows as test), or a local folder of data files ``datasets.load_dataset`` reads.
  Columns are mapped onto the contract after ``?``: ``hf:data/qa?context=question&text=answer``.
  Unmapped names are taken as they are; ``context`` may be a string or a list of turns; without a
  ``qid`` column a query is its context, without a ``cid`` a candidate is its text (ids are
  hashes). Needs the optional ``datasets`` package (``pip install rankuq[hf]``).

Either way the lists are native: a query's rows are its candidate list, the corpus every candidate
of the split. A relative path is taken from the current directory. Rows of one query need not be
contiguous in a Hugging Face dataset (they are grouped in order of first appearance).
"""

import hashlib
from abc import abstractmethod
from pathlib import Path
from urllib.parse import parse_qsl

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rankuq.contract import EXTRA_COLUMNS, validate_candidates
from rankuq.errors import RankuqError
from rankuq.tasks.base import SPLITS, Task, register_family, require_files
from rankuq.tasks.pool import Pool, PoolBuilder

COLUMNS = ("qid", "context", "cid", "text", "label", "split")  # what an hf: mapping may name
HF_SPLITS = {"validation": "dev"}  # Hugging Face split names → rankuq's


class TableTask(Task):
    """A task over one user table; subclasses read it into contract columns (``read``)."""

    path: Path
    split_files = dict.fromkeys(SPLITS, ())  # the files are the user's: see ``source_files``
    native_splits = SPLITS

    def source_files(self, root: Path, split: str | None = None) -> list[Path]:
        if split is not None:
            self.check_split(split)
        if not self.path.exists():
            raise RankuqError(f"task '{self.name}': {self.path} not found; name an existing file or folder")
        if self.path.is_dir():
            return sorted(path for path in self.path.rglob("*") if path.is_file())
        return [self.path]

    @abstractmethod
    def read(self) -> pa.Table:
        """All rows with columns qid, context (list<str>), cid, text, label and split (row numbers in
        errors count through this table: a Hugging Face dataset's splits one after the other)."""

    def pool(self, split: str, root: Path) -> Pool:
        require_files(self.source_files(root, split))
        table = self.read()
        splits = pc.unique(table.column("split")).to_pylist()
        if split not in splits:
            raise RankuqError(
                f"{self.path}: no rows of split '{split}'; its splits: {', '.join(sorted(splits))}"
            )
        rows = pc.indices_nonzero(pc.equal(table.column("split"), split))
        return _pool(table.take(rows), rows.to_pylist(), self.name, split, self.path)


def _pool(table: pa.Table, rows: list[int], task: str, split: str, source: Path) -> Pool:
    """One native list per qid (in order of first appearance); ``rows`` are the source row numbers."""
    builder = PoolBuilder(task, split, source, native=True)
    extras = [field.name for field in EXTRA_COLUMNS if field.name in table.column_names]
    queries: dict[str, tuple[list[str], dict[int, int], dict[str, int | None]]] = {}
    texts: dict[str, str] = {}
    columns = [table.column(name).to_pylist() for name in ("qid", "context", "cid", "text", "label")]
    extra_values = [table.column(name).to_pylist() for name in extras]
    for index, (qid, context, cid, text, label) in enumerate(zip(*columns, strict=True)):
        where = f"{source}: row {rows[index]}"
        if texts.setdefault(cid, text) != text:
            raise RankuqError(f"{where}: cid {cid} has two texts; give each candidate text its own cid")
        turns, judged, values = queries.setdefault(
            qid,
            (context, {}, {name: column[index] for name, column in zip(extras, extra_values, strict=True)}),
        )
        if turns != context:
            raise RankuqError(f"{where}: query {qid} has two contexts; give each context its own qid")
        row = builder.candidate(cid, text)
        if row in judged:
            raise RankuqError(f"{where}: candidate {cid} appears twice in query {qid}; keep one")
        judged[row] = label
    for qid, (context, judged, values) in queries.items():
        builder.query(qid, context, judged, **values)
    return builder.build()


class ParquetTask(TableTask):
    """``parquet:<path>``: contract-1 Parquet, checked with the contract's own validation."""

    def read(self) -> pa.Table:
        try:
            table = pq.read_table(self.path)
        except (OSError, pa.ArrowInvalid) as error:
            raise RankuqError(f"{self.path}: not readable Parquet ({error}); write it with pyarrow") from None
        return validate_candidates(table, str(self.path))


class HuggingFaceTask(TableTask):
    """``hf:<path>?…``: a Hugging Face dataset on disk, its columns mapped onto the contract."""

    mapping: dict[str, str]

    def read(self) -> pa.Table:
        try:
            import datasets
        except ImportError:
            raise RankuqError(
                f"task '{self.name}' needs the datasets package; pip install 'rankuq[hf]'"
            ) from None
        saved = (self.path / "dataset_dict.json").is_file() or (self.path / "state.json").is_file()
        try:
            loaded = (
                datasets.load_from_disk(str(self.path)) if saved else datasets.load_dataset(str(self.path))
            )
        except (OSError, ValueError, FileNotFoundError) as error:
            reason = " ".join(str(error).split())[:200]
            raise RankuqError(
                f"{self.path}: not a dataset datasets can load ({reason}); save it with save_to_disk"
            ) from None
        if isinstance(loaded, datasets.DatasetDict):
            parts = [(HF_SPLITS.get(name, name), part) for name, part in loaded.items()]
        else:
            parts = [(None, loaded)]
        return pa.concat_tables(self._contract(part.with_format("arrow")[:], split) for split, part in parts)

    def _contract(self, table: pa.Table, split: str | None) -> pa.Table:
        """Contract columns of one part: mapped, ids filled in, context as a list of turns."""
        source = {name: self.mapping.get(name, name) for name in COLUMNS}
        for name in ("context", "text", "label"):
            if source[name] not in table.column_names:
                raise RankuqError(
                    f"{self.path}: no column '{source[name]}' for the contract's {name}; columns: "
                    f"{', '.join(table.column_names)}; map one: {self.name.partition('?')[0]}?{name}=<column>"
                )
        column = {name: table.column(source[name]) for name in COLUMNS if source[name] in table.column_names}
        context = column["context"]
        if not pa.types.is_list(context.type) and not pa.types.is_large_list(context.type):
            context = pa.array([[turn] for turn in context.to_pylist()], pa.list_(pa.string()))
        texts = column["text"].to_pylist()
        turns = context.to_pylist()
        n = table.num_rows
        if "split" in column:
            splits = [HF_SPLITS.get(value, value) for value in column["split"].to_pylist()]
        else:
            splits = [split or "test"] * n
        contract = pa.table(
            {
                "qid": column["qid"].cast(pa.string()) if "qid" in column else [_hash(t) for t in turns],
                "context": context,
                "cid": column["cid"].cast(pa.string()) if "cid" in column else [_hash([t]) for t in texts],
                "text": pa.array(texts, pa.string()),
                "label": column["label"],
                "split": pa.array(splits, pa.string()),
            }
        )
        return _check(contract, self.path)


def _check(table: pa.Table, path: Path) -> pa.Table:
    """Nulls, empty texts and labels outside 0..127 raise, naming the row."""
    for name in ("qid", "context", "cid", "text", "label", "split"):
        nulls = table.column(name).is_null()
        if pc.any(nulls).as_py():
            row = pc.index(nulls, True).as_py()
            raise RankuqError(f"{path}: row {row}: '{name}' is null; every field must be set")
    try:
        labels = table.column("label").cast(pa.int64())
    except pa.ArrowInvalid:
        raise RankuqError(
            f"{path}: label is {table.column('label').type}, expected integers 0..127"
        ) from None
    bad = pc.or_(pc.less(labels, 0), pc.greater(labels, 127))
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        raise RankuqError(f"{path}: row {row}: label {labels[row]} is outside 0..127; map it to a grade")
    empty = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(table.column("text"))), 0)
    if pc.any(empty).as_py():
        raise RankuqError(
            f"{path}: row {pc.index(empty, True).as_py()}: empty text; fill it in or drop the row"
        )
    return table.set_column(table.schema.get_field_index("label"), "label", labels.cast(pa.int8()))


def _hash(parts: list[str]) -> str:
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=8).hexdigest()


_TABLES: dict[str, type[TableTask]] = {}


def _table_task(prefix: str, base: type[TableTask], argument: str) -> type[TableTask]:
    """The task ``<prefix><argument>``, one class per name."""
    name = f"{prefix}{argument}"
    if name in _TABLES:
        return _TABLES[name]
    path, _, query = argument.partition("?")
    if not path.strip():
        raise RankuqError(f"task '{name}': name a path, e.g. {prefix}data/my_lists")
    attributes: dict[str, object] = {
        "name": name,
        "description": f"the user's table {path}",
        "path": Path(path).expanduser().resolve(),
    }
    if base is HuggingFaceTask:
        mapping = dict(parse_qsl(query, keep_blank_values=True))
        unknown = sorted(set(mapping) - set(COLUMNS))
        if unknown or not all(mapping.values()):
            raise RankuqError(
                f"task '{name}': map contract columns {', '.join(COLUMNS)} to source columns, "
                f"e.g. {prefix}{path}?context=question&text=answer (got {', '.join(unknown) or 'an empty'})"
            )
        attributes["mapping"] = mapping
    elif query:
        raise RankuqError(f"task '{name}': a contract-1 Parquet task takes no column mapping; drop ?{query}")
    _TABLES[name] = type(base.__name__, (base,), attributes)
    return _TABLES[name]


register_family("parquet:", "<path>", lambda argument: _table_task("parquet:", ParquetTask, argument))
register_family(
    "hf:", "<path>?contract=column", lambda argument: _table_task("hf:", HuggingFaceTask, argument)
)
