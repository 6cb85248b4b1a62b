"""PSR (privacy success rate) of a detector on TAB-format gold: the one definition every federated path uses.

PSR = the share of DIRECT+QUASI gold entities all of whose mentions needing masking are masked, counted per
annotator (micro), with TAB's official mention rule (:mod:`.tab_official`). It is always reported beside TAB
token precision: a detector that masks every token has PSR 1.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Sequence

from .tab_official import combine, score_document


def psr_scores(golds: Sequence[Mapping[str, Any]], masks: Sequence[Sequence[Sequence[Any]]],
               digits: int = 6) -> Dict[str, Any]:
    """TAB scores (ER_di, ER_qi, token recall/precision, ...) of ``masks[i]`` on ``golds[i]``, plus ``PSR`` and
    ``n_entities``. A gold is ``{"text", "annotations": {annotator: [mention dict, ...]}}``."""
    if len(golds) != len(masks):
        raise ValueError(f"{len(golds)} gold documents but {len(masks)} mask lists")
    counts = [score_document(g, m) for g, m in zip(golds, masks)]
    res: Dict[str, Any] = combine(counts)
    n = sum(c.get("entities_di", 0) + c.get("entities_qi", 0) for c in counts)
    k = sum(c.get("entities_di_masked", 0) + c.get("entities_qi_masked", 0) for c in counts)
    res["PSR"] = round(k / n, digits) if n else math.nan
    res["n_entities"] = n
    return res
