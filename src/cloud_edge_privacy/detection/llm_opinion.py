"""The edge LLM as a second opinion: after the recognizers, the local model reads the prompt with what they
found already redacted and lists any private item left.  Only strings that occur verbatim in the prompt, are
outside the spans found so far and are not everyday words are kept (a small model invents and repeats).

Opt-in (preset ``default+llm``): it costs one local generation per text, seconds on 2 CPU cores against tens of
milliseconds for the recognizers.  Its answers are not cached on disk, since the prompt holds the raw text.
"""
from __future__ import annotations

import json
import re
from typing import Callable, Dict, List, Optional, Sequence

from ..spans import Span
from .recognizer import Reads, register_recognizer

Chat = Callable[[List[Dict[str, str]]], str]
_REDACTED = "[REDACTED]"
_SYSTEM = "You find personal information in user messages. You answer with JSON only."
_ASK = ("Message:\n<<<\n{text}\n>>>\n\nSome private items are already replaced by [REDACTED]. List every private "
        "item still written in clear in the message: names of people, usernames, places, organisations, ID numbers, "
        "phone numbers, e-mails, passwords, keys. Copy each exactly as written. Answer with a JSON array of "
        "strings, or [] if there is none.")


def parse_items(answer: str) -> List[str]:
    """The strings of the first JSON array in ``answer`` (none if there is no valid array)."""
    m = re.search(r"\[.*?\]", answer, re.S)
    if not m:
        return []
    try:
        items = json.loads(m.group())
    except json.JSONDecodeError:
        return []
    return [i.strip() for i in items if isinstance(i, str) and i.strip()] if isinstance(items, list) else []


def redact(text: str, spans: Sequence[Span]) -> str:
    """``text`` with every span replaced by ``[REDACTED]`` (what the model reads)."""
    out, pos = [], 0
    for s in sorted(spans, key=lambda s: s.start):
        if s.start < pos:
            continue
        out += [text[pos:s.start], _REDACTED]
        pos = s.end
    return "".join(out + [text[pos:]])


def _local_chat(max_tokens: int = 96) -> Chat:
    from ..models.llama_edge import LlamaEdgeModel

    model = LlamaEdgeModel(max_tokens=max_tokens, cache=False)

    def chat(messages: List[Dict[str, str]]) -> str:
        return model.chat(messages)["answer"]

    return chat


@register_recognizer("llm_opinion", {"MISC"}, {"llm_opinion": 0}, Reads.FOUND)
class LLMOpinionRecognizer:
    """Private items the recognizers missed, as the local edge LLM sees them (category MISC: the model's
    category guesses are not trusted)."""

    def __init__(self, chat: Optional[Chat] = None, max_chars: int = 2000) -> None:
        self._chat = chat
        self.max_chars = max_chars

    def analyze(self, text: str) -> List[Span]:
        return self.analyze_many([text])[0]

    def analyze_many(self, texts: Sequence[str], found: Optional[Sequence[Sequence[Span]]] = None) -> List[List[Span]]:
        from ..lexicon import english_zipf, stop_words

        if self._chat is None:
            self._chat = _local_chat()
        out: List[List[Span]] = []
        for k, text in enumerate(texts):
            spans = list(found[k]) if found is not None else []
            shown = redact(text, spans)[: self.max_chars]
            answer = self._chat([{"role": "system", "content": _SYSTEM},
                                 {"role": "user", "content": _ASK.format(text=shown)}])
            new: List[Span] = []
            for item in parse_items(answer):
                if _REDACTED in item or len(item) < 3 or item.lower() in stop_words() \
                        or (" " not in item and english_zipf(item.lower()) >= 4.0):
                    continue
                for m in re.finditer(re.escape(item), text):
                    if not any(s.start < m.end() and m.start() < s.end for s in spans):
                        new.append(Span(m.start(), m.end(), "MISC", 0.5, "llm_opinion"))
            out.append(new)
        return out
