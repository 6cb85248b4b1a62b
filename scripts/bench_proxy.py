"""Load test of the privacy proxy against calling the upstream directly (127.0.0.1 only, bounded).

For prompts of about 300 and about 3,000 tokens (unique per request, so the detector's per-text cache never
answers), it measures the client-side latency of the same request sent (a) straight to the upstream and
(b) through the proxy, alternating, and prints p50/p95 of both, the added latency, and the proxy's
throughput at a small concurrency.  Upstreams: the instant fake (tests/fakes/fake_openai.py) and,
unless ``--no-llm``, the local llama.cpp server (small ``max_tokens``: the machine is shared).

    .venv/bin/python scripts/bench_proxy.py --requests 20 --llm-requests 3 --max-seconds 900 --out bench_proxy.json
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
    def __init__(self, upstream: str, method: str, detector: str, audit_dir: str, workers: int) -> None:
        import uvicorn

        from cloud_edge_privacy.models.local_server import free_port
        from cloud_edge_privacy.proxy import create_app, load_secrets, load_settings

        self.port = free_port()
        settings = load_settings({"upstream": upstream, "port": self.port, "method": method, "detector": detector,
                                  "audit_dir": audit_dir, "workers": workers, "timeout_s": 600})
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
        Path(a.out).write_text(json.dumps({"rows": rows, "load": load, "method": a.method, "detector": a.detector},
                                          indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
