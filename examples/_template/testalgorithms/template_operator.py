"""A privacy method of the template scenario (docs/extending.md, "Add a privacy method"): every
detected span becomes its TAB category in angle brackets, e.g. ``<PERSON>``.  Irreversible and
deterministic (no randomness, no ε), so the egress guard checks its output like any masking
method's."""
from typing import Sequence

from cloud_edge_privacy.desensitization.base import (Desensitized, apply_replacements,
                                                    register_operator)
from cloud_edge_privacy.randomness import Randomness
from cloud_edge_privacy.spans import Span


@register_operator("category_tag")
class CategoryTag:  # pylint: disable=too-few-public-methods
    """``privacy_method: category_tag`` in a test-algorithm YAML."""

    name = "category_tag"

    def __call__(self, text: str, spans: Sequence[Span], rand: Randomness,
                 scope: str = "") -> Desensitized:
        return apply_replacements(text, spans, lambda span, surface: f"<{span.category}>",
                                  self.name)
