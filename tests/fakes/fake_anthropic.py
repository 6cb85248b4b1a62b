"""A logging fake of Anthropic's Messages API (``POST /v1/messages``) on 127.0.0.1, for the proxy's tests.

It records every request body and its headers, and answers with the last user text block (``echo``), or, when
the request declares tools, with a ``tool_use`` of the first tool whose ``input`` is ``{"text": <that text>}``
(after a short text block).  ``status:CODE`` answers that status with an Anthropic error body.  ``stream: true``
requests get Anthropic's typed events, the text in chunks of ``chunk`` characters and the tool input in two
``input_json_delta`` parts.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List


class FakeAnthropic:
    def __init__(self, mode: str = "echo", chunk: int = 3, responder: Any = None) -> None:
        self.mode, self.chunk = mode, chunk
        self.responder = responder  # a callable of the body -> (status, content type, bytes): overrides the mode
        self.requests: List[Dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeAnthropic":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def bodies_text(self) -> str:
        with self.lock:
            return "\n".join(json.dumps(r["body"], ensure_ascii=False) for r in self.requests)

    @staticmethod
    def last_user_text(body: Dict[str, Any]) -> str:
        for m in reversed(body.get("messages", [])):
            if m.get("role") != "user":
                continue
            c = m.get("content")
            if isinstance(c, str):
                return c
            texts = [b.get("text", "") for b in c if b.get("type") == "text"]
            if texts:
                return "\n".join(texts)
            results = [b.get("content") for b in c if b.get("type") == "tool_result"]
            if results:
                return results[-1] if isinstance(results[-1], str) else json.dumps(results[-1])
        return ""

    def _handler(self) -> Any:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, ctype_or_data: Any, data: Any = None) -> None:
                ctype, data = ("application/json", ctype_or_data) if data is None else (ctype_or_data, data)
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _event(self, ev: Dict[str, Any]) -> None:
                self.wfile.write(f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n".encode())
                self.wfile.flush()

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                with fake.lock:
                    fake.requests.append({"body": body, "path": self.path, "headers": dict(self.headers),
                                          "time": time.time()})
                if fake.responder is not None:
                    return self._send(*fake.responder(body))
                if fake.mode.startswith("status:"):
                    return self._send(int(fake.mode.split(":")[1]), json.dumps(
                        {"type": "error", "error": {"type": "overloaded_error", "message": "fake overload"}}).encode())
                text = fake.last_user_text(body)
                tools = body.get("tools") or []
                content: List[Dict[str, Any]] = [{"type": "text", "text": text}]
                if tools:
                    content = [{"type": "text", "text": "Calling a tool."},
                               {"type": "tool_use", "id": "toolu_01", "name": tools[0]["name"],
                                "input": {"text": text}}]
                stop = "tool_use" if tools else "end_turn"
                if not body.get("stream"):
                    return self._send(200, json.dumps({
                        "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model"),
                        "content": content, "stop_reason": stop, "stop_sequence": None,
                        "usage": {"input_tokens": 11, "output_tokens": 3}}).encode())
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self._event({"type": "message_start", "message": {
                    "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model"),
                    "content": [], "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": 11, "output_tokens": 0}}})
                for i, block in enumerate(content):
                    if block["type"] == "text":
                        self._event({"type": "content_block_start", "index": i,
                                     "content_block": {"type": "text", "text": ""}})
                        for k in range(0, len(block["text"]), fake.chunk):
                            self._event({"type": "content_block_delta", "index": i,
                                         "delta": {"type": "text_delta", "text": block["text"][k:k + fake.chunk]}})
                    else:
                        self._event({"type": "content_block_start", "index": i, "content_block": dict(block, input={})})
                        js = json.dumps(block["input"])
                        half = len(js) // 2
                        for part in (js[:half], js[half:]):
                            self._event({"type": "content_block_delta", "index": i,
                                         "delta": {"type": "input_json_delta", "partial_json": part}})
                    self._event({"type": "content_block_stop", "index": i})
                self._event({"type": "ping"})
                self._event({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                             "usage": {"output_tokens": 3}})
                self._event({"type": "message_stop"})

        return Handler
