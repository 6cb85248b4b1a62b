"""A loaded spaCy pipeline that forgets what it read.

spaCy keeps every new word it tokenizes (its string store, lexemes and tokenizer cache) for the life of the
process: names, e-mail addresses and numbers of past prompts, about 25 KB per prompt across the default preset's
models, so a gateway serving all day grows without bound.  Each call here reads inside ``nlp.memory_zone()``,
which frees them when the call returns.  A zone swaps state on the shared pipeline and must not overlap another,
so calls on one pipeline take its lock (different models still run side by side).

Inside a zone every word the pipeline does not hold yet is made again on each call, so the pipeline is given
the most frequent English words (and their capitalised forms) once, when it is loaded, outside any zone: that
wins back most of what the zones cost (what is left, 3-4% of the gateway's p50, is in docs/detection.md).  A
word's features are computed from its string, so what the model reads, and the spans, do not change.

The models' layer products run in ONNX Runtime rather than in thinc's bundled BLIS (see :mod:`.products`), their
embeddings' first product is made once, at load (:mod:`.embed_tables`), their window encoders multiply in int8
(:mod:`.int8_encoders`), and their entity recognizers decode through :class:`.greedy_ner.GreedyNer` (the same spans,
the products batched).
"""
from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Sequence, TypeVar

from .embed_tables import use_embed_tables
from .greedy_ner import GreedyNer
from .int8_encoders import use_int8_encoders
from .products import use_ort_products

T = TypeVar("T")
# about 0.4 s per pipeline at load
FREQUENT_WORDS = 10_000


class SpacyPipeline:
    """``nlp`` with :meth:`read`, the one way the recognizers run it."""

    def __init__(self, nlp: Any, frequent_words: int = FREQUENT_WORDS) -> None:
        self.nlp = nlp
        use_ort_products(nlp)
        use_embed_tables(nlp)
        use_int8_encoders(nlp)
        self._decoders = greedy_decoders(nlp)
        self._lock = threading.Lock()
        # a child forked while another thread reads would inherit the lock held, for ever
        ref = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _new_lock(ref))
        if frequent_words:
            from wordfreq import top_n_list

            words = top_n_list("en", frequent_words)
            forms = list(dict.fromkeys(words + [w.capitalize() for w in words]))
            tokenizer = nlp.tokenizer
            tokenizer.max_cache_size = max(tokenizer.max_cache_size, len(forms) + 1000)
            for form in forms:
                nlp.vocab[form]  # a lexeme kept for the life of the pipeline
                # and its place in the tokenizer's cache: one form a call, as spaCy caches no chunk of a text after
                # one with a special case ("i", "don't"), and so had cached almost none of them in one text
                tokenizer(form)

    def read(self, texts: Iterable[str], convert: Callable[[Any], T], batch_size: int = 32) -> List[T]:
        """``convert(doc)`` of each text, in order; no ``Doc`` (or anything made from it) outlives the call."""
        return self.read_with_texts(list(texts), lambda doc, _text: convert(doc), batch_size)

    def read_with_texts(self, texts: Sequence[str], convert: Callable[[Any, str], T], batch_size: int = 32) -> List[T]:
        """``convert(doc, text)`` of each text, in order: the text as given, which ``doc.text`` rebuilds token by
        token (a tenth of the default detector's time on TAB dev went to that)."""
        with self._lock, self.nlp.memory_zone():
            return [convert(doc, text) for text, doc in zip(texts, pipe(self.nlp, texts, self._decoders, batch_size))]


def greedy_decoders(nlp: Any) -> Dict[str, GreedyNer]:
    """A :class:`GreedyNer` for each entity recognizer of ``nlp``, by component name."""
    from spacy.pipeline import EntityRecognizer

    return {name: GreedyNer(proc) for name, proc in nlp.pipeline if isinstance(proc, EntityRecognizer)}


def pipe(nlp: Any, texts: Iterable[str], decoders: Mapping[str, GreedyNer], batch_size: int = 32) -> Iterator[Any]:
    """``nlp.pipe(texts)``, with the named components decoded by ``decoders``."""
    from spacy.util import minibatch

    for batch in minibatch(texts, batch_size):
        docs = [nlp.make_doc(text) for text in batch]
        for name, proc in nlp.pipeline:
            decoder = decoders.get(name)
            docs = decoder(docs) if decoder is not None else list(proc.pipe(docs, batch_size=batch_size))
        yield from docs


def _new_lock(ref: "weakref.ref[SpacyPipeline]") -> None:
    pipeline = ref()
    if pipeline is not None:
        pipeline._lock = threading.Lock()
