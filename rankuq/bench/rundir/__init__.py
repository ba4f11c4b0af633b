"""The run directory: where everything of a run lies (``layout``), writes that never leave a half-written
file (``atomic``) and the lock that keeps two runs off one directory (``lock``)."""
