"""Answers depend only on prompt, model and seed, not on which request came before (no KV prefix reuse), in the
edge model and in the local llama.cpp cloud server.  (Fresh vs warm caches end to end: scripts/ianvs_parity.py
--cache-states fresh warm.)"""
import json
import urllib.request

import pytest

pytestmark = pytest.mark.llm

A = "Summarise in one sentence: The applicant, Mr Jan Kowalski, born in 1961, lives in Oslo and complained about " \
    "the length of the proceedings before the Court of Appeal."
B = "Summarise in one sentence: The applicant, Mr Jan Kowalski, born in 1961, lives in Bergen and was detained " \
    "for three weeks without a hearing."


def _messages(text):
    return [{"role": "system", "content": "You are a careful legal assistant."}, {"role": "user", "content": text}]


def test_edge_answer_does_not_depend_on_the_previous_call():
    from cloud_edge_privacy.models.llama_edge import LlamaEdgeModel

    live = LlamaEdgeModel(max_tokens=40, seed=42, cache=False)
    first = live.chat(_messages(A))["answer"]
    live.chat(_messages(B))                               # shares a long prefix with A
    again = live.chat(_messages(A))["answer"]
    assert first == again and first
    assert live._llm.n_tokens > 0                         # the model really ran (not a cache)


def test_local_server_answer_does_not_depend_on_the_previous_request():
    from cloud_edge_privacy.models.local_server import LocalServer

    srv = LocalServer("qwen2.5-coder-0.5b-instruct", n_ctx=2048).start()

    def ask(text):
        body = json.dumps({"model": srv.model, "messages": _messages(text), "max_tokens": 40, "temperature": 0,
                           "seed": 42}).encode()
        req = urllib.request.Request(srv.base_url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=300) as r:
            return json.load(r)["choices"][0]["message"]["content"]

    try:
        first = ask(A)
        ask(B)
        assert ask(A) == first and first
    finally:
        srv.stop()
