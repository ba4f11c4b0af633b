"""The papers' claims measured in finished runs: claims as data (``claims``), reading runs (``runs``),
the statistical procedure (``statistics``), the sides of a comparison and their effect (``sides``),
the preconditions (``preconditions``), what a measured claim holds (``rows``), the cost claims
(``cost``), the verdict logic (``verdicts``), the forest plot (``plot``) and the Markdown report
(``render``)."""
