"""Issue 21 item 2: one definition of "what was sent".  The leakage metrics computed on the results equal
the same scan of the audit log (written before each HTTP attempt), sample by sample, against the logging fake
cloud on 127.0.0.1; and the proxy writes the same audit format as the benchmark's cloud client."""
import json

import pytest

from cloud_edge_privacy.audit import outgoing_texts, sent_text
from cloud_edge_privacy.core.context import CONTEXTS
from cloud_edge_privacy.metrics.privacy import leak_audit_lines, leak_direct, leaked_mentions
from cloud_edge_privacy.metrics.samples import unpack


def _run(method, docs):
    from cloud_edge_privacy.core.module_configs import CloudModelConfig
    from cloud_edge_privacy.core.pipeline import EdgePipeline
    from cloud_edge_privacy.datasets.tab import to_ianvs_record

    pipe = EdgePipeline(CONTEXTS.get(), CloudModelConfig(privacy_method=method, detector="fast", cache=False))
    return [pipe.cloud(to_ianvs_record(d)["question"]) for d in docs]


@pytest.mark.parametrize("method", ["none", "placeholder"])
def test_leakage_on_results_equals_the_audit_logs_record_of_what_was_sent(fake_cloud, sample_docs, method):
    from cloud_edge_privacy.anonymize import gold_dict

    docs = sample_docs[:3]
    results = _run(method, docs)
    assert all(r.status == "ok" for r in results)
    golds = {d.doc_id: gold_dict(d) for d in docs}
    lines = [json.loads(l) for l in CONTEXTS.get().audit.path.read_text(encoding="utf-8").splitlines()]
    attempts = [l for l in lines if l["event"] == "http_attempt"]
    assert len(attempts) == len(fake_cloud.requests) == len(docs)
    for line, res, req in zip(attempts, results, fake_cloud.requests):
        # the audit's messages are the result's sent messages are the bytes the cloud received
        assert line["messages"] == res.sent_messages == req["body"]["messages"]
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


def test_anonymize_applies_the_pipelines_guard_rule_for_randomized_releases(sample_docs):
    """anonymize used to call the guard without ``randomized_release``, so a DP release that happened to equal
    the true value was blocked there (a decision that depends on the private value) although the pipeline
    deliberately allows it; it now runs the pipeline's own protect + guard step."""
    from cloud_edge_privacy.anonymize import anonymize_documents
    from cloud_edge_privacy.detection import build_detector
    from cloud_edge_privacy.core.egress import check_egress
    from cloud_edge_privacy.core.gateway import PrivacyGateway
    from cloud_edge_privacy.randomness import Randomness

    det = build_detector("fast")
    doc = sample_docs[0]
    params = {"epsilon": 1000.0}  # a release equals the truth almost always
    prot = PrivacyGateway("selective_ldp", Randomness.benchmark(3), det, method_params=params).protect(
        doc.text, scope=doc.doc_id)
    old_rule = check_egress(prot, build_detector("structured"))
    assert any(f.rule == "identifier_kept_in_replacement" for f in old_rule)  # what anonymize used to block on
    out = anonymize_documents([doc], "selective_ldp", Randomness.benchmark(3), detector=det, progress=False,
                              params=params)
    now = check_egress(prot, build_detector("structured"), randomized_release=True)
    assert not any(f.rule == "identifier_kept_in_replacement" for f in now)
    assert out["status"][doc.doc_id] == ("privacy_failure" if now else "ok")
    assert out["masks"][doc.doc_id] == prot.masks()
