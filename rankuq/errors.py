"""The one exception type users see: the CLI prints its message on one line and exits 2; and what tells
an interruption (Ctrl-C, SIGTERM) from a failure."""


class RankuqError(Exception):
    """Bad input or configuration; the message names what, where, and how to fix it."""


def interruption(error: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM, a KeyboardInterrupt subclass) that ``error`` is, or that was being
    handled when it was raised: a library cleaning up after one may fail in turn (SQLAlchemy's
    PendingRollbackError when Ctrl-C lands while MLflow creates its tables)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return seen
        seen = seen.__context__
    return None
