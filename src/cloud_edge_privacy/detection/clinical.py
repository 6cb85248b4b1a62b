"""Clinical words and measurements, which identify nobody: drug names, laboratory analytes, tests, specialties and
units, and values written with a clinical unit or after an analyte ("39.2 °C", "5.9 mmol/L", "BP 90/60 mmHg",
"WBC 14.2", "metformin 1000 mg").

HIPAA's Safe Harbor list of identifiers names none of them, and a clinician's question needs every one: the models
read "creatinine" as a person, "lisinopril" as a place and "90/60" as a file number, and the cloud got "Pareto was
Joseph" for "Troponin was 45 ng/L".  Detection drops a kept span that holds nothing but these and everyday words,
and cuts them off the edges of the others (:func:`.trade_terms.trade_trim`).  A word of the person-name lists is never a
clinical word, so "Senna" or "Armin" stay names (the hand-written list holds none: a test checks it).

Drug names come from the ``drug-named-entity-recognition`` package's dictionary (generic and brand names; MIT
licence), read as data without importing the package, which loads caches from the home directory at import.
"""
from __future__ import annotations

import bz2
import importlib.util
import pickle  # nosec: the dictionary file of an installed, pinned package, as trusted as its code
import re
from functools import lru_cache
from pathlib import Path
from typing import FrozenSet, List, Tuple

from ..errors import ModelFileError
from ..lexicon import known_names
from ..vocabulary import literal_trie
from .. import wordlists

DRUG_PACKAGE = "drug_named_entity_recognition"
DRUG_FILE = "drug_ner_dictionary.pkl.bz2"

# Analytes, tests, scores, clinical abbreviations, insulins and specialties (lower case).  Short ones that are
# also everyday words or initials ("na", "k", "pt", "ca") are left out: they count only inside a measurement.
CLINICAL_TERMS: FrozenSet[str] = wordlists.words("clinical_terms")
# an obstetric history ("G2P1", "G3P2+1")
_OBSTETRIC = re.compile(r"g\d{1,2}p\d{1,2}(?:\+\d{1,2})?")
# Procedures and diagnoses named by their Greek, Latin and English endings ("hemicolectomy", "cholecystitis",
# "anaemia", "chickenpox")
_MEDICAL_ENDING = re.compile(r"[a-z]{2,}(?:(?:ectom|otom|ostom|plast|scop)(?:y|ies)|(?:itis|aemia|algia|opathy)s?|pox)")
# labels of a clinical record: the word itself is no identifier, the value after it is (never a measurement)
RECORD_LABELS: FrozenSet[str] = frozenset({"dob", "mrn"})

_NUMBER = r"\d+(?:[.,]\d+)?"
# a value or a range; never the start of a date ("14/02/1958")
_RANGE = rf"{_NUMBER}(?:\s?(?:-|–|to|/)\s?{_NUMBER})?(?![/.-]\d)"
_UNIT = (r"(?:[mµunp]?mol/l|mmol/mol|mg/dl|mg/l|g/dl|g/l|ng/ml|ng/l|ng/dl|pg/ml|[µu]g/l|mcg/l|[µu]g/ml|m?iu/l|"
         r"m?u/l|meq/l|mosm/kg|(?:x|×)\s?10\^?[0-9⁹¹²]+/l|/[µu]l|/mm3|cells/[µu]l|mmhg|cmh2o|bpm|beats/min|"
         r"breaths/min|l/min|ml/min|ml/h|ml/kg/h|mg/kg|m?cg/kg/min|[µu]g/kg/min|units?/kg|units?/h|mg|mcg|[µu]g|"
         r"kg|ml|mm|cm|iu|units?|tabs?|tablets?|puffs?|drops|°\s?[cf]|º\s?[cf]|"
         r"degrees?(?:\s(?:celsius|fahrenheit|centigrade|c|f)\b)?)")
# a value with a clinical unit; a body temperature without its degree sign ("39.2 C")
_WITH_UNIT = re.compile(rf"(?i)(?<![\w.]){_RANGE}\s?{_UNIT}(?![\w/])|(?<![\w.])(?:3[4-9]|4[0-3])[.,]\d\s?C\b")
# a value right after an analyte or vital sign ("WBC 14.2", "HbA1c 8.4%", "BP 90/60", "SpO2 of 94%"; the vital signs
# and short analytes that count only there: clinical_value_cues.txt)
# the analytes as a trie (vocabulary.literal_trie: the same words as their alternation longest first, lower case)
_AFTER_ANALYTE = re.compile(
    r"(?i)\b(?:" + literal_trie(CLINICAL_TERMS | wordlists.words("clinical_value_cues"))
    + rf")\b\s?(?:of|was|is|at|:|=)?\s?{_RANGE}\s?%?(?!\w)")
# ECG leads and segments ("V4-V6", "ST depression"), CT scans ("CT abdomen"; "CT" alone may be Connecticut)
_TESTS = re.compile(r"\bV[1-6](?:\s?[-–]\s?V[1-6])?\b|\bST[- ](?:segment|elevation|depression)s?\b|\bU&Es?\b|"
                    r"\bCT\s(?:scan|abdomen|head|chest|thorax|pelvis|brain|angiogram|angiography|KUB)\b")


@lru_cache(maxsize=1)
def drug_names() -> FrozenSet[str]:
    """Single-word drug names (generic and brand, lower case) of the dictionary, without person names."""
    spec = importlib.util.find_spec(DRUG_PACKAGE)
    path = Path(next(iter(spec.submodule_search_locations or []), "")) / DRUG_FILE if spec else None
    if path is None or not path.is_file():
        raise ModelFileError(f"the clinical vocabulary needs the {DRUG_PACKAGE!r} package's {DRUG_FILE}: "
                             f"pip install 'drug-named-entity-recognition==2.0.9'")
    with bz2.open(path, "rb") as f:
        data = pickle.load(f)  # nosec: see the import
    names = known_names()
    words = {w for w in data["drug_variant_to_canonical"] if re.fullmatch(r"[a-z][a-z-]{3,}", w)}
    return frozenset(w for w in words if w not in names)


def clinical_word(word: str) -> bool:
    """A drug (in no person-name list), analyte, test, score, specialty, ward abbreviation, record label or a
    procedure or diagnosis by its ending, in any case."""
    low = word.lower()
    return low in CLINICAL_TERMS or low in RECORD_LABELS or low in drug_names() or _OBSTETRIC.fullmatch(low) is not None \
        or (_MEDICAL_ENDING.fullmatch(low) is not None and low not in known_names())


def measurements(text: str) -> List[Tuple[int, int]]:
    """Offsets of the clinical values, ECG leads and segments and CT scans in ``text``."""
    return [m.span() for rx in (_WITH_UNIT, _AFTER_ANALYTE, _TESTS) for m in rx.finditer(text)]
