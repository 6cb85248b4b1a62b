"""The learned, contextual recognizer (a spaCy NER trained by ``scripts/train_learned_ner.py``) and the fixed
cross-validation folds of the real development prompts it is evaluated on."""
from .folds import N_FOLDS, fold_of
from .ner import MODEL_DIR, LearnedNerRecognizer, fold_model_dir

__all__ = ["N_FOLDS", "fold_of", "MODEL_DIR", "LearnedNerRecognizer", "fold_model_dir"]
