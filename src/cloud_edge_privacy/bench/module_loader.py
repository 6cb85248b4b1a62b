"""Import module files the way Ianvs does (docs/ianvs-contract.md §9): by bare file name, folder on sys.path."""
from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from ..errors import ConfigError


def import_module_file(url: str) -> ModuleType:
    """Import ``url`` (a .py file or a package directory) by its bare name, once per process."""
    path = os.path.abspath(url.rstrip("/"))
    if not os.path.exists(path):
        raise ConfigError(f"module url {url!r} not found (relative to {os.getcwd()})")
    folder, base = os.path.split(path)
    name = base[:-3] if base.endswith(".py") else base
    cached = sys.modules.get(name)
    if cached is not None:
        cached_file = os.path.abspath(getattr(cached, "__file__", "") or "")
        if cached_file and os.path.dirname(cached_file) not in (folder, path):
            raise ConfigError(f"module basename clash: {url!r} vs already imported {cached_file!r} "
                              "(Ianvs imports by bare file name; give files unique names)")
        return cached
    sys.path.insert(0, folder)
    try:
        return importlib.import_module(name)
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
