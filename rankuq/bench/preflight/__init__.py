"""The checks of a command's inputs made before the slow imports (Ray, torch, MLflow): its network
addresses (``addresses``), MLflow tracking URI and experiment (``tracking_inputs``), files and
folders (``paths``) and model checkpoint (``backbone_folder``, its files read by ``checkpoint``);
each refuses with one line naming the input and how to fix it."""
