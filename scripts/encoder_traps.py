"""Generated training texts for the encoder NER (``scripts/train_encoder_ner.py``) that carry the traps of
issue 28: words that look like names to a rule or a small model but are not private in their context
(``var`` in C# code, ``score`` in "APACHE II score", job titles such as "Managers", a car model "Uni-v",
"market"/"Revenue" in a report, a tool named ``lookup``, table headers), mixed with real private items
(names, employers, schools, places, codes) so that the model learns the context, not a word list.

Written for this project (no text from elsewhere).  Faker fills the private slots; one seed gives one set.
Slots: ``{PERSON}``, ``{FIRST}``, ``{ORG}``, ``{SCHOOL}``, ``{LOC}``, ``{CODE}``, ``{DATE}``, ``{AGE}``;
everything else in a template is not private.
"""
from __future__ import annotations

import random
import re
from typing import List, Tuple

Record = Tuple[str, List[Tuple[int, int, str]]]

_SLOT = re.compile(r"\{(PERSON|FIRST|ORG|SCHOOL|LOC|CODE|DATE|AGE)\}")
_TYPE = {"PERSON": "PERSON", "FIRST": "PERSON", "ORG": "ORG", "SCHOOL": "ORG", "LOC": "LOC", "CODE": "CODE",
         "DATE": "DATETIME", "AGE": "DEM"}

TEMPLATES: Tuple[str, ...] = (
    # code: keywords, identifiers and tool names are not private; a string literal with a name is
    "Why does this C# code throw?\n```csharp\nvar score = lookup(peer);\nvar managers = repo.GetManagers();\n"
    "foreach (var m in managers) { Console.WriteLine(m.Name); }\n```\nThe user is {PERSON}.",
    "Fix my JavaScript:\nvar total = 0;\nfor (var i = 0; i < items.length; i++) { total += items[i].Revenue; }\n"
    "console.log('market', total);",
    "The agent has tools `lookup`, `search` and `summarize`. Call `lookup` with the query \"{ORG} annual report\" "
    "and return the score.",
    "def lookup(peer, score):\n    var = peer.get('Managers')\n    return var or score\n\n# written by {PERSON} "
    "<{CODE}>",
    "Tool call: lookup(name=\"{PERSON}\", city=\"{LOC}\"). The tool `lookup` returns JSON with fields score, "
    "market and peer.",
    "SELECT Managers, Revenue, Market FROM sales WHERE region = 'North' AND peer_group = 3;",
    "In Python, what is the difference between `var` in JavaScript and a variable annotation? My teacher "
    "{PERSON} at {SCHOOL} asked us.",
    "Refactor: public class Managers { public int Score { get; set; } public string Peer { get; set; } }",
    # tables and reports
    "| Region | Revenue | Market share | Managers |\n|---|---|---|---|\n| North | 4.2M | 12% | 14 |\n"
    "| South | 3.1M | 9% | 11 |\nSummarize this table for {PERSON}.",
    "Quarterly report: Revenue grew 8% while the market shrank. Managers expect the peer group to recover. "
    "Prepared by {PERSON}, {ORG}.",
    "Write an executive summary: market size, Revenue by segment, Score of each peer, outlook. Our company, "
    "{ORG}, is based in {LOC}.",
    "Name,Title,Score\nAlpha,Managers,7\nBeta,Analyst,9\nSort by Score and explain the market trend.",
    "Revenue Market Peer Score Managers Growth\n120 4 2 88 5 3%\nWhat does this tell us?",
    "Analyze the market for electric scooters in {LOC}: Revenue, key players, peer comparison and a score for "
    "each risk.",
    # medical scores and terms
    "The patient {PERSON}, {AGE} years old, was admitted on {DATE} with an APACHE II score of 23 and a SOFA "
    "score of 9. Glasgow Coma Scale 12.",
    "Explain the APACHE II score and the Charlson comorbidity index in simple words.",
    "Calculate the Wells score and the CHA2DS2-VASc score for a {AGE}-year-old man with atrial fibrillation.",
    "My mother was treated at {ORG} in {LOC}; her MELD score is 18 and her Child-Pugh score is B. What does it "
    "mean?",
    "Patient ID {CODE}. APGAR score 8 at one minute. Attending: Dr. {PERSON}.",
    # job titles and roles
    "Managers and Senior Managers must submit the peer review by Friday. Contact {PERSON} in HR.",
    "Write a job ad for Store Managers, Team Leads and a Director of Sales at {ORG}.",
    "As a peer reviewer I need to score the paper. The institute educational programme is described in "
    "section 2.",
    "I am {PERSON}, a project manager at {ORG} in {LOC}. Improve my LinkedIn headline.",
    "Draft a message to all Managers: the market update meeting moves to Tuesday. Sign it {FIRST}.",
    # products and brands that identify nobody
    "Compare the Changan Uni-v, the Uni-K and the Uni-T on price, range and safety score.",
    "Which is better for a student, the iPhone 15 or the Galaxy S24? I study at {SCHOOL}.",
    "Write a review of the Uni-v 2.0T: handling, market position, peer cars and its score.",
    "My Tesla Model 3 needs new tyres. The dealer {ORG} in {LOC} quoted too much.",
    # CV with places and employers that identify the writer
    "Rewrite my CV. {PERSON}, {LOC}. Experience: Process Engineer at {ORG} ({DATE}). Education: B.Tech, "
    "{SCHOOL}. Skills: Python, SQL, market analysis.",
    "Cover letter: I worked at {ORG} for five years and graduated from {SCHOOL}. I live in {LOC} and can start "
    "on {DATE}.",
    "Hello, my name is {FIRST} and I'm from {LOC}. I want to apply to {SCHOOL} for the MBA.",
    "reply to my boss {FIRST}: the revenue numbers for {ORG} are ready, the market score table is attached.",
    "write an email to {PERSON} at {ORG} asking about the managers' peer review score.",
    "Translate: \"Dear {PERSON}, your account {CODE} at {ORG} was updated on {DATE}.\"",
)


