"""The ``rankuq`` command, one module per verb (``run``, ``evaluate``, ``leaderboard``, ``findings``,
``listing``), the parser and the entry point (``main``)."""
