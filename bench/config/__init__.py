"""What a grid asks for: the grid file's schema (``grid``), training settings (``training``), search
spaces (``search_space``) and the checks of a command's inputs made before the slow imports
(``command_inputs``). The built-in grids are data in ``bench.grids``."""
