"""Detection: recognizers return :class:`~cloud_edge_privacy.spans.Span` lists; nothing here rewrites text."""
from .pipeline import Detector, detect

__all__ = ["Detector", "detect"]
