"""The plan of a grid, pure and content-keyed: typed jobs (``jobs``), the plan (``plan``) and the
capacity estimate of ``rankuq run --plan``: its measured costs (``measured``, read from rankuq/records/), the
arithmetic (``capacity``) and the plan's text (``summary``). Nothing here starts Ray or writes a file."""
