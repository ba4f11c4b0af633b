"""A grid run: its one way in for the command and the API (``grid_run``: preflight, lock, leftover
Ray stopped), the runner that sequences the stages (``runner``) and the stages in order (``stages``)."""
