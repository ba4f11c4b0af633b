"""The Ray side of a run: the session and its processes, the cluster a run sizes its work by,
checkpoints, the training loop, members as Tune trials running Ray Train, Ray Data scoring, post-hoc
fits and Tune searches."""
