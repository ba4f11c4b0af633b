"""The plan of a grid, pure and content-keyed: typed jobs (``jobs``), the plan (``plan``) and the
capacity estimate of ``rankuq run --plan`` (``capacity``). Nothing here starts Ray or writes a file."""
