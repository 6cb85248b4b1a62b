"""Evaluation sets built by this project (the user-prompt set); TAB itself is loaded by :mod:`..tab_data`."""
from .user_prompts import SPLITS, generate, load_split, write_splits

__all__ = ["SPLITS", "generate", "load_split", "write_splits"]
