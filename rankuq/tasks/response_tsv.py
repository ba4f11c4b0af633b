"""MSDialog and MANtIS response ranking, read from their released TSV files.

As Penha & Hauff, 2021, and Ye et al., AAAI 2023 and ICASSP 2023, use them.

Each line is ``label \\t turn_1 \\t … \\t turn_n \\t response`` (no header); consecutive lines that
share the same turns form one native list (10 candidates as released: the true response and 9
negatives). The corpus is every response of the split. Responses carry no id, so a cid is a hash of
the text: a response repeated inside one list counts once (with its highest label).

Expected files (rename the release's files to these): ``<task>/train.tsv``, ``<task>/valid.tsv``
(split "dev"), ``<task>/test.tsv``.
"""

import hashlib
from pathlib import Path

from rankuq.tasks.base import REGISTRY, Task, require_files
from rankuq.tasks.files import line_error, open_text, tsv_rows
from rankuq.tasks.pool import Pool, PoolBuilder

FIX = "each line must be: label<TAB>turn_1<TAB>…<TAB>turn_n<TAB>response"


def text_cid(text: str) -> str:
    """A stable id for a candidate that has none: a hash of its text."""
    return "r" + hashlib.sha1(text.encode()).hexdigest()[:16]


class ResponseTsv(Task):
    """A response-ranking corpus in the label/turns/response TSV format."""

    folder: str

    def __init_subclass__(cls, **kwargs: object) -> None:
        names = {"train": "train.tsv", "dev": "valid.tsv", "test": "test.tsv"}
        cls.split_files = {split: (f"{cls.folder}/{name}",) for split, name in names.items()}
        cls.native_splits = tuple(names)
        super().__init_subclass__(**kwargs)

    def pool(self, split: str, root: Path) -> Pool:
        [path] = self.source_files(root, split)
        require_files([path])
        builder = PoolBuilder(self.name, split, path, native=True)
        context: tuple[str, ...] | None = None
        judged: dict[int, int] = {}
        with open_text(path, FIX) as handle:
            for line, row in tsv_rows(handle, path):
                label, turns, response = _parse(row, line, path)
                if turns != context:
                    if context is not None:
                        builder.query(f"{self.name}-{split}-{len(builder.qids)}", list(context), judged)
                    context, judged = turns, {}
                cid = builder.candidate(text_cid(response), response)
                judged[cid] = max(label, judged.get(cid, label))
        if context is not None:
            builder.query(f"{self.name}-{split}-{len(builder.qids)}", list(context), judged)
        return builder.build()


def _parse(row: list[str], line: int, path: Path) -> tuple[int, tuple[str, ...], str]:
    """(label, non-empty turns, response) of one line."""
    if len(row) < 3:
        raise line_error(path, line, f"{len(row)} tab-separated fields, expected at least 3; {FIX}")
    try:
        label = int(row[0])
    except ValueError:
        raise line_error(path, line, f"label is '{row[0]}', expected an integer; {FIX}") from None
    if not 0 <= label <= 127:
        raise line_error(path, line, f"label is {label}, expected 0 … 127 (graded relevance)")
    turns = tuple(turn.strip() for turn in row[1:-1] if turn.strip())
    if not turns:
        raise line_error(path, line, f"empty context (every turn is blank); {FIX}")
    response = row[-1].strip()
    if not response:
        raise line_error(path, line, "empty response; fill it in or remove the line")
    return label, turns, response


@REGISTRY.register
class MSDialog(ResponseTsv):
    name = "msdialog"
    folder = "msdialog"
    description = "MSDialog response ranking (Qu et al. 2018), 10 native candidates per context"


@REGISTRY.register
class Mantis(ResponseTsv):
    name = "mantis"
    folder = "mantis"
    description = "MANtIS response ranking (Penha et al. 2019), 10 native candidates per context"
