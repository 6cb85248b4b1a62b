"""A logging fake of an OpenAI-compatible server on 127.0.0.1, for tests and the leak check.

It records every request body, and answers according to ``mode``:
``ok`` (a fixed answer), ``echo`` (the last user message back), ``fail_after:N`` (N good answers, then 500),
``status:CODE`` (always that status), ``malformed`` (200 with a body that is not JSON), ``empty`` (200 without
choices).  ``stream: true`` requests get server-sent events in chunks of ``chunk`` characters.
``responder`` (a callable of the request body) overrides the mode: it returns ``(status, content_type, bytes)``
(an adversarial upstream crafting answers from what it received).
Run it by hand: ``python tests/fakes/fake_openai.py --port 8099 --mode echo --log bodies.jsonl``.
"""
from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional


class FakeOpenAI:
    def __init__(self, mode: str = "ok", answer: str = "summary", chunk: int = 3, port: int = 0,
                 log_path: Optional[str] = None, responder: Any = None) -> None:
        self.mode, self.answer, self.chunk, self.log_path = mode, answer, chunk, log_path
        self.responder = responder
        self.requests: List[Dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def bodies_text(self) -> str:
        with self.lock:
            return "\n".join(json.dumps(r["body"], ensure_ascii=False) for r in self.requests)

    def _reply_text(self, body: Dict[str, Any]) -> str:
        if self.mode == "echo":
            users = [m for m in body.get("messages", []) if m.get("role") == "user"]
            content = users[-1]["content"] if users else ""
            return content if isinstance(content, str) else json.dumps(content)
        return self.answer

    def _handler(self) -> Any:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, data: bytes, ctype: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode())

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                with fake.lock:
                    fake.requests.append({"body": body, "auth": self.headers.get("Authorization"),
                                          "time": time.time()})
                    n = len(fake.requests)
                    if fake.log_path:
                        with open(fake.log_path, "a", encoding="utf-8") as fh:
                            fh.write(json.dumps(body, ensure_ascii=False) + "\n")
                mode = fake.mode
                if fake.responder is not None:
                    code, ctype, data = fake.responder(body)
                    return self._send(code, data, ctype)
                if mode.startswith("status:"):
                    return self._send(int(mode.split(":")[1]), b'{"error": {"message": "fake error"}}')
                if mode.startswith("fail_after:") and n > int(mode.split(":")[1]):
                    return self._send(500, b'{"error": {"message": "fake outage"}}')
                if mode == "malformed":
                    return self._send(200, b"{not json")
                if mode == "empty":
                    return self._send(200, json.dumps({"id": "x", "object": "chat.completion", "created": 0,
                                                       "model": "fake", "choices": []}).encode())
                text = fake._reply_text(body)
                if body.get("stream"):
                    return self._stream(text, body)
                msg: Dict[str, Any] = {"role": "assistant", "content": text}
                tools = body.get("tools")
                if tools and mode == "echo":  # call the first tool with the user's text as its argument
                    name = tools[0]["function"]["name"]
                    msg = {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": name, "arguments": json.dumps({"text": text})}}]}
                payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
                           "choices": [{"index": 0, "finish_reason": "stop", "message": msg}],
                           "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}
                self._send(200, json.dumps(payload).encode())

            def _stream(self, text: str, body: Dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for i in range(0, len(text), fake.chunk):
                    ev = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": body.get("model"),
                          "choices": [{"index": 0, "delta": {"content": text[i:i + fake.chunk]}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(ev)}\n\n".encode())
                    self.wfile.flush()
                end = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": body.get("model"),
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()

        return Handler


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=8099)
    ap.add_argument("--mode", default="ok")
    ap.add_argument("--log", default=None, help="append every request body to this JSONL file")
    a = ap.parse_args()
    with FakeOpenAI(a.mode, port=a.port, log_path=a.log) as f:
        print(f"fake OpenAI server at {f.base_url} (mode {a.mode})", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
