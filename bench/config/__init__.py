"""What a grid asks for: the grid file's schema (``grid``), training settings (``training``), search
spaces (``search_space``) and the checks of a command's inputs made before the slow imports: its
network addresses (``addresses``), MLflow tracking URI and experiment (``tracking_inputs``), files
and folders (``paths``) and model checkpoint (``backbone_folder``). The built-in grids are data in
``bench.grids``."""
