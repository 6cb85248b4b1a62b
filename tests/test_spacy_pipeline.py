"""The spaCy models forget the words of the texts they read (memory zones), and stay correct across threads."""
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from cloud_edge_privacy.detection.learned import MODEL_DIR as LEARNED_DIR
from cloud_edge_privacy.detection.learned.ner import LearnedNerRecognizer, load_learned
from cloud_edge_privacy.detection.spacy_recognizer import SpacyRecognizer, load_spacy
from cloud_edge_privacy.detection.tab_ner_recognizer import TabNerRecognizer, load_tab_ner, transfer_model_dir

TEXTS = ["Dr Zorblaxquent Vennimore of Qartheloc Biologics emailed zv@qartheloc.example on 3 March 2024.",
         "Please ask Ms Ilvaresh Tonduvik (Brannoch & Sons, Kelvedon) to call me about invoice QX-88213.",
         "My manager Priya said the Wexlantic account closes in June."]
NOVEL = ("Zorblaxquent", "Vennimore", "Qartheloc", "Ilvaresh", "Tonduvik", "Brannoch", "QX-88213", "Wexlantic")


@pytest.mark.parametrize("recognizer, pipeline", [
    (SpacyRecognizer(), lambda: load_spacy()),
    (LearnedNerRecognizer(), lambda: load_learned(str(LEARNED_DIR))),
    (TabNerRecognizer(model="sm"), lambda: load_tab_ner(str(transfer_model_dir()))),
], ids=["spacy", "learned", "tab_ner"])
def test_a_model_keeps_no_word_of_what_it_read(recognizer, pipeline):
    """spaCy used to keep every new word for the life of the process (about 25 KB per prompt over the default
    preset's models): a gateway serving all day grew without bound and held past prompts' names in memory."""
    nlp = pipeline().nlp
    before = len(nlp.vocab.strings)
    found = recognizer.analyze_many(TEXTS)
    assert any(found), "the model found nothing: the test would not show what it keeps"
    assert not [w for w in NOVEL if w in nlp.vocab.strings]
    assert len(nlp.vocab.strings) == before
    assert recognizer.analyze_many(TEXTS) == found  # the same spans again


def test_threads_share_a_pipeline_one_call_at_a_time():
    """A memory zone swaps state on the pipeline: calls from request threads must not overlap on it."""
    rec = LearnedNerRecognizer()
    expected = [rec.analyze(t) for t in TEXTS]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda i: rec.analyze(TEXTS[i % 3]), range(60)))
    assert got == [expected[i % 3] for i in range(60)]


def test_frequent_words_are_loaded_once_outside_any_zone():
    nlp = load_spacy().nlp
    assert "because" in nlp.vocab.strings and "Because" in nlp.vocab.strings


def _chunks_tokenized(nlp, text: str) -> int:
    """How many chunks of ``text`` the tokenizer split itself (not found in its cache), inside a memory zone as
    the recognizers read (spaCy's compiled tokenizer reports its calls to the profiler)."""
    import cProfile
    import io
    import pstats

    profile = cProfile.Profile()
    with nlp.memory_zone():
        profile.enable()
        nlp.make_doc(text)
        profile.disable()
    out = io.StringIO()
    pstats.Stats(profile, stream=out).print_stats()
    return sum(int(line.split()[0].split("/")[0]) for line in out.getvalue().splitlines() if "(_tokenize)" in line)


@pytest.mark.parametrize("pipeline", [lambda: load_spacy(), lambda: load_learned(str(LEARNED_DIR))],
                         ids=["spacy", "learned"])
def test_frequent_words_are_in_the_tokenizers_cache(pipeline):
    """Each frequent form is cached on its own: spaCy caches no chunk of a text after one with a special case
    ("I", "don't"), so the forms joined in one text had left almost all of them out of the cache."""
    nlp = pipeline().nlp
    assert _chunks_tokenized(nlp, " ".join(NOVEL)) == len(NOVEL)  # the count sees a chunk that is not cached
    text = "I don't know because Because people would Would think about the Government and their Children"
    assert _chunks_tokenized(nlp, text) == 0  # "don't" is a special case, found in its own table


def test_a_child_forked_during_a_read_can_read():
    """A server forked while a request thread reads (the lock held) must not inherit a lock nobody will release."""
    rec = LearnedNerRecognizer()
    expected = rec.analyze(TEXTS[0])
    pipeline = load_learned(str(LEARNED_DIR))
    with pipeline._lock:  # as if a request thread were reading
        pid = os.fork()
        if pid == 0:  # the child: read, then leave without running the parent's clean-up
            ok = rec.analyze(TEXTS[0]) == expected
            os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while (waited := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if waited[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child waited for a lock its parent's thread held")
    assert os.WIFEXITED(waited[1]) and os.WEXITSTATUS(waited[1]) == 0
