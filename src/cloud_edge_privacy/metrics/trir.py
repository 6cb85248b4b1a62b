"""TRIR: text re-identification risk (after Manzanares-Salor et al., DMKD 2024), our own implementation.

Threat model: the attacker holds public background knowledge about a *superset* of the people in the
benchmark (``background_knowledge.json``: doc_id -> public judgment text; in TAB the header and the law
part of each judgment, never the facts that are sent).  It learns to link a text to a person:

* training examples: each background text cut into overlapping word windows (``CHUNK_WORDS`` words,
  ``CHUNK_STRIDE`` apart), labelled with its doc_id (one class per person/case);
* features: TF-IDF over word unigrams (sublinear tf, accents folded), fitted on the background only;
* classifier: a linear SVM trained by SGD (hinge loss, one-vs-rest, fixed ``random_state``).

Attack: the classifier's top-1 prediction for exactly what left the edge (the *user* messages of
``sent_messages``).  **TRIR = share of attacked texts whose top-1 prediction is the true doc_id.**
A sample is attacked when something was sent and its doc_id is one of the background identities
(otherwise the attacker cannot win by construction, and the sample is left out and counted).  The
unprotected baseline is the same attack on the original text (:func:`trir_original`).

The trained attacker is cached on disk under ``cache_dir()/trir`` keyed by the sha256 of the background
file and the attacker's configuration, so a job trains it once (about 10 s on 2 cores).
"""
from __future__ import annotations

import json
import os
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..hashing import sha256_file, stable_hash
from .samples import SampleView, unpack

CHUNK_WORDS = 150
CHUNK_STRIDE = 100
ATTACKER_CONFIG = {"version": 1, "features": "tfidf-word-unigram-sublinear-ascii", "classifier": "sgd-hinge",
                   "alpha": 1e-5, "epochs": 8, "random_state": 0, "chunk_words": CHUNK_WORDS,
                   "chunk_stride": CHUNK_STRIDE}
BACKGROUND_ENV = "TAB_BACKGROUND_KNOWLEDGE"
BACKGROUND_NAME = "background_knowledge.json"


def background_path() -> Optional[Path]:
    """``$TAB_BACKGROUND_KNOWLEDGE``, else ``$TAB_DATA_DIR/background_knowledge.json``, else
    the repository's ``data/tab/background_knowledge.json`` (see :mod:`..datasets`); None when none exists."""
    candidates = []
    if os.environ.get(BACKGROUND_ENV):
        candidates.append(Path(os.environ[BACKGROUND_ENV]))
    if os.environ.get("TAB_DATA_DIR"):
        candidates.append(Path(os.environ["TAB_DATA_DIR"]) / BACKGROUND_NAME)
    from ..datasets import data_path

    shipped = data_path(f"tab/{BACKGROUND_NAME}")
    if shipped is not None:
        candidates.append(shipped)
    return next((p for p in candidates if p.is_file()), None)


def use_background_unless_set(path: Path) -> None:
    """Make ``path`` the background knowledge unless ``$TAB_BACKGROUND_KNOWLEDGE`` names one (an example that
    ships its own file calls this; the environment still wins)."""
    if Path(path).is_file():
        os.environ.setdefault(BACKGROUND_ENV, str(path))


def chunk_words(text: str, size: int = CHUNK_WORDS, stride: int = CHUNK_STRIDE) -> List[str]:
    """Overlapping windows of ``size`` words every ``stride`` words; the last window reaches the end."""
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)] if words else []
    starts = list(range(0, len(words) - size + 1, stride))
    if starts[-1] + size < len(words):
        starts.append(len(words) - size)
    return [" ".join(words[s:s + size]) for s in starts]


@dataclass
class Attacker:
    """A trained linking attacker: ``predict(texts)`` returns the top-1 identity of each text."""

    vectorizer: Any
    classifier: Any
    identities: Tuple[str, ...]
    key: str

    def predict(self, texts: Sequence[str]) -> List[str]:
        if not texts:
            return []
        return [str(p) for p in self.classifier.predict(self.vectorizer.transform(list(texts)))]

    def knows(self, identity: str) -> bool:
        return identity in set(self.identities)


