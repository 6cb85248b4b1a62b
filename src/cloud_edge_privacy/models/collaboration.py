"""PRISM stage 4, collaborative mode: the cloud sketches from the desensitized prompt, the edge refines.

The demonstrations below were written for this project. They show the cloud how to answer with a
short structured sketch that keeps placeholders as they are, so no private value is needed to write it.
"""
from __future__ import annotations

from typing import Dict, List

SKETCH_SYSTEM = ("You write short structured sketches, not final answers. Keep every placeholder such as "
                 "[PERSON_1] or [REDACTED] exactly as written. Use at most five bullet points.")

DEMONSTRATIONS: List[Dict[str, str]] = [
    {"user": "Task: Summarize the facts.\nText: [PERSON_1], born in [DATETIME_1], was dismissed by [ORG_1] "
             "and sued for unpaid wages; the proceedings lasted [DATETIME_2].",
     "assistant": "- Who: [PERSON_1], an employee\n- Event: dismissal by [ORG_1]\n- Claim: unpaid wages\n"
                  "- Procedure: lawsuit lasting [DATETIME_2]\n- Focus for the answer: length of proceedings"},
    {"user": "Task: What is the likely diagnosis?\nText: A [DEM_1] patient named [PERSON_1] reports fever, "
             "cough and chest pain for three days.",
     "assistant": "- Key findings: fever, cough, chest pain, 3 days\n- Likely: community-acquired pneumonia\n"
                  "- Alternatives: bronchitis, influenza\n- Next steps: chest X-ray, auscultation\n"
                  "- Address the patient as [PERSON_1]"},
    {"user": "Task: Help me dispute this charge.\nText: I am [PERSON_1]; my card [CODE_1] was charged "
             "[QUANTITY_1] that I did not authorize.",
     "assistant": "- Goal: dispute an unauthorized charge of [QUANTITY_1]\n- Steps: call the bank, freeze card "
                  "[CODE_1], file a written dispute\n- Include: date, merchant, amount\n"
                  "- Tone: formal, signed [PERSON_1]"},
]

REFINE_SYSTEM = ("You are a local assistant. Write the final answer to the user's task using the sketch as a "
                 "plan and the original text for the real details. Be concise.")
# PRISM's Uniform/Selective LDP baselines: the cloud answered a noised copy of the request (no sketch format);
# the edge repairs that draft with the original text.
DRAFT_SYSTEM = ("You are a local assistant. The draft answer below was written by a remote model from a noisy "
                "copy of the user's text, so its names, places and numbers may be wrong. Write the final answer "
                "to the user's task, using the original text for the real details. Be concise.")
REFINE_KINDS = ("sketch", "draft")


def sketch_messages(instruction: str, protected_text: str) -> List[Dict[str, str]]:
    msgs = [{"role": "system", "content": SKETCH_SYSTEM}]
    for d in DEMONSTRATIONS:
        msgs += [{"role": "user", "content": d["user"]}, {"role": "assistant", "content": d["assistant"]}]
    msgs.append({"role": "user", "content": f"Task: {instruction}\nText: {protected_text}"})
    return msgs


def refine_messages(instruction: str, original_text: str, sketch: str, kind: str = "sketch") -> List[Dict[str, str]]:
    """The edge's refinement prompt: ``kind`` "sketch" (PRISM's collaborative mode) or "draft" (the LDP
    baselines: the cloud's direct answer to the noised prompt)."""
    if kind not in REFINE_KINDS:
        raise ValueError(f"refinement kind {kind!r} is not one of {REFINE_KINDS}")
    system, label = (REFINE_SYSTEM, "Sketch from the cloud") if kind == "sketch" else (DRAFT_SYSTEM, "Draft answer")
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Task: {instruction}\n\nOriginal text:\n{original_text}\n\n"
                                        f"{label}:\n{sketch}"}]
