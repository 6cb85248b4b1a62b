"""The shipped recognizers: every module of the ``detection`` package is imported once, on the first look-up
(each recognizer registers itself in its own module, so a new one is one file and one preset line), and a
plug-in registered from another package (the federated model, ``cloud_edge_privacy.federated.recognizer``) is
imported by its module name (:data:`PLUGINS`).

The tables derived from every registered declaration (merge priorities, identifying categories, fine entity
types) are what ``merge_spans`` without a detector, the egress guard and the library API read.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Dict, FrozenSet, Mapping, Tuple

from ..errors import ModelFileError
from .recognizer import Registered, RecognizerSpec, fine_types, identifying, priorities, registered, \
    registered_specs

# Recognizers registered by another package: name -> the module that registers it (imported by name, only when
# asked for: the detection layer never imports the federated wing).
PLUGINS: Mapping[str, Tuple[str, str]] = MappingProxyType({
    "federated": ("cloud_edge_privacy.federated.recognizer", "the federated training module (its extra: torch)"),
})


@lru_cache(maxsize=1)
def shipped_modules() -> Tuple[str, ...]:
    """Import every module of the detection package (its recognizers register themselves); their names."""
    names = tuple(m.name for m in pkgutil.walk_packages([str(Path(__file__).parent)], f"{__package__}."))
    for name in names:
        importlib.import_module(name)
    return names


def _load_plugin(name: str) -> None:
    module, what = PLUGINS[name]
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ModelFileError(f"recognizer {name!r} is registered by {module}, {what}, which cannot be imported: "
                             f"{exc}") from exc


def recognizer(name: str) -> Registered:
    """The recognizer registered under ``name`` (a plug-in's module is imported first); a clear error if none."""
    shipped_modules()
    if registered(name) is None and name in PLUGINS:
        _load_plugin(name)
    found = registered(name)
    if found is None:
        raise ValueError(f"no recognizer registered as {name!r}; registered: {sorted(s.name for s in specs())}")
    return found


def specs() -> Tuple[RecognizerSpec, ...]:
    """Every registered declaration, the plug-ins' included (a plug-in that cannot be imported cannot have
    produced a span, so it is left out)."""
    shipped_modules()
    for name in PLUGINS:
        if registered(name) is None:
            try:
                _load_plugin(name)
            except ModelFileError:
                pass
    return registered_specs()


def all_priorities() -> Dict[str, float]:
    """Source prefix -> merge priority of every registered recognizer."""
    return priorities(specs())


def all_identifying() -> FrozenSet[str]:
    """The categories the registered recognizers declare identifying (PERSON, CODE, ORG, LOC)."""
    return identifying(specs())


def all_fine_types() -> Dict[str, str]:
    """``Span.source`` -> fine entity type, as the registered recognizers declare them."""
    return fine_types(specs())
