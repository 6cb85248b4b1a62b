"""Public parties of court judgments: institutions, headings, the respondent State and its Government.

General NER tags them and TAB's annotators leave them unmasked (NO_MASK): they do not identify the
person a judgment is about.  Used by the spaCy recognizer (per span) and by the pipeline's optional
context filter (on the merged spans, where the surrounding text is known).
"""
from __future__ import annotations

import re
from typing import List, Sequence

from .. import wordlists
from ..spans import Span

_INSTITUTION = re.compile(
    r"^(?:the\s+)?(?:(?:[A-Z][a-z]+\s+(?:(?:and|for)\s+)?)*(?:"
    + wordlists.alternation("institution_words_public_parties") + r")"
    r"(?:\s+(?:of|for)\s+(?:the\s+)?[A-Z][\w ]+)?(?:\s+\d{4})?|European Commission (?:of|on) Human Rights|inter alia)"
    r"(?:['\u2019]s)?$")
# Intergovernmental bodies: public, like a State's courts and ministries, and naming one identifies nobody.
_INTERGOVERNMENTAL = re.compile(
    r"^(?:the\s+)?(?:United\s+Nations(?:\s+(?:Security\s+Council|General\s+Assembly|Human\s+Rights\s+Council|"
    r"Secretariat|Development\s+Programme|Environment\s+Programme|Children['\u2019]s\s+Fund|"
    r"High\s+Commissioner\s+for\s+(?:Refugees|Human\s+Rights)|Office\s+on\s+Drugs\s+and\s+Crime))?|"
    r"European\s+Union|World\s+Health\s+Organi[sz]ation|World\s+Bank|International\s+Monetary\s+Fund|"
    r"World\s+Trade\s+Organi[sz]ation|International\s+Labou?r\s+Organi[sz]ation|UNESCO|UNICEF|UNHCR|UNDP|"
    r"UNODC|NATO|OECD|WHO|UN|EU|IMF|WTO|ILO|(?:International\s+Committee\s+of\s+the\s+)?Red\s+Cross)(?:['\u2019]s)?$")
# National public services and agencies, one per country: "the NHS waiting list" or "a payment to HMRC" names no one
# ("NHS Lothian", a regional board, names a region and is not matched).
_NATIONAL_BODY = re.compile(r"^(?:the\s+)?(?:NHS|National\s+Health\s+Service|HMRC|DVLA|DWP|IRS|FDA|CDC|NIH|FBI)"
                            r"(?:['\u2019]s)?$")
_FORMATION = re.compile(r"^(?:the\s+)?(?:(?:First|Second|Third|Fourth|Fifth|Sixth)\s+Section|Grand\s+Chamber)"
                        r"(?:\s+of\s+the\s+Court)?$")
_LEGAL_FORM = re.compile(r"\b(?:" + wordlists.alternation("legal_forms_in_capitals") + r")\b\.?")
# How a State's name starts ("Republic of ...", "United Kingdom"): a LOC span that is the State itself.
_STATE_PREFIXES = wordlists.entries("state_name_prefixes")
# "<State> Government" / "<State> authorities" / "Government of <State>": the respondent party.
_GOVERNMENT = re.compile(r"^(?:the\s+)?(?:[A-Z][\w-]+\s+)*(?:Government|authorities)$|^(?:the\s+)?Government of\s",
                         re.IGNORECASE)
# The respondent State right after "application (no. ...) against (the)" in a judgment's first sentence.
_RESPONDENT_CONTEXT = re.compile(r"application[^)]{0,40}\)\s+against\s+(?:the\s+)?$")


def named_public_body(surface: str) -> bool:
    """An intergovernmental body or a national public service named as such ("WHO", "the NHS", "HMRC")."""
    text = " ".join(surface.split())
    return bool(_INTERGOVERNMENTAL.match(text) or _NATIONAL_BODY.match(text))


def is_public_institution(surface: str, category: str) -> bool:
    """Generic institutions, headings and state names that general NER over-tags in judgments."""
    text = " ".join(surface.split())
    # Headings such as "THE FACTS", "PROCEDURE" are tagged ORG/LOC/MISC; an ALL-CAPS person ("JOHN SMITH"),
    # code, date or amount is never a heading, and neither is a company with its legal form ("ACME LTD").
    if text.isupper() and len(text) > 3 and category in ("ORG", "LOC", "MISC") and not _LEGAL_FORM.search(text):
        return True
    if category == "ORG" and (_INSTITUTION.match(text) or named_public_body(text)):
        return True
    if category == "LOC" and _FORMATION.match(text):  # "Fourth Section", "Grand Chamber" tagged as facilities
        return True
    if category == "LOC":
        from ..desensitization.gazetteer import country_of

        return country_of(text) == text or text.lower().startswith(_STATE_PREFIXES)
    return False


def is_public_party(text: str, span: Span) -> bool:
    """The respondent State named as party, or a State's Government, judged with the text around it."""
    if span.category not in ("ORG", "LOC"):
        return False
    if _GOVERNMENT.search(" ".join(text[span.start:span.end].split())):
        return True
    return _RESPONDENT_CONTEXT.search(text[max(0, span.start - 80):span.start]) is not None


def drop_public_parties(text: str, spans: Sequence[Span]) -> List[Span]:
    """The spans that do not name a public party (see :func:`is_public_party`)."""
    return [s for s in spans if not is_public_party(text, s)]
