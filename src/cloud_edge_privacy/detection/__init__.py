"""Detection: recognizers return :class:`~cloud_edge_privacy.spans.Span` lists; nothing here rewrites text."""
from .pipeline import Detector, merge_spans, propagate_mentions
from .presets import DETECTORS, PRESETS, build_detector, default_detector, detect
from .structured import SECRET_PREFIX, StructuredRecognizer, is_secret

__all__ = ["DETECTORS", "PRESETS", "Detector", "SECRET_PREFIX", "StructuredRecognizer", "build_detector",
           "default_detector", "detect", "is_secret", "merge_spans", "propagate_mentions"]