def train_attacker(background: Dict[str, str], key: str = "") -> Attacker:
    """Fit TF-IDF and the SGD linear SVM on chunked background texts (one class per identity)."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import SGDClassifier

    texts: List[str] = []
    labels: List[str] = []
    for identity in sorted(background):
        for chunk in chunk_words(str(background[identity] or "")):
            texts.append(chunk)
            labels.append(identity)
    if len(set(labels)) < 2:
        raise ValueError("TRIR background knowledge needs at least two identities with text")
    vec = TfidfVectorizer(sublinear_tf=True, strip_accents="unicode", dtype=np.float32)
    features = vec.fit_transform(texts)
    clf = SGDClassifier(loss="hinge", alpha=ATTACKER_CONFIG["alpha"], max_iter=ATTACKER_CONFIG["epochs"], tol=None,
                        random_state=ATTACKER_CONFIG["random_state"])
    clf.fit(features, np.array(labels))
    return Attacker(vec, clf, tuple(sorted(set(labels))), key)


def attacker_key(path: Path) -> str:
    """Stable cache key: sha256 of the background file, the attacker config and the sklearn version."""
    import sklearn

    return stable_hash({"background_sha256": sha256_file(str(path)), "config": ATTACKER_CONFIG,
                        "sklearn": sklearn.__version__})[:24]


def load_or_train_attacker(path: Optional[Path] = None, cache: Optional[Path] = None) -> Attacker:
    """The attacker for a background file, from the on-disk cache or trained and stored there.

    The cache file is written atomically; a corrupt or foreign file is retrained over."""
    from ..models.catalog import cache_dir

    path = path or background_path()
    if path is None:
        raise FileNotFoundError(f"no TRIR background knowledge: set ${BACKGROUND_ENV} or place {BACKGROUND_NAME} "
                                "in the repository's data/tab (or $TAB_DATA_DIR)")
    key = attacker_key(path)
    folder = cache or (cache_dir() / "trir")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"attacker-{key}.pkl"
    if target.is_file():
        try:
            with open(target, "rb") as fh:
                attacker = pickle.load(fh)
            if isinstance(attacker, Attacker) and attacker.key == key:
                return attacker
        except Exception:  # noqa: BLE001 - an unreadable cache entry is retrained, never trusted
            pass
    with open(path, encoding="utf-8") as fh:
        background = json.load(fh)
    if not isinstance(background, dict):
        raise ValueError(f"{path}: expected a JSON object doc_id -> text")
    attacker = train_attacker({str(k): str(v) for k, v in background.items()}, key)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        pickle.dump(attacker, fh)
    os.replace(tmp, target)
    return attacker


def sent_user_text(view: SampleView) -> Optional[str]:
    """The user messages that left the edge for this sample, joined; None when nothing was sent."""
    msgs = view.sent_messages()
    if msgs is None:
        return None
    return "\n".join(str(m.get("content", "")) for m in msgs if m.get("role", "user") == "user")


def per_sample(y_true: Sequence[Any], y_pred: Sequence[Any], attacker: Optional[Attacker] = None,
               original: bool = False) -> List[Optional[int]]:
    """Per sample: 1 when the attacker's top-1 identity is the true doc_id, 0 when not, None when the
    sample is not attacked (nothing sent, or its doc_id is outside the background knowledge).

    ``original=True`` attacks the unprotected document text of every sample instead (the baseline)."""
    views = unpack(y_true, y_pred)
    targets: List[Tuple[int, str, str]] = []
    for i, v in enumerate(views):
        doc_id = str(v.gold.get("doc_id") or "")
        text = str(v.gold.get("text") or "") if original else sent_user_text(v)
        if text:
            targets.append((i, doc_id, text))
    out: List[Optional[int]] = [None] * len(views)
    if not targets:
        return out
    attacker = attacker or load_or_train_attacker()
    known = set(attacker.identities)
    targets = [t for t in targets if t[1] in known]
    guesses = attacker.predict([t[2] for t in targets])
    for (i, doc_id, _), guess in zip(targets, guesses):
        out[i] = int(guess == doc_id)
    return out


def _rate(values: List[Optional[int]]) -> float:
    hits = [v for v in values if v is not None]
    return float("nan") if not hits else round(sum(hits) / len(hits), 6)


def trir(y_true: Sequence[Any], y_pred: Sequence[Any], attacker: Optional[Attacker] = None) -> float:
    """TRIR on what was sent: share of attacked sent texts linked to the right person (lower is better).

    NaN when no sample was attacked, or when no background knowledge is available (said on stderr)."""
    if attacker is None and background_path() is None:
        print("iar_trir: no background knowledge file found; TRIR not computed", file=sys.stderr)
        return float("nan")
    return _rate(per_sample(y_true, y_pred, attacker))


def trir_original(y_true: Sequence[Any], y_pred: Sequence[Any], attacker: Optional[Attacker] = None) -> float:
    """The same attack on the unprotected original texts: the risk before any protection."""
    if attacker is None and background_path() is None:
        return float("nan")
    return _rate(per_sample(y_true, y_pred, attacker, original=True))
