"""How to score: rankers that output a predictive distribution per (query, candidate)."""

from methods.base import REGISTRY, Method, MethodParams

get = REGISTRY.get
names = REGISTRY.names
register = REGISTRY.register

from methods import bert, bm25, ensemble, mc_dropout  # noqa: E402,F401  (register the methods)

__all__ = ["REGISTRY", "Method", "MethodParams", "get", "names", "register"]
