"""Docstring text as Markdown, shared by the site's hooks (imported by name: MkDocs puts this folder
on sys.path while it loads a hook)."""

import re

CODE = re.compile(r"(``.+?``|`[^`]+`)", re.DOTALL)


def escape(text: str) -> str:
    """Prose as Markdown text: '&' and '<' escaped outside code spans (a ``<k>`` in a docstring is
    not an HTML tag)."""
    parts = CODE.split(text)
    return "".join(
        part if index % 2 else part.replace("&", "&amp;").replace("<", "&lt;")
        for index, part in enumerate(parts)
    )


def cell(text: object) -> str:
    """One table cell: on one line, '|' and HTML escaped."""
    return escape(" ".join(str(text).split())).replace("|", "\\|")
