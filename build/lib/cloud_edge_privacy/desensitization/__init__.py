"""Desensitization operators: each takes text + spans and returns new text plus a span mapping."""
from .base import Desensitized, Replacement, apply_replacements, get_operator, list_operators, register_operator
from . import basic_operators, dp_mechanisms, generalization, policy, pseudonyms  # noqa: F401  (register the operators)

__all__ = ["Desensitized", "Replacement", "apply_replacements", "get_operator", "list_operators", "register_operator"]
