"""A grid run: the stages in order (``stages``) and the runner that sequences them (``runner``)."""
