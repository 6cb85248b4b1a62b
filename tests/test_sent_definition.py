"""Issue 21 item 2: one definition of "what was sent".  The leakage metrics computed on the results equal
the same scan of the audit log (written before each HTTP attempt), sample by sample, against the logging fake
cloud on 127.0.0.1; and the proxy writes the same audit format as the benchmark's cloud client."""
import json

import pytest

from cloud_edge_privacy.audit import outgoing_texts, sent_text
from cloud_edge_privacy.context import CONTEXTS
from cloud_edge_privacy.metrics.privacy import leak_audit_lines, leak_direct, leaked_mentions
from cloud_edge_privacy.metrics.samples import unpack


def _run(method, docs):
    from cloud_edge_privacy.module_configs import CloudModelConfig
    from cloud_edge_privacy.pipeline import EdgePipeline
    from cloud_edge_privacy.tab_data import to_ianvs_record

    pipe = EdgePipeline(CONTEXTS.get(), CloudModelConfig(privacy_method=method, detector="fast", cache=False))
    return [pipe.cloud(to_ianvs_record(d)["question"]) for d in docs]


@pytest.mark.parametrize("method", ["none", "placeholder"])
def test_leakage_on_results_equals_the_audit_logs_record_of_what_was_sent(fake_cloud, sample_docs, method):
    from cloud_edge_privacy.anonymize import gold_dict

    docs = sample_docs[:3]
    results = _run(method, docs)
    assert all(r["status"] == "ok" for r in results)
    golds = {d.doc_id: gold_dict(d) for d in docs}
    lines = [json.loads(l) for l in CONTEXTS.get().audit.path.read_text(encoding="utf-8").splitlines()]
    attempts = [l for l in lines if l["event"] == "http_attempt"]
    assert len(attempts) == len(fake_cloud.requests) == len(docs)
    for line, res, req in zip(attempts, results, fake_cloud.requests):
        # the audit's messages are the result's sent messages are the bytes the cloud received
        assert line["messages"] == res["sent_messages"] == req["body"]["messages"]
        assert sent_text(line["messages"]) == "\n".join(outgoing_texts(req["body"]["messages"]))
    views = unpack([golds[d.doc_id] for d in docs], results)
    from_results = leak_direct([golds[d.doc_id] for d in docs], results)
    from_audit = len(leak_audit_lines(attempts, golds))
    assert from_results == from_audit == sum(len(leaked_mentions(v, ("DIRECT",))) for v in views)
    if method == "none":
        assert from_audit > 0  # the baseline sends the raw text: the two scans must find the same leaks
    else:
        assert from_audit < sum(len(leaked_mentions(v, ("DIRECT",))) for v in unpack(
            [golds[d.doc_id] for d in docs], _run("none", docs)))


def test_sent_text_reads_every_text_a_request_carries():
    msgs = [{"role": "user", "content": [{"type": "text", "text": "part"}]},
            {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "name": "f", "content": "result"}]
    assert sent_text(msgs) == "part\nf\n{}\nresult\nf"
    assert sent_text(None) == "" and sent_text([]) == ""