def _value(fake: object, rng: random.Random, slot: str) -> str:
    f = fake
    if slot == "PERSON":
        return f.name()  # type: ignore[attr-defined]
    if slot == "FIRST":
        return f.first_name()  # type: ignore[attr-defined]
    if slot == "ORG":
        return f.company()  # type: ignore[attr-defined]
    if slot == "SCHOOL":
        return rng.choice(("University of {}", "{} Institute of Technology", "{} State University",
                           "{} College")).format(f.city())  # type: ignore[attr-defined]
    if slot == "LOC":
        return rng.choice((f.city(), f"{f.city()}, {f.country()}", f.state() if hasattr(f, "state")  # type: ignore[attr-defined]
                           else f.city()))  # type: ignore[attr-defined]
    if slot == "CODE":
        return rng.choice((f.email(), f.phone_number(), f"{rng.randint(10**6, 10**8)}",  # type: ignore[attr-defined]
                           f"{rng.choice('ABCDEFGH')}{rng.randint(10**5, 10**6)}"))
    if slot == "DATE":
        return f.date(pattern=rng.choice(("%d %B %Y", "%B %Y", "%Y", "%m/%d/%Y")))  # type: ignore[attr-defined]
    return str(rng.randint(19, 88))


def trap_records(n: int, seed: int) -> List[Record]:
    """``n`` texts (templates in turn, slots from Faker with a seeded locale) with their private spans; every
    other one in lower case, as people type."""
    from faker import Faker

    rng = random.Random(seed)
    fakers = {loc: Faker(loc) for loc in ("en_US", "en_GB", "en_IN", "de_DE", "fr_FR", "es_ES")}
    out: List[Record] = []
    for k in range(n):
        template = TEMPLATES[k % len(TEMPLATES)]
        loc = rng.choice(sorted(fakers))
        fake = fakers[loc]
        fake.seed_instance(rng.randrange(2**31))
        parts, ents, pos, length = [], [], 0, 0
        for m in _SLOT.finditer(template):
            parts.append(template[pos:m.start()])
            length += m.start() - pos
            value = _value(fake, rng, m.group(1))
            ents.append((length, length + len(value), _TYPE[m.group(1)]))
            parts.append(value)
            length += len(value)
            pos = m.end()
        parts.append(template[pos:])
        text = "".join(parts)
        if k % 2 == 1 and len(text.lower()) == len(text):
            text = text.lower()
        out.append((text, ents))
    return out
