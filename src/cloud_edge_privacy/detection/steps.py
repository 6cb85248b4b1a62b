"""Post-detection steps as declared, named parts of a preset, and the trace of what each one changed.

After the recognizers, a detector runs a sequence of *steps* over the candidate spans of a text: the learned
decision, tidying, splits and trims, co-reference propagation, filters.  Each step is a :class:`Step` in one
table (``pipeline.STEPS``, keyed by name), a preset names the steps it runs, in order (``Preset.steps``), and
``build_detector(name, without_steps=(...))`` switches any of them off.  The overlapping spans left are always
merged at the end, whatever the steps (one span per region is the detector's contract).

A traced run (:meth:`~.pipeline.Detector.analyze_traced`) records for each step the spans it removed and the
spans it added (a changed span is one of each), so that a span's fate can be read off: *why* "Dear Mark" lost
"Dear", or why a model's clause was dropped.  The trace holds spans of the text being read (private surface
forms, read with :meth:`TraceEntry.describe`): it is for the edge operator's eyes and is never logged, audited or
sent by the gateway.  This module holds no step; it imports only :mod:`..spans`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from ..spans import Span


@dataclass(frozen=True)
class StepContext:
    """What a step may read besides the spans: the (normalized) text and the detector's derived declarations."""

    text: str
    priority: Mapping[str, float]
    propagated: FrozenSet[str]
    ordinary_zipf: Optional[float] = None
    decider: Optional[object] = None


@dataclass(frozen=True)
class Step:
    """One named post-detection step: ``run(ctx, spans) -> spans`` and a line saying what it does."""

    name: str
    run: Callable[[StepContext, List[Span]], List[Span]]
    what: str


@dataclass(frozen=True)
class TraceEntry:
    """What one step changed: the spans it ``removed`` and those it ``added`` (offsets of the text read)."""

    step: str
    removed: Tuple[Span, ...] = ()
    added: Tuple[Span, ...] = ()
    # per removed span, a span the step left in place over it (a merge keeps one of two), or None
    kept_over: Tuple[Optional[Span], ...] = ()

    def describe(self, text: str) -> List[str]:
        """One line per change, for a person reading the trace on the edge (it shows the private surfaces)."""
        lines = []
        for k, s in enumerate(self.removed):
            after = [a for a in self.added if a.overlaps(s)]
            kept = self.kept_over[k] if k < len(self.kept_over) else None
            if after:
                now = ", ".join(f"{text[a.start:a.end]!r} {a.category}" for a in after)
                lines.append(f"{self.step}: {text[s.start:s.end]!r} {s.category} ({s.source}) -> {now}")
            elif kept is not None:
                lines.append(f"{self.step}: {text[s.start:s.end]!r} {s.category} ({s.source}) merged into "
                             f"{text[kept.start:kept.end]!r} {kept.category} ({kept.source})")
            else:
                lines.append(f"{self.step}: dropped {text[s.start:s.end]!r} {s.category} ({s.source})")
        for a in self.added:
            if not any(a.overlaps(s) for s in self.removed):
                lines.append(f"{self.step}: added {text[a.start:a.end]!r} {a.category} ({a.source})")
        return lines


@dataclass
class Trace:
    """The steps' changes to one text's spans, in the order the steps ran (only steps that changed something)."""

    text: str
    entries: List[TraceEntry] = field(default_factory=list)

    def lines(self) -> List[str]:
        return [line for e in self.entries for line in e.describe(self.text)]


def _key(span: Span) -> Tuple[int, int, str, str]:
    return span.start, span.end, span.category, span.source


def run_steps(steps: Sequence[Step], ctx: StepContext, spans: List[Span],
              trace: Optional[Trace] = None) -> List[Span]:
    """The spans after every step in turn; with ``trace``, what each step removed and added is appended to it."""
    for step in steps:
        after = step.run(ctx, spans)
        if trace is not None:
            before_keys = {_key(s) for s in spans}
            after_keys = {_key(s) for s in after}
            removed = tuple(sorted({_key(s): s for s in spans if _key(s) not in after_keys}.values()))
            added = tuple(sorted({_key(s): s for s in after if _key(s) not in before_keys}.values()))
            if removed or added:
                kept = tuple(next((a for a in after if a.overlaps(r) and _key(a) in before_keys), None)
                             for r in removed)
                trace.entries.append(TraceEntry(step.name, removed, added, kept))
        spans = after
    return spans


def select_steps(table: Mapping[str, Step], names: Sequence[str], without: Sequence[str] = (),
                 where: str = "detector") -> Tuple[Step, ...]:
    """The steps named in ``names`` (in order) except those in ``without``; an unknown name in either is a
    ``ValueError`` naming it, ``where`` and the known steps."""
    for n in list(names) + list(without):
        if n not in table:
            raise ValueError(f"{where}: unknown post-detection step {n!r}; known: {sorted(table)}")
    missing = [n for n in without if n not in names]
    if missing:
        raise ValueError(f"{where}: without_steps {missing} are not steps it runs ({list(names)})")
    return tuple(table[n] for n in names if n not in set(without))
