"""Privacy-first cloud-edge LLM inference: library behind the Ianvs TAB benchmark example."""

__version__ = "0.1.0"
