"""TRIR on hand-built background knowledge whose outcome is known, plus the cache and the real attacker."""
import json
import math

import pytest

from cloud_edge_privacy.metrics import trir
from conftest import SHARED_TAB

# Three identities whose background texts share no content words: any sensible linker separates them.
BACKGROUND = {
    "p-anna": " ".join(["anna holm fisherman tromso harbour nets trawler"] * 40),
    "p-bela": " ".join(["bela kovacs violinist szeged conservatory concerto"] * 40),
    "p-carl": " ".join(["carl weber baker leipzig bakery bread oven"] * 40),
}


@pytest.fixture(scope="module")
def attacker():
    return trir.train_attacker(BACKGROUND, key="hand")


def _gold(doc_id, text="original"):
    return {"doc_id": doc_id, "text": text, "annotations": {}}


def _sent(user_text, system="You are a helpful assistant.", status="ok"):
    res = {"status": status, "answer": "a" if status == "ok" else "",
           "sent_messages": [{"role": "system", "content": system}, {"role": "user", "content": user_text}]}
    return [True, res, None, res]


FAILED = [True, {"status": "privacy_failure", "answer": "", "sent_messages": None}, None,
          {"status": "privacy_failure", "sent_messages": None}]


def test_chunking_by_hand():
    words = " ".join(str(i) for i in range(10))
    assert trir.chunk_words(words, size=4, stride=3) == ["0 1 2 3", "3 4 5 6", "6 7 8 9"]
    # the last window is moved back so that it reaches the end
    assert trir.chunk_words(" ".join(str(i) for i in range(9)), size=4, stride=3)[-1] == "5 6 7 8"
    assert trir.chunk_words("a b", size=4, stride=3) == ["a b"] and trir.chunk_words("   ") == []


def test_hand_worked_trir(attacker):
    assert attacker.predict(["the violinist from szeged", "a trawler in tromso"]) == ["p-bela", "p-anna"]
    y_true = [_gold("p-anna"), _gold("p-carl"), _gold("p-bela"), _gold("outsider"), _gold("p-carl")]
    y_pred = [
        _sent("Summarize: the fisherman [PERSON] mends nets at the harbour"),  # linked to p-anna: hit
        _sent("Summarize: [PERSON] played a concerto at the conservatory"),   # linked to p-bela, truth p-carl: miss
        FAILED,                                                                # nothing sent: not attacked
        _sent("Summarize: a baker in leipzig"),                                # doc_id outside the background
        # the system message names the baker, but only user messages are attacked: linked to p-anna, a miss
        _sent("Summarize: the harbour nets", system="carl weber baker leipzig bakery bread oven"),
    ]
    assert trir.per_sample(y_true, y_pred, attacker) == [1, 0, None, None, 0]
    assert trir.trir(y_true, y_pred, attacker) == round(1 / 3, 6)
    # the unprotected baseline attacks each gold text (3 identities known; "outsider" is not)
    originals = [_gold("p-anna", "anna holm from tromso"), _gold("p-carl", "carl weber the baker"),
                 _gold("p-bela", "bela kovacs"), _gold("outsider", "x"), _gold("p-carl", "a concerto in szeged")]
    assert trir.per_sample(originals, y_pred, attacker, original=True) == [1, 1, 1, None, 0]
    assert trir.trir_original(originals, y_pred, attacker) == 0.75


def test_nothing_sent_is_nan(attacker):
    assert math.isnan(trir.trir([_gold("p-anna")], [FAILED], attacker))
    edge = {"status": "ok", "answer": "a", "sent_messages": None}
    assert math.isnan(trir.trir([_gold("p-anna")], [[False, edge, edge, None]], attacker))


def test_attacker_is_cached_on_disk_by_the_background_hash(tmp_path):
    bg = tmp_path / "bk.json"
    bg.write_text(json.dumps(BACKGROUND), encoding="utf-8")
    cache = tmp_path / "cache"
    a1 = trir.load_or_train_attacker(bg, cache)
    files = list(cache.glob("attacker-*.pkl"))
    assert len(files) == 1 and a1.key in files[0].name
    stamp = files[0].stat().st_mtime_ns
    a2 = trir.load_or_train_attacker(bg, cache)          # read back, not retrained
    assert files[0].stat().st_mtime_ns == stamp and a2.key == a1.key and a2.identities == a1.identities
    bg.write_text(json.dumps(dict(BACKGROUND, **{"p-dora": "dora " * 50})), encoding="utf-8")
    a3 = trir.load_or_train_attacker(bg, cache)          # another background: another key and file
    assert a3.key != a1.key and "p-dora" in a3.identities and len(list(cache.glob("attacker-*.pkl"))) == 2
    files[0].write_bytes(b"not a pickle")
    bg.write_text(json.dumps(BACKGROUND), encoding="utf-8")
    assert trir.load_or_train_attacker(bg, cache).key == a1.key   # a corrupt entry is retrained


def test_real_background_attacker_links_originals_more_than_masked_texts():
    """On TAB dev: the attacker trained on the 1,237 public background texts links more original
    documents than documents with every gold DIRECT/QUASI mention suppressed."""
    bg = SHARED_TAB / "background_knowledge.json"
    assert bg.is_file(), f"{bg} is part of the benchmark's data and must exist"
    from cloud_edge_privacy.datasets.tab import load_tab

    docs = load_tab(SHARED_TAB / "echr_dev.json")
    att = trir.load_or_train_attacker(bg)
    assert len(att.identities) == 1237
    y_true, y_orig, y_masked = [], [], []
    for d in docs:
        gold = {"doc_id": d.doc_id, "text": d.text, "annotations": {}}
        spans = sorted({(m.start_offset, m.end_offset) for ms in d.annotations.values() for m in ms
                        if m.identifier_type in ("DIRECT", "QUASI")})
        masked, last = [], 0
        for s, e in spans:
            if s >= last:
                masked.append(d.text[last:s] + "***")
                last = e
            else:
                last = max(last, e)
        y_true.append(gold)
        y_orig.append(_sent(d.text))
        y_masked.append(_sent("".join(masked) + d.text[last:]))
    orig, masked = trir.trir(y_true, y_orig, att), trir.trir(y_true, y_masked, att)
    assert orig >= 0.3 and masked < orig
