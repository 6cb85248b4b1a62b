"""Detection: recognizers return :class:`~cloud_edge_privacy.spans.Span` lists; nothing here rewrites text."""
from .pipeline import Detector, merge_spans, propagate_mentions
from .presets import DETECTORS, PRESETS, build_detector
from .structured import SECRET_PREFIX, StructuredRecognizer, is_secret

__all__ = ["DETECTORS", "PRESETS", "Detector", "SECRET_PREFIX", "StructuredRecognizer", "build_detector",
           "is_secret", "merge_spans", "propagate_mentions"]
