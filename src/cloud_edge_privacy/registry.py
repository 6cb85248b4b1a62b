"""Module registry with Sedna's ``ClassFactory`` API.

When Sedna is installed (under real Ianvs), its ``ClassFactory`` and ``ClassType`` are used, so the
same module files register into the registry Ianvs reads.  Otherwise a local registry with the same
``register(ClassType.X, alias=...)`` / ``get_cls(ClassType.X, alias)`` API is used by our runner.
Unlike Sedna's, the local registry refuses a second, different class under an existing alias instead
of silently overwriting it (docs/ianvs-contract.md §2).
"""
from __future__ import annotations

from typing import Any, Callable, Dict

__all__ = ["ClassFactory", "ClassType", "USING_SEDNA"]


class _LocalClassType:
    GENERAL = "general"
    HEM = "hard_example_mining"


class _LocalClassFactory:
    """Minimal stand-in for ``sedna.common.class_factory.ClassFactory``."""

    __registry__: Dict[str, Dict[str, Any]] = {}

    @classmethod
    def register(cls, type_name: str = _LocalClassType.GENERAL, alias: str | None = None) -> Callable:
        def wrapper(obj: Any) -> Any:
            name = alias or obj.__name__
            slot = cls.__registry__.setdefault(type_name, {})
            existing = slot.get(name)
            # Re-importing the same module file (e.g. in tests) registers an equal-named object again.
            if existing is not None and getattr(existing, "__qualname__", None) != getattr(obj, "__qualname__", None):
                raise ValueError(f"alias {name!r} is already registered in {type_name!r} by {existing!r}")
            slot[name] = obj
            return obj

        return wrapper

    @classmethod
    def is_exists(cls, type_name: str, cls_name: str | None = None) -> bool:
        if cls_name is None:
            return type_name in cls.__registry__
        return cls_name in cls.__registry__.get(type_name, {})

    @classmethod
    def get_cls(cls, type_name: str, t_cls_name: str) -> Any:
        try:
            return cls.__registry__[type_name][t_cls_name]
        except KeyError:
            known = sorted(cls.__registry__.get(type_name, {}))
            raise ValueError(
                f"can't find class type {type_name} class name {t_cls_name} in class registry; registered: {known}"
            ) from None


try:  # pragma: no cover - depends on the environment
    from sedna.common.class_factory import ClassFactory, ClassType  # type: ignore

    USING_SEDNA = True
except ImportError:
    ClassFactory = _LocalClassFactory  # type: ignore[misc,assignment]
    ClassType = _LocalClassType  # type: ignore[misc,assignment]
    USING_SEDNA = False
