"""Build the small fictional TAB-format sample shipped with the package.

All people, numbers and events below are invented for this project.  Each annotation lists a
surface form; every occurrence of it in the text becomes a mention of the same entity, so the
offsets are computed, never typed by hand.  Run: python scripts/make_sample_tab.py
"""
import json
from pathlib import Path

CASES = [
    {
        "doc_id": "sample-001",
        "applicant": "Maria Kowalczyk",
        "text": (
            "PROCEDURE\n\nThe case originated in an application (no. 41872/03) against the Republic of Poland "
            "lodged with the Court by a Polish national, Ms Maria Kowalczyk (\"the applicant\"), on 14 March 2003.\n\n"
            "THE FACTS\n\nThe applicant was born in 1958 and lives in Gdynia. On 2 February 2001 Ms Kowalczyk was "
            "dismissed from her post as an accountant at Baltic Fisheries Ltd. She brought an action before the "
            "Gdańsk Regional Court, claiming 48,000 Polish zlotys in unpaid wages. Her telephone number, "
            "+48 58 123 45 67, and her e-mail address, m.kowalczyk@example.org, were listed in the claim. "
            "The proceedings lasted seven years and four months."
        ),
        "entities": [
            ("41872/03", "CODE", "DIRECT"),
            ("Maria Kowalczyk", "PERSON", "DIRECT"),
            ("Kowalczyk", "PERSON", "DIRECT"),
            ("Polish", "DEM", "QUASI"),
            ("14 March 2003", "DATETIME", "QUASI"),
            ("1958", "DATETIME", "QUASI"),
            ("Gdynia", "LOC", "QUASI"),
            ("2 February 2001", "DATETIME", "QUASI"),
            ("accountant", "MISC", "QUASI"),
            ("Baltic Fisheries Ltd", "ORG", "QUASI"),
            ("Gdańsk Regional Court", "ORG", "NO_MASK"),
            ("48,000 Polish zlotys", "QUANTITY", "QUASI"),
            ("+48 58 123 45 67", "CODE", "DIRECT"),
            ("m.kowalczyk@example.org", "CODE", "DIRECT"),
            ("seven years and four months", "DATETIME", "QUASI"),
        ],
        "same_entity": {"Kowalczyk": "Maria Kowalczyk"},
    },
    {
        "doc_id": "sample-002",
        "applicant": "Henrik Solberg",
        "text": (
            "PROCEDURE\n\nThe case originated in an application (no. 20517/11) against the Kingdom of Norway "
            "lodged by a Norwegian national, Mr Henrik Solberg, on 9 April 2011. He was represented by "
            "Mr T. Lund, a lawyer practising in Bergen.\n\nTHE FACTS\n\nMr Solberg, aged 46 at the time, was "
            "arrested on 17 June 2010 in Tromsø on suspicion of fraud involving 2.3 million kroner. He was held "
            "in pre-trial detention for 211 days. On 3 January 2011 the Hålogaland High Court acquitted him."
        ),
        "entities": [
            ("20517/11", "CODE", "DIRECT"),
            ("Norwegian", "DEM", "QUASI"),
            ("Henrik Solberg", "PERSON", "DIRECT"),
            ("Solberg", "PERSON", "DIRECT"),
            ("9 April 2011", "DATETIME", "QUASI"),
            ("T. Lund", "PERSON", "DIRECT"),
            ("Bergen", "LOC", "QUASI"),
            ("aged 46", "DEM", "QUASI"),
            ("17 June 2010", "DATETIME", "QUASI"),
            ("Tromsø", "LOC", "QUASI"),
            ("2.3 million kroner", "QUANTITY", "QUASI"),
            ("211 days", "DATETIME", "QUASI"),
            ("3 January 2011", "DATETIME", "QUASI"),
            ("Hålogaland High Court", "ORG", "NO_MASK"),
        ],
        "same_entity": {"Solberg": "Henrik Solberg"},
    },
    {
        "doc_id": "sample-003",
        "applicant": "Ana Petrescu",
        "text": (
            "PROCEDURE\n\nThe case originated in an application (no. 33904/08) against Romania lodged by "
            "Ms Ana Petrescu, a Romanian national, on 28 July 2008.\n\nTHE FACTS\n\nThe applicant, a nurse born "
            "in 1971, lived in Cluj-Napoca with her two children. In May 2006 the Cluj County Child Protection "
            "Authority placed the children in foster care. Ms Petrescu's personal identification number "
            "2710512120034 was disclosed in a local newspaper, Gazeta de Cluj, on 11 June 2006."
        ),
        "entities": [
            ("33904/08", "CODE", "DIRECT"),
            ("Ana Petrescu", "PERSON", "DIRECT"),
            ("Petrescu", "PERSON", "DIRECT"),
            ("Romanian", "DEM", "QUASI"),
            ("28 July 2008", "DATETIME", "QUASI"),
            ("nurse", "MISC", "QUASI"),
            ("1971", "DATETIME", "QUASI"),
            ("Cluj-Napoca", "LOC", "QUASI"),
            ("two children", "DEM", "QUASI"),
            ("May 2006", "DATETIME", "QUASI"),
            ("Cluj County Child Protection Authority", "ORG", "QUASI"),
            ("2710512120034", "CODE", "DIRECT"),
            ("Gazeta de Cluj", "ORG", "QUASI"),
            ("11 June 2006", "DATETIME", "QUASI"),
        ],
        "same_entity": {"Petrescu": "Ana Petrescu"},
    },
]


def build_case(case: dict) -> dict:
    text, doc_id = case["text"], case["doc_id"]
    taken = [False] * len(text)
    mentions, entity_ids = [], {}
    for surface, etype, ident in sorted(case["entities"], key=lambda e: -len(e[0])):
        key = case["same_entity"].get(surface, surface)
        eid = entity_ids.setdefault(key, f"{doc_id}_a1_e{len(entity_ids) + 1}")
        start = text.find(surface)
        if start < 0:
            raise SystemExit(f"{doc_id}: {surface!r} not in text")
        while start >= 0:
            end = start + len(surface)
            if not any(taken[start:end]):  # longer surface forms are placed first and win
                for k in range(start, end):
                    taken[k] = True
                mentions.append({
                    "entity_type": etype, "entity_mention_id": "", "start_offset": start, "end_offset": end,
                    "span_text": surface, "edit_type": "check", "identifier_type": ident, "entity_id": eid,
                    "confidential_status": "NOT_CONFIDENTIAL",
                })
            start = text.find(surface, end)
    mentions.sort(key=lambda m: m["start_offset"])
    for i, m in enumerate(mentions, 1):
        m["entity_mention_id"] = f"{doc_id}_a1_em{i}"
    return {
        "annotations": {"annotator1": {"entity_mentions": mentions}},
        "doc_id": doc_id, "text": text,
        "task": f"Task: Annotate the document to anonymise the following person: {case['applicant']}",
        "dataset_type": "sample", "meta": {"applicant": case["applicant"], "fictional": True},
        "quality_checked": False,
    }


if __name__ == "__main__":
    out = Path(__file__).resolve().parents[1] / "src" / "cloud_edge_privacy" / "sample_data" / "echr_sample.json"
    out.write_text(json.dumps([build_case(c) for c in CASES], ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
