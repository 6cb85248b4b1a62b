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
        Path(a.out).write_text(json.dumps({"rows": rows, "head_of_line": hol, "load": load, "method": a.method,
                                           "detector": a.detector}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
