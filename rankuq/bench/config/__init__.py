"""What a grid asks for: the grid file's schema (``grid``), its sections' settings (``training``,
``evaluation``, ``resources``) and search spaces (``search_space``). The built-in grids are data in
``bench.grids``; the checks of a command's inputs are in ``bench.preflight``."""
