"""The one translation layer between the APIs clients speak and the proxy's internal request form.

The internal form is a Chat Completions request (what :func:`~.request.build_outgoing` allow-lists, the
privacy engine protects and guards, and the restorer reads answers for).  A Responses request
(``/v1/responses``) or an Anthropic Messages request (``/v1/messages``) is translated INTO that form before
anything else happens, so every API gets the same allow-list, protection, egress guard, audit line and
restoration rules; the protected request is translated OUT to the API the upstream speaks (``openai``: Chat
Completions, ``anthropic``: Messages), and the upstream's answer is translated into a chat completion,
restored, and translated back into the client's API.  Anything that has no exact translation is a 400 naming
the field (:class:`~.request.InvalidRequest`), before anything is sent.
"""
from __future__ import annotations

import json
import time
from typing import Any, Dict, List, Optional, Tuple

from .request import InvalidRequest

CHAT, RESPONSES, MESSAGES, EMBEDDINGS = "chat", "responses", "messages", "embeddings"
OPENAI, ANTHROPIC = "openai", "anthropic"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # Anthropic requires max_tokens; a chat client that sets none gets this

# -- error shapes ------------------------------------------------------------------------------------------
ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                         404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                         529: "overloaded_error"}


def error_message(data: Any) -> str:
    """The message of an OpenAI- or Anthropic-shaped error body (or a generic one)."""
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        msg = data["error"].get("message")
        if isinstance(msg, str):
            return msg
    return "upstream error"


def api_error(api: str, status: int, message: str, err_type: str, code: Optional[str] = None) -> Dict[str, Any]:
    """An error body in the client API's shape (OpenAI's for chat, responses, embeddings; Anthropic's for
    messages, with the gateway's own code kept in the message)."""
    if api == MESSAGES:
        kind = ANTHROPIC_ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": f"{message}" + (f" ({code})" if code else "")}}
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


# -- client requests into the internal (chat) form -------------------------------------------------------------
def _chat_request(messages: List[Dict[str, Any]], body: Dict[str, Any], same: Tuple[str, ...],
                  renamed: Dict[str, str]) -> Dict[str, Any]:
    """A chat request for ``messages``: the client's settings copied by name (``same``) or renamed."""
    chat: Dict[str, Any] = {"messages": messages}
    for k in same:
        if body.get(k) is not None:
            chat[k] = body[k]
    for k, chat_key in renamed.items():
        if body.get(k) is not None:
            chat[chat_key] = body[k]
    return chat


