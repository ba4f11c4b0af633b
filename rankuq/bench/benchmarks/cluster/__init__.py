"""Distributed for real (issue 12): a head and two worker nodes started as separate Ray nodes on this
machine, worker nodes declaring one logical GPU each, a real ``mlflow server`` on 127.0.0.1, and the
grid driven through the ``rankuq`` command exactly as a cluster user types it.

What it does, in order (every process it starts binds to 127.0.0.1 and is stopped at the end, also on
failure; the cluster lives under its own ``--temp-dir``, so no other ``ray.init()`` on the machine
finds it):

1. reference: ``rankuq run GRID --address <head>`` (5-member ensembles, two seeds, ``gpus_per_trial:
   0.2``): where each member trained (node, ``ray.get_gpu_ids()``, start and end) comes from the
   member's own Ray Train report (``training.json`` beside its weights);
2. lost node + killed driver: the same grid into another run directory with ``--tracking-uri
   http://127.0.0.1:PORT``; one worker node is SIGKILLed (its raylet and every worker) while members
   train on it, then the driver is SIGKILLed mid-scoring and the same command is run again; its
   predictions are compared with the reference's, its MLflow runs counted;
3. ``rankuq leaderboard --tracking-uri`` from another process against the run directory's tables;
4. scaling: a heavier grid (one member per node at a time) on one worker node, then on two, with its
   members trained in their own Tune trials (``resources.trainer: trial``: ``speedup_two_nodes``) and,
   with ``--trainers trial,train``, as Ray Train TorchTrainers (the default:
   ``speedup_two_nodes_ray_train``; 6 more minutes), and the most two cores can give: the same
   training steps in one process alone, then in two at once, one per core (``core_ceiling``; 2.0
   where the cores do not slow each other down).

    python -m rankuq.bench.benchmarks.cluster [--skip-scaling] [--keep] [--trainers trial,train]

Prints one JSON object. Take the scaling figure on a quiet machine: the load average is in the JSON.
"""
