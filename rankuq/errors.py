"""The one exception type users see: the CLI prints its message on one line and exits 2."""


class RankuqError(Exception):
    """Bad input or configuration; the message names what, where, and how to fix it."""
