"""Detection: recognizers return :class:`~cloud_edge_privacy.spans.Span` lists; nothing here rewrites text."""
from .pipeline import DETECTORS, Detector, build_detector, default_detector, detect

__all__ = ["DETECTORS", "Detector", "build_detector", "default_detector", "detect"]
