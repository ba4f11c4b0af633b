"""What a run leaves for people: the leaderboard (aggregation, reading boards back, rendering), the
run directory's result files, MLflow tracking and its store, the HTML report and the provenance of a
run directory."""