def _text_of(content: Any, where: str, kinds: Tuple[str, ...]) -> List[Dict[str, Any]]:
    """Text parts of a content value (a string or a list of text parts of the given types)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise InvalidRequest(f"{where} must be a string or a list of content parts")
    out = []
    for j, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in kinds:
            raise InvalidRequest(f"{where}[{j}] is a content part of a type the privacy gateway cannot check "
                                 f"or translate (allowed: {', '.join(kinds)})")
        out.append({"type": "text", "text": part.get("text")})
    return out


def _flat(parts: List[Dict[str, Any]]) -> Any:
    return parts[0]["text"] if len(parts) == 1 else parts


RESPONSES_KEYS = {"model", "input", "instructions", "tools", "tool_choice", "max_output_tokens", "temperature",
                  "top_p", "stream", "parallel_tool_calls", "text", "store", "metadata", "user", "truncation",
                  "service_tier", "stream_options"}
RESPONSES_REFUSED = {"previous_response_id": "the proxy keeps no conversation state; send the whole input",
                     "conversation": "the proxy keeps no conversation state; send the whole input",
                     "background": "background responses are not supported by the privacy gateway",
                     "prompt": "stored prompts cannot be checked by the privacy gateway",
                     "reasoning": "reasoning options have no exact chat-completions translation",
                     "include": "'include' has no exact chat-completions translation"}


def responses_to_chat(body: Any) -> Tuple[Dict[str, Any], int]:
    """A Responses API request as a chat request, and the number of keys left out (not forwarded)."""
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object")
    for k, why in RESPONSES_REFUSED.items():
        if body.get(k) is not None:
            raise InvalidRequest(f"{k}: {why}")
    dropped = sum(1 for k in body if k not in RESPONSES_KEYS and k not in RESPONSES_REFUSED)
    dropped += sum(1 for k in ("store", "metadata", "user", "truncation", "service_tier") if k in body)
    messages: List[Dict[str, Any]] = []
    if body.get("instructions") is not None:
        messages.append({"role": "system", "content": body["instructions"]})
    inp = body.get("input")
    if isinstance(inp, str):
        messages.append({"role": "user", "content": inp})
    elif isinstance(inp, list):
        for i, item in enumerate(inp):
            where = f"input[{i}]"
            if not isinstance(item, dict):
                raise InvalidRequest(f"{where} must be an object")
            kind = item.get("type", "message")
            if kind == "message":
                role = item.get("role")
                if role not in ("user", "system", "developer", "assistant"):
                    raise InvalidRequest(f"{where}.role must be user, system, developer or assistant")
                kinds = ("output_text", "refusal") if role == "assistant" else ("input_text",)
                content = item.get("content")
                if role == "assistant" and isinstance(content, list):
                    content = [dict(p, text=p.get("refusal")) if isinstance(p, dict) and p.get("type") == "refusal"
                               else p for p in content]
                messages.append({"role": role, "content": _flat(_text_of(content, f"{where}.content", kinds))})
            elif kind == "function_call":
                call = {"id": item.get("call_id"), "type": "function",
                        "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
                last = messages[-1] if messages else None
                if last is not None and last["role"] == "assistant" and last.get("tool_calls") is not None \
                        and last.get("content") is None:
                    last["tool_calls"].append(call)
                else:
                    messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            elif kind == "function_call_output":
                out = item.get("output")
                if isinstance(out, list):
                    out = _flat(_text_of(out, f"{where}.output", ("input_text",)))
                messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": out})
            else:
                raise InvalidRequest(f"{where}.type {kind!r} cannot be checked or translated by the privacy "
                                     f"gateway (allowed: message, function_call, function_call_output)")
    else:
        raise InvalidRequest("'input' must be a string or a list of items")
    chat = _chat_request(messages, body, ("model", "temperature", "top_p", "stream", "parallel_tool_calls"),
                         {"max_output_tokens": "max_tokens"})
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise InvalidRequest("tools must be a list")
        chat["tools"] = []
        for i, t in enumerate(tools):
            if not isinstance(t, dict) or t.get("type") != "function":
                raise InvalidRequest(f"tools[{i}]: only function tools can be checked and translated")
            fn = {k: t[k] for k in ("name", "description", "parameters", "strict") if t.get(k) is not None}
            dropped += sum(1 for k in t if k not in ("type", "name", "description", "parameters", "strict"))
            chat["tools"].append({"type": "function", "function": fn})
    tc = body.get("tool_choice")
    if isinstance(tc, dict):
        if tc.get("type") != "function":
            raise InvalidRequest("tool_choice: only 'auto', 'none', 'required' or a function can be translated")
        chat["tool_choice"] = {"type": "function", "function": {"name": tc.get("name")}}
    elif tc is not None:
        chat["tool_choice"] = tc
    text = body.get("text")
    if isinstance(text, dict) and isinstance(text.get("format"), dict):
        fmt = text["format"]
        if fmt.get("type") == "json_schema":
            chat["response_format"] = {"type": "json_schema", "json_schema": {
                k: fmt[k] for k in ("name", "description", "schema", "strict") if fmt.get(k) is not None}}
        else:
            chat["response_format"] = {"type": fmt.get("type")}
    elif text is not None and not isinstance(text, dict):
        raise InvalidRequest("text must be an object")
    return chat, dropped


MESSAGES_KEYS = {"model", "messages", "system", "max_tokens", "temperature", "top_p", "stop_sequences", "stream",
                 "tools", "tool_choice", "metadata"}


def _tool_result(block: Dict[str, Any], where: str) -> Dict[str, Any]:
    content = block.get("content", "")
    if isinstance(content, list):
        content = _flat(_text_of(content, f"{where}.content", ("text",)))
    if block.get("is_error") is True:
        raise InvalidRequest(f"{where}.is_error has no exact chat-completions translation")
    return {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": content}


def messages_to_chat(body: Any) -> Tuple[Dict[str, Any], int]:
    """An Anthropic Messages request as a chat request, and the number of keys left out."""
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object")
    for k in ("top_k", "thinking", "container", "mcp_servers"):
        if body.get(k) is not None:
            raise InvalidRequest(f"{k} has no exact chat-completions translation in the privacy gateway")
    dropped = sum(1 for k in body if k not in MESSAGES_KEYS) + (1 if "metadata" in body else 0)
    messages: List[Dict[str, Any]] = []
    system = body.get("system")
    if system is not None:
        messages.append({"role": "system", "content": _flat(_text_of(system, "system", ("text",)))})
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise InvalidRequest("'messages' must be a non-empty list")
    for i, m in enumerate(msgs):
        where = f"messages[{i}]"
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise InvalidRequest(f"{where} must be an object with role 'user' or 'assistant'")
        content = m.get("content")
        if isinstance(content, str):
            messages.append({"role": m["role"], "content": content})
            continue
        if not isinstance(content, list):
            raise InvalidRequest(f"{where}.content must be a string or a list of content blocks")
        texts: List[Dict[str, Any]] = []
        calls: List[Dict[str, Any]] = []
        for j, block in enumerate(content):
            w = f"{where}.content[{j}]"
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                texts.append({"type": "text", "text": block.get("text")})
            elif kind == "tool_use" and m["role"] == "assistant":
                args = block.get("input", {})
                if not isinstance(args, dict):
                    raise InvalidRequest(f"{w}.input must be an object")
                calls.append({"id": block.get("id"), "type": "function",
                              "function": {"name": block.get("name"), "arguments": json.dumps(args, ensure_ascii=False)}})
            elif kind == "tool_result" and m["role"] == "user":
                messages.append(_tool_result(block, w))
            else:
                raise InvalidRequest(f"{w} is a content block of a type the privacy gateway cannot check or "
                                     f"translate (allowed: text, tool_use, tool_result)")
        if m["role"] == "assistant":
            messages.append({"role": "assistant", "content": _flat(texts) if texts else None,
                             **({"tool_calls": calls} if calls else {})})
        elif texts:
            messages.append({"role": "user", "content": _flat(texts)})
    chat = _chat_request(messages, body, ("model", "temperature", "top_p", "stream", "max_tokens"),
                         {"stop_sequences": "stop"})
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise InvalidRequest("tools must be a list")
        chat["tools"] = []
        for i, t in enumerate(tools):
            if not isinstance(t, dict) or t.get("type", "custom") != "custom" or "input_schema" not in t:
                raise InvalidRequest(f"tools[{i}]: only custom tools with an input_schema can be checked and "
                                     f"translated")
            dropped += sum(1 for k in t if k not in ("type", "name", "description", "input_schema"))
            fn = {"name": t.get("name"), "parameters": t.get("input_schema")}
            if t.get("description") is not None:
                fn["description"] = t["description"]
            chat["tools"].append({"type": "function", "function": fn})
    tc = body.get("tool_choice")
    if tc is not None:
        kind = tc.get("type") if isinstance(tc, dict) else None
        if kind == "tool":
            chat["tool_choice"] = {"type": "function", "function": {"name": tc.get("name")}}
        elif kind in ("auto", "any", "none"):
            chat["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}[kind]
        else:
            raise InvalidRequest("tool_choice.type must be auto, any, none or tool")
        if isinstance(tc, dict) and tc.get("disable_parallel_tool_use") is not None:
            chat["parallel_tool_calls"] = not tc["disable_parallel_tool_use"]
    return chat, dropped


# -- the protected request out to an Anthropic upstream ----------------------------------------------------
UNTRANSLATABLE_FOR_ANTHROPIC = ("n", "seed", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs",
                                "top_logprobs", "response_format", "reasoning_effort")


def chat_to_anthropic(chat: Dict[str, Any]) -> Dict[str, Any]:
    """The protected chat request as an Anthropic Messages request (after protection: every string in it is
    already protected and guarded).  Fields without an exact translation are a 400."""
    for k in UNTRANSLATABLE_FOR_ANTHROPIC:
        if chat.get(k) is not None and not (k == "n" and chat[k] == 1) and k != "seed":
            raise InvalidRequest(f"{k} has no exact translation for this upstream (it speaks Anthropic Messages)")
    if (chat.get("temperature") or 0) > 1:
        raise InvalidRequest("temperature must be between 0 and 1 for this upstream (it speaks Anthropic Messages)")
    system: List[str] = []
    out_msgs: List[Dict[str, Any]] = []

    def push(role: str, blocks: List[Dict[str, Any]]) -> None:
        if out_msgs and out_msgs[-1]["role"] == role:
            out_msgs[-1]["content"].extend(blocks)
        else:
            out_msgs.append({"role": role, "content": blocks})

    def texts(content: Any) -> List[Dict[str, Any]]:
        if content is None:
            return []
        if isinstance(content, str):
            return [{"type": "text", "text": content}] if content else []
        return [{"type": "text", "text": p["text"]} for p in content]

    for i, m in enumerate(chat["messages"]):
        role = m["role"]
        if role in ("system", "developer"):
            system.extend(b["text"] for b in texts(m.get("content")))
        elif role == "user":
            push("user", texts(m.get("content")))
        elif role == "assistant":
            blocks = texts(m.get("content"))
            for k, call in enumerate(m.get("tool_calls") or []):
                try:
                    args = json.loads(call["function"]["arguments"] or "{}")
                except json.JSONDecodeError:
                    raise InvalidRequest(f"messages[{i}].tool_calls[{k}].function.arguments is not a JSON object "
                                         f"(needed by this upstream)") from None
                if not isinstance(args, dict):
                    raise InvalidRequest(f"messages[{i}].tool_calls[{k}].function.arguments is not a JSON object")
                blocks.append({"type": "tool_use", "id": call.get("id") or f"call_{i}_{k}",
                               "name": call["function"]["name"], "input": args})
            push("assistant", blocks)
        elif role in ("tool", "function"):
            c = m.get("content")
            content = c if isinstance(c, str) else texts(c)
            push("user", [{"type": "tool_result", "tool_use_id": m.get("tool_call_id", ""), "content": content}])
    out: Dict[str, Any] = {"model": chat.get("model", ""), "messages": out_msgs,
                           "max_tokens": chat.get("max_tokens") or chat.get("max_completion_tokens")
                           or DEFAULT_MAX_TOKENS}
    if system:
        out["system"] = "\n\n".join(system)
    for k in ("temperature", "top_p", "stream"):
        if chat.get(k) is not None:
            out[k] = chat[k]
    stop = chat.get("stop")
    if stop is not None:
        out["stop_sequences"] = [stop] if isinstance(stop, str) else stop
    if chat.get("tools"):
        out["tools"] = [{"name": t["function"]["name"],
                         **({"description": t["function"]["description"]} if "description" in t["function"] else {}),
                         "input_schema": t["function"].get("parameters") or {"type": "object"}}
                        for t in chat["tools"]]
    tc = chat.get("tool_choice")
    if tc is not None:
        out["tool_choice"] = ({"type": "tool", "name": tc["function"]["name"]} if isinstance(tc, dict)
                              else {"type": {"auto": "auto", "required": "any", "none": "none"}[tc]})
        if chat.get("parallel_tool_calls") is False and tc != "none":
            out["tool_choice"]["disable_parallel_tool_use"] = True
    return out


# -- answers: Anthropic upstream -> chat completion -> client API ----------------------------------------
STOP_TO_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
                  "pause_turn": "stop", "refusal": "content_filter"}
FINISH_TO_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
                  "function_call": "tool_use", "content_filter": "refusal"}


def anthropic_to_completion(data: Any) -> Dict[str, Any]:
    """An Anthropic Messages answer as a chat completion (restored like any other)."""
    from .engine import MalformedUpstream

    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise MalformedUpstream("'content' is not a list")
    text: List[str] = []
    calls: List[Dict[str, Any]] = []
    for j, block in enumerate(data["content"]):
        if not isinstance(block, dict):
            raise MalformedUpstream(f"content[{j}] is not an object")
        if block.get("type") == "text":
            if not isinstance(block.get("text"), str):
                raise MalformedUpstream(f"content[{j}].text is not a string")
            text.append(block["text"])
        elif block.get("type") == "tool_use":
            if not isinstance(block.get("name"), str) or not isinstance(block.get("input"), dict):
                raise MalformedUpstream(f"content[{j}] is not a tool_use block with a name and an input object")
            calls.append({"id": str(block.get("id", f"toolu_{j}")), "type": "function",
                          "function": {"name": block["name"],
                                       "arguments": json.dumps(block["input"], ensure_ascii=False)}})
        else:
            raise MalformedUpstream(f"content[{j}].type is not text or tool_use")
    msg: Dict[str, Any] = {"role": "assistant", "content": "".join(text) if text or not calls else None}
    if calls:
        msg["tool_calls"] = calls
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    pt, ct = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    return {"id": str(data.get("id", "")), "object": "chat.completion", "created": int(time.time()),
            "model": str(data.get("model", "")),
            "choices": [{"index": 0, "message": msg,
                         "finish_reason": STOP_TO_FINISH.get(str(data.get("stop_reason")), "stop")}],
            "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}}


def _args(raw: str) -> Any:
    try:
        v = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return v if isinstance(v, dict) else {}


def completion_to_responses(data: Dict[str, Any], withheld: int, model: str = "") -> Dict[str, Any]:
    """A restored chat completion as a Responses API object (the first choice)."""
    choice = (data.get("choices") or [{}])[0]
    msg = choice.get("message") or {}
    rid = str(data.get("id") or "resp")
    output: List[Dict[str, Any]] = []
    if msg.get("content"):
        output.append({"type": "message", "id": f"msg_{rid}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": msg["content"], "annotations": []}]})
    for k, call in enumerate(msg.get("tool_calls") or []):
        fn = call.get("function") or {}
        output.append({"type": "function_call", "id": f"fc_{rid}_{k}", "call_id": call.get("id", f"call_{k}"),
                       "name": fn.get("name", ""), "arguments": fn.get("arguments", ""), "status": "completed"})
    usage = data.get("usage") or {}
    length = choice.get("finish_reason") == "length"
    return {"id": rid if rid.startswith("resp") else f"resp_{rid}", "object": "response",
            "created_at": data.get("created", int(time.time())), "model": data.get("model") or model,
            "status": "incomplete" if length else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if length else None,
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0),
                      "total_tokens": usage.get("total_tokens", 0),
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
            "privacy_withheld": withheld}


def completion_to_messages(data: Dict[str, Any], withheld: int) -> Dict[str, Any]:
    """A restored chat completion as an Anthropic Messages answer (the first choice)."""
    choice = (data.get("choices") or [{}])[0]
    msg = choice.get("message") or {}
    content: List[Dict[str, Any]] = []
    if msg.get("content"):
        content.append({"type": "text", "text": msg["content"]})
    for k, call in enumerate(msg.get("tool_calls") or []):
        fn = call.get("function") or {}
        content.append({"type": "tool_use", "id": call.get("id", f"toolu_{k}"), "name": fn.get("name", ""),
                        "input": _args(fn.get("arguments", ""))})
    usage = data.get("usage") or {}
    rid = str(data.get("id") or "msg")
    return {"id": rid if rid.startswith("msg") else f"msg_{rid}", "type": "message", "role": "assistant",
            "model": data.get("model", ""), "content": content,
            "stop_reason": FINISH_TO_STOP.get(str(choice.get("finish_reason")), "end_turn"), "stop_sequence": None,
            "usage": {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0)},
            "privacy_withheld": withheld}


# -- embeddings ------------------------------------------------------------------------------------------------
def embeddings_to_chat(body: Any) -> Tuple[Dict[str, Any], int, Dict[str, Any]]:
    """An embeddings request as a chat request (one user message per input string, so all inputs are
    protected together with the same keyed pseudonyms), the keys left out, and the numeric options kept."""
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object")
    inp = body.get("input")
    inputs = [inp] if isinstance(inp, str) else inp
    if not isinstance(inputs, list) or not inputs or not all(isinstance(s, str) for s in inputs):
        raise InvalidRequest("input must be a string or a non-empty list of strings (token arrays cannot be "
                             "checked by the privacy gateway)")
    dropped = sum(1 for k in body if k not in ("model", "input", "encoding_format", "dimensions"))
    extra: Dict[str, Any] = {}
    if body.get("encoding_format") is not None:
        if body["encoding_format"] not in ("float", "base64"):
            raise InvalidRequest("encoding_format must be float or base64")
        extra["encoding_format"] = body["encoding_format"]
    if body.get("dimensions") is not None:
        d = body["dimensions"]
        if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 65536:
            raise InvalidRequest("dimensions must be an integer between 1 and 65536")
        extra["dimensions"] = d
    chat: Dict[str, Any] = {"messages": [{"role": "user", "content": s} for s in inputs]}
    if body.get("model") is not None:
        chat["model"] = body["model"]
    return chat, dropped, extra


def chat_to_embeddings(chat: Dict[str, Any], extra: Dict[str, Any]) -> Dict[str, Any]:
    """The protected inputs as an OpenAI embeddings request."""
    return dict({"model": chat.get("model", ""), "input": [m["content"] for m in chat["messages"]]}, **extra)


def check_embeddings(data: Any, n_inputs: int) -> None:
    """Raise :class:`MalformedUpstream` unless ``data`` is an embeddings list with one entry per input."""
    from .engine import MalformedUpstream

    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise MalformedUpstream("'data' is not a list")
    if len(data["data"]) != n_inputs:
        raise MalformedUpstream(f"'data' has {len(data['data'])} embeddings for {n_inputs} inputs")
    for i, e in enumerate(data["data"]):
        if not isinstance(e, dict) or not isinstance(e.get("embedding"), (list, str)):
            raise MalformedUpstream(f"data[{i}].embedding is not a list or a base64 string")
