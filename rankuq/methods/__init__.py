"""How to score: rankers that output a predictive distribution per (query, candidate)."""

from rankuq.methods.base import REGISTRY, Method, MethodParams, create

get = REGISTRY.get
names = REGISTRY.names
register = REGISTRY.register

from rankuq.methods import (  # noqa: E402,F401  (register the methods)
    bert,
    bm25,
    calibrated,
    conv_knrm,
    ensemble,
    gpf,
    last_layer_mc,
    mc_dropout,
    pg_gp,
    sngp,
)

__all__ = ["REGISTRY", "Method", "MethodParams", "create", "get", "names", "register"]
