"""The papers' claims measured in finished runs: claims as data (``claims``), reading runs (``runs``),
the verdict logic (``verdicts``) and the Markdown report (``render``)."""
