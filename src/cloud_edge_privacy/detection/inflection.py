"""Russian case forms of place names: gazetteers list the nominative ("Грузия", "Вашингтон", "Москва"), running
text declines it ("в Грузии", "с Вашингтоном", "в Москве").

Two directions of the same rule of Russian noun declension (the endings of the six cases, singular):
:func:`russian_case_forms` turns a listed name into a regex of its forms, :func:`russian_nominatives` turns a word
of the text into the nominatives it may be a form of.  Only single words; names of several words are read as
written.  Plural and rarer forms (locative -у, vocative) are left out.
"""
from __future__ import annotations

import re
from typing import Tuple

_CONSONANTS = "бвгджзклмнпрстфхцчшщ"
# the case endings after removing the nominative's: -а nouns (Москва), -я/-ия nouns (Грузия), consonant nouns (Иран)
_A_ENDINGS = ("а", "ы", "и", "у", "ой", "е")
_YA_ENDINGS = ("я", "и", "ю", "ей", "е")
_CONSONANT_ENDINGS = ("", "а", "у", "ом", "е")


def russian_case_forms(name: str) -> str:
    """A regex of a one-word Russian name in its singular case forms: Грузия -> ``Грузи(?:я|и|ю|ей|е)``, Иран ->
    ``Иран(?:|а|у|ом|е)``, Куба -> ``Куб(?:а|ы|и|у|ой|е)``; a name of several words, or of another ending, as
    written."""
    if " " in name or "-" in name or len(name) < 3:
        return re.escape(name)
    if name.endswith("я"):
        return re.escape(name[:-1]) + "(?:" + "|".join(_YA_ENDINGS) + ")"
    if name.endswith("а"):
        return re.escape(name[:-1]) + "(?:" + "|".join(_A_ENDINGS) + ")"
    if name[-1] in _CONSONANTS:
        return re.escape(name) + "(?:" + "|".join(_CONSONANT_ENDINGS) + ")"
    return re.escape(name)


def russian_nominatives(word: str) -> Tuple[str, ...]:
    """The nominatives ``word`` may be a singular case form of, by the same endings: "Москве" -> ("Москва",
    "Москвя", "Москв"...), "Вашингтоном" -> ("Вашингтон",); the caller looks them up in its list."""
    out = []
    for ending in sorted(set(_A_ENDINGS + _YA_ENDINGS + _CONSONANT_ENDINGS) - {""}, key=len, reverse=True):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            stem = word[:-len(ending)]
            if ending in _A_ENDINGS:
                out.append(stem + "а")
            if ending in _YA_ENDINGS:
                out.append(stem + "я")
            if ending in _CONSONANT_ENDINGS and stem[-1] in _CONSONANTS:
                out.append(stem)
    return tuple(dict.fromkeys(n for n in out if n != word))
