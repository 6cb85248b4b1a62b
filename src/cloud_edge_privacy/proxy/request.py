"""The one builder of the proxy's outgoing request: an allow-list of what the upstream may receive.

A client's chat request is read against a fixed schema.  Every string the upstream is allowed to see
(message contents and text parts, tool-call names and arguments, tool names and descriptions, JSON-schema
strings and property names, ``stop``, ``response_format`` names and schemas, the model name) becomes a
*text slot*: the privacy pipeline protects all slots of one request together, with the same detector, and
the egress guard scans them.  Values with a fixed vocabulary (roles, ``type``, JSON-schema keywords,
``tool_choice`` modes) are checked against it; numbers and booleans are checked by type; tool-call ids are
replaced by keyed ids (consistent within the request, never the client's text); ``logit_bias`` keeps only
integer token ids.  Every other key is dropped (and counted).  A value of the wrong type for an allowed key
is a 400 naming the field (never the value).

Every string is scanned as a reader reads it: identifiers (tool and function names, a tool message's
``name``, property names) become their words ("notify_margaret_thornton" -> "notify margaret thornton")
for protection and are rebuilt as identifiers afterwards; numbers in JSON schemas (``default``,
``examples``, ``enum``, ...) of four or more digits are protected as text and dropped when protection changes
them (a card or phone number); top-level numbers must be finite and in their documented range (NaN,
Infinity and absurd integers are a 400 naming the field) and ``seed`` is replaced by a keyed seed.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
TOOL_CHOICE_MODES = frozenset({"none", "auto", "required"})
RESPONSE_FORMATS = frozenset({"text", "json_object", "json_schema"})
REASONING_EFFORTS = frozenset({"minimal", "low", "medium", "high"})
FLOATS = ("temperature", "top_p", "presence_penalty", "frequency_penalty")
INTS = ("max_tokens", "max_completion_tokens", "n", "seed", "top_logprobs")
# The documented range of each number (OpenAI's API reference); anything else is a 400 naming the field.
RANGES: Dict[str, Tuple[float, float]] = {
    "temperature": (0, 2), "top_p": (0, 1), "presence_penalty": (-2, 2), "frequency_penalty": (-2, 2),
    "max_tokens": (1, 10_000_000), "max_completion_tokens": (1, 10_000_000), "n": (1, 128),
    "seed": (-2 ** 63, 2 ** 63 - 1), "top_logprobs": (0, 20)}
MAX_INT_DIGITS = 30  # a longer integer literal anywhere in a body is a 400 (no int parsing of 5,000 digits)
BOOLS = ("stream", "logprobs", "parallel_tool_calls")
# JSON-schema keywords: a fixed vocabulary, forwarded as they are; any other key outside a property map is dropped.
SCHEMA_KEYWORDS = frozenset({
    "type", "properties", "required", "items", "enum", "const", "description", "title", "default", "examples",
    "format", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "minItems", "maxItems", "uniqueItems", "additionalProperties", "anyOf", "oneOf", "allOf", "not", "$ref",
    "$defs", "definitions", "nullable", "multipleOf", "patternProperties", "propertyNames", "minProperties",
    "maxProperties", "prefixItems", "contains", "if", "then", "else", "$schema", "$id", "$comment", "strict",
    "readOnly", "writeOnly", "deprecated", "contentEncoding", "contentMediaType"})
PROPERTY_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
URL_FORMATS = frozenset({"uri", "url", "uri-reference", "iri", "iri-reference", "uri-template"})
URL_NAME_HINTS = ("url", "uri", "href", "link", "src", "endpoint", "webhook", "callback")
MAX_DEPTH = 32


class InvalidRequest(ValueError):
    """A value of the wrong type for an allowed field; the message names the field, never the value."""


class BadNumber:
    """A JSON literal the proxy refuses (NaN, Infinity, an integer of more than MAX_INT_DIGITS digits)."""

    def __init__(self, literal: str) -> None:
        self.literal = literal


def parse_body(data: bytes) -> Any:
    """A client's JSON body (None when it is not JSON); NaN, Infinity and absurd integers become
    :class:`BadNumber` (found, with their field, by :func:`build_outgoing`)."""
    def num_int(lit: str) -> Any:
        return BadNumber(lit) if len(lit.lstrip("-")) > MAX_INT_DIGITS else int(lit)

    def num_float(lit: str) -> Any:
        v = float(lit)
        return v if math.isfinite(v) else BadNumber(lit)

    try:
        return json.loads(data, parse_int=num_int, parse_float=num_float, parse_constant=BadNumber)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError):
        return None


def _find_bad(v: Any, where: str, depth: int = 0) -> Optional[str]:
    if isinstance(v, BadNumber):
        return where or "the body"
    if depth > 200:
        return None
    if isinstance(v, dict):
        for k, x in v.items():
            bad = _find_bad(x, f"{where}.{k}" if where else str(k), depth + 1)
            if bad:
                return bad
    elif isinstance(v, list):
        for i, x in enumerate(v):
            bad = _find_bad(x, f"{where}[{i}]", depth + 1)
            if bad:
                return bad
    return None


def ident_words(name: str) -> str:
    """An identifier as words: snake_case, kebab-case, dotted and camelCase split ("notifyMargaret_thornton"
    -> "notify Margaret thornton")."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return " ".join(re.split(r"[\s_.\-/:]+", spaced)).strip()


def words_ident(words: str) -> str:
    """Protected words back to an identifier ([A-Za-z0-9_], at most 64 characters)."""
    out = re.sub(r"[^A-Za-z0-9]+", "_", words).strip("_")[:64]
    return out or "unnamed"


@dataclass(frozen=True)
class Slot:
    """Where one protected text goes in the outgoing body; ``kind``: ``text`` (as protected), ``ident``
    (an identifier: rebuilt from its protected words, unchanged when protection changed nothing) or
    ``number`` (a schema number: kept when protection left it alone, else dropped)."""

    index: int
    kind: str = "text"
    value: Any = None


_DROP = object()


@dataclass
class Outgoing:
    """The allow-listed request: a skeleton with :class:`Slot` s where texts go, and the texts themselves."""

    skeleton: Dict[str, Any]
    texts: List[str]
    dropped: int = 0                               # keys left out (not on the allow-list)

    def fill(self, texts: List[str]) -> Dict[str, Any]:
        """The outgoing body with ``texts`` (the protected slot texts) in place of the slots; schema numbers
        that protection changed are dropped (and counted)."""
        if len(texts) != len(self.texts):
            raise ValueError("one protected text per slot is needed")

        def one(v: Slot) -> Any:
            new = texts[v.index]
            if v.kind == "ident":
                return v.value if new == self.texts[v.index] else words_ident(new)
            if v.kind == "number":
                if new == self.texts[v.index]:
                    return v.value
                self.dropped += 1
                return _DROP
            return new

        def walk(v: Any) -> Any:
            if isinstance(v, Slot):
                return one(v)
            if isinstance(v, list):
                return [y for y in (walk(x) for x in v) if y is not _DROP]
            if isinstance(v, dict):
                return {walk(k): y for k, y in ((k, walk(x)) for k, x in v.items()) if y is not _DROP}
            return v

        return walk(self.skeleton)


@dataclass
class _Builder:
    hash_id: Callable[[str], str]
    texts: List[str] = field(default_factory=list)
    dropped: int = 0

    def slot(self, value: Any, where: str) -> Slot:
        if not isinstance(value, str):
            raise InvalidRequest(f"{where} must be a string")
        self.texts.append(value)
        return Slot(len(self.texts) - 1)

    def ident(self, value: Any, where: str) -> Slot:
        """An identifier, protected as its words (see :func:`ident_words`)."""
        if not isinstance(value, str):
            raise InvalidRequest(f"{where} must be a string")
        self.texts.append(ident_words(value))
        return Slot(len(self.texts) - 1, "ident", value)

    def number(self, value: Any) -> Any:
        """A schema number: four or more digits are protected as text (a card, phone or ID number)."""
        digits = re.sub(r"\D", "", repr(value))
        if len(digits.lstrip("0")) < 4:
            return value
        self.texts.append(str(value))
        return Slot(len(self.texts) - 1, "number", value)

    def keep(self, obj: Dict[str, Any], allowed: Set[str]) -> None:
        self.dropped += sum(1 for k in obj if k not in allowed)

    # -- messages ------------------------------------------------------------------------------------
    def message(self, m: Any, where: str) -> Dict[str, Any]:
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            raise InvalidRequest(f"{where} must be an object with a 'role' among {sorted(ROLES)}")
        role = m["role"]
        allowed = {"role", "content", "tool_calls", "tool_call_id"} | ({"name"} if role in ("tool", "function") else set())
        self.keep(m, allowed)
        out: Dict[str, Any] = {"role": role}
        c = m.get("content")
        if isinstance(c, str):
            out["content"] = self.slot(c, f"{where}.content")
        elif isinstance(c, list):
            parts = []
            for j, part in enumerate(c):
                if not isinstance(part, dict) or part.get("type", "text") != "text":
                    # images, audio, files cannot be scanned: refusing them is failing closed
                    raise InvalidRequest(f"{where}.content[{j}] is a content part of a type the privacy gateway "
                                         f"cannot check")
                self.keep(part, {"type", "text"})
                parts.append({"type": "text", "text": self.slot(part.get("text"), f"{where}.content[{j}].text")})
            out["content"] = parts
        elif c is not None or "content" in m:
            if c is not None:
                raise InvalidRequest(f"{where}.content must be a string, a list of text parts or null")
            out["content"] = None
        if "name" in allowed and m.get("name") is not None:
            out["name"] = self.ident(m["name"], f"{where}.name")
        if m.get("tool_call_id") is not None:
            out["tool_call_id"] = self.tool_call_id(m["tool_call_id"], f"{where}.tool_call_id")
        if m.get("tool_calls") is not None:
            calls = m["tool_calls"]
            if not isinstance(calls, list):
                raise InvalidRequest(f"{where}.tool_calls must be a list")
            out["tool_calls"] = [self.tool_call(call, f"{where}.tool_calls[{k}]") for k, call in enumerate(calls)]
        return out

    def tool_call_id(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise InvalidRequest(f"{where} must be a string")
        return self.hash_id(value)

    def tool_call(self, call: Any, where: str) -> Dict[str, Any]:
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            raise InvalidRequest(f"{where} must be an object with a 'function'")
        self.keep(call, {"id", "type", "function"})
        fn = call["function"]
        self.keep(fn, {"name", "arguments"})
        out: Dict[str, Any] = {"type": "function",
                               "function": {"name": self.ident(fn.get("name"), f"{where}.function.name"),
                                            "arguments": self.slot(fn.get("arguments", ""),
                                                                   f"{where}.function.arguments")}}
        if call.get("id") is not None:
            out["id"] = self.tool_call_id(call["id"], f"{where}.id")
        return out

    # -- tools, formats, JSON schemas --------------------------------------------------------------
    def schema(self, value: Any, where: str, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise InvalidRequest(f"{where} is nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            return self.slot(value, where)
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, (int, float)):
            return self.number(value)
        if isinstance(value, list):
            return [self.schema(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        if isinstance(value, dict):
            out: Dict[Any, Any] = {}
            for k, v in value.items():
                if k not in SCHEMA_KEYWORDS:
                    self.dropped += 1
                    continue
                if k in PROPERTY_MAPS and isinstance(v, dict):
                    key = self.slot if k == "patternProperties" else self.ident
                    out[k] = {key(name, f"{where}.{k} (a property name)"):
                              self.schema(sub, f"{where}.{k}[{i}]", depth + 1) for i, (name, sub) in enumerate(v.items())}
                else:
                    out[k] = self.schema(v, f"{where}.{k}", depth + 1)
            return out
        raise InvalidRequest(f"{where} has a value of an unsupported type")

    def tool(self, t: Any, where: str) -> Dict[str, Any]:
        if not isinstance(t, dict) or t.get("type", "function") != "function" or not isinstance(t.get("function"), dict):
            raise InvalidRequest(f"{where} must be a function tool")
        self.keep(t, {"type", "function"})
        fn = t["function"]
        self.keep(fn, {"name", "description", "parameters", "strict"})
        out: Dict[str, Any] = {"name": self.ident(fn.get("name"), f"{where}.function.name")}
        if fn.get("description") is not None:
            out["description"] = self.slot(fn["description"], f"{where}.function.description")
        if fn.get("parameters") is not None:
            out["parameters"] = self.schema(fn["parameters"], f"{where}.function.parameters")
        if fn.get("strict") is not None:
            out["strict"] = _typed(fn["strict"], bool, f"{where}.function.strict")
        return {"type": "function", "function": out}

    def tool_choice(self, v: Any) -> Any:
        if isinstance(v, str):
            if v not in TOOL_CHOICE_MODES:
                raise InvalidRequest(f"tool_choice must be one of {sorted(TOOL_CHOICE_MODES)} or a function")
            return v
        if isinstance(v, dict) and isinstance(v.get("function"), dict):
            self.keep(v, {"type", "function"})
            self.keep(v["function"], {"name"})
            return {"type": "function", "function": {"name": self.ident(v["function"].get("name"),
                                                                         "tool_choice.function.name")}}
        raise InvalidRequest("tool_choice must be a string or {'type': 'function', 'function': {'name': ...}}")

    def response_format(self, v: Any) -> Dict[str, Any]:
        if not isinstance(v, dict) or v.get("type") not in RESPONSE_FORMATS:
            raise InvalidRequest(f"response_format.type must be one of {sorted(RESPONSE_FORMATS)}")
        self.keep(v, {"type", "json_schema"})
        out: Dict[str, Any] = {"type": v["type"]}
        js = v.get("json_schema")
        if v["type"] == "json_schema" and isinstance(js, dict):
            self.keep(js, {"name", "description", "schema", "strict"})
            inner: Dict[str, Any] = {"name": self.ident(js.get("name", "response"), "response_format.json_schema.name")}
            if js.get("description") is not None:
                inner["description"] = self.slot(js["description"], "response_format.json_schema.description")
            if js.get("schema") is not None:
                inner["schema"] = self.schema(js["schema"], "response_format.json_schema.schema")
            if js.get("strict") is not None:
                inner["strict"] = _typed(js["strict"], bool, "response_format.json_schema.strict")
            out["json_schema"] = inner
        elif js is not None:
            self.dropped += 1
        return out


def _typed(value: Any, kind: Any, where: str) -> Any:
    ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok:
        raise InvalidRequest(f"{where} must be {'a finite number' if kind is float else kind.__name__}")
    lo_hi = RANGES.get(where)
    if lo_hi is not None and not lo_hi[0] <= value <= lo_hi[1]:
        raise InvalidRequest(f"{where} must be between {lo_hi[0]} and {lo_hi[1]}")
    return value


def build_outgoing(body: Any, hash_id: Callable[[str], str], model: Optional[str] = None,
                   max_messages: int = 512) -> Outgoing:
    """Read a client's chat request against the allow-list; raises :class:`InvalidRequest` (a 400).

    ``hash_id`` maps a client's tool-call id to the id sent upstream; ``model`` (the proxy's setting)
    replaces the client's model name.
    """
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object")
    bad = _find_bad(body, "")
    if bad:
        raise InvalidRequest(f"{bad} must be a finite number of at most {MAX_INT_DIGITS} digits "
                             f"(NaN, Infinity and longer integers are refused)")
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise InvalidRequest("'messages' must be a non-empty list")
    if len(msgs) > max_messages:
        raise InvalidRequest(f"too many messages ({len(msgs)} > {max_messages})")
    b = _Builder(hash_id)
    out: Dict[str, Any] = {"messages": [b.message(m, f"messages[{i}]") for i, m in enumerate(msgs)]}
    allowed = {"model", "messages", "stream_options", "stop", "tools", "tool_choice", "response_format",
               "logit_bias", "reasoning_effort", *FLOATS, *INTS, *BOOLS}
    b.keep(body, allowed)
    if model is not None:
        out["model"] = model
    elif body.get("model") is not None:
        out["model"] = b.slot(body["model"], "model")
    for k in FLOATS:
        if body.get(k) is not None:
            out[k] = _typed(body[k], float, k)
    for k in INTS:
        if body.get(k) is not None:
            out[k] = _typed(body[k], int, k)
    if "seed" in out:  # a keyed seed: the same client seed gives the same upstream seed, and carries nothing
        out["seed"] = int(hash_id(f"seed:{out['seed']}")[-12:], 16)
    for k in BOOLS:
        if body.get(k) is not None:
            out[k] = _typed(body[k], bool, k)
    if body.get("reasoning_effort") is not None:
        if body["reasoning_effort"] not in REASONING_EFFORTS:
            raise InvalidRequest(f"reasoning_effort must be one of {sorted(REASONING_EFFORTS)}")
        out["reasoning_effort"] = body["reasoning_effort"]
    so = body.get("stream_options")
    if so is not None:
        if not isinstance(so, dict):
            raise InvalidRequest("stream_options must be an object")
        b.keep(so, {"include_usage"})
        out["stream_options"] = {"include_usage": _typed(so["include_usage"], bool, "stream_options.include_usage")} \
            if "include_usage" in so else {}
    stop = body.get("stop")
    if isinstance(stop, list):
        out["stop"] = [b.slot(s, f"stop[{i}]") for i, s in enumerate(stop)]
    elif stop is not None:
        out["stop"] = b.slot(stop, "stop")
    if body.get("tools") is not None:
        if not isinstance(body["tools"], list):
            raise InvalidRequest("tools must be a list")
        out["tools"] = [b.tool(t, f"tools[{i}]") for i, t in enumerate(body["tools"])]
    if body.get("tool_choice") is not None:
        out["tool_choice"] = b.tool_choice(body["tool_choice"])
    if body.get("response_format") is not None:
        out["response_format"] = b.response_format(body["response_format"])
    lb = body.get("logit_bias")
    if lb is not None:
        if not isinstance(lb, dict):
            raise InvalidRequest("logit_bias must be an object of token id -> bias")
        kept = {k: v for k, v in lb.items() if isinstance(k, str) and k.isdigit() and len(k) <= 7
                and isinstance(v, (int, float)) and not isinstance(v, bool) and -100 <= v <= 100}
        b.dropped += len(lb) - len(kept)
        out["logit_bias"] = kept
    return Outgoing(out, b.texts, b.dropped)


@dataclass(frozen=True)
class Param:
    """One declared tool parameter: the client's name and how its values may be restored (``text``: a plain
    string, no format, enum, const or pattern, not named like a URL; ``object``/``array``: look inside;
    ``other``: never restored)."""

    name: str
    kind: str
    children: Dict[str, "Param"] = field(default_factory=dict)   # sent property name -> Param
    items: Optional["Param"] = None


@dataclass(frozen=True)
class ToolDecl:
    """A tool the request declared: the client's name and its parameters by the names sent upstream."""

    name: str
    params: Dict[str, Param]


def _types(schema: Dict[str, Any]) -> Set[str]:
    t = schema.get("type")
    return {t} if isinstance(t, str) else {x for x in t if isinstance(x, str)} if isinstance(t, list) else set()


def _param(client: Any, sent: Any, name: str) -> Param:
    if not isinstance(client, dict) or not isinstance(sent, dict):
        return Param(name, "other")
    types = _types(client)
    if "object" in types or "properties" in client:
        return Param(name, "object", _props(client, sent))
    if "array" in types or "items" in client:
        return Param(name, "array", items=_param(client.get("items"), sent.get("items"), name))
    plain = ("string" in types and types <= {"string", "null"} and not any(
        k in client for k in ("format", "enum", "const", "pattern", "contentEncoding", "contentMediaType"))
        and not any(h in name.lower() for h in URL_NAME_HINTS))
    return Param(name, "text" if plain else "other")


def _props(client: Dict[str, Any], sent: Dict[str, Any]) -> Dict[str, Param]:
    cp, sp = client.get("properties"), sent.get("properties")
    if not isinstance(cp, dict) or not isinstance(sp, dict) or len(cp) != len(sp):
        return {}
    return {str(s_name): _param(c_sub, s_sub, str(c_name))
            for (c_name, c_sub), (s_name, s_sub) in zip(cp.items(), sp.items())}


def declared_tools(client: Dict[str, Any], sent: Dict[str, Any]) -> Dict[str, ToolDecl]:
    """The tools this request declared, by the name sent upstream (the client's body and the outgoing body
    side by side: same tools, same order)."""
    out: Dict[str, ToolDecl] = {}
    for ct, st in zip(client.get("tools") or [], sent.get("tools") or []):
        cfn, sfn = ct.get("function") or {}, st.get("function") or {}
        if isinstance(sfn.get("name"), str) and isinstance(cfn.get("name"), str):
            params = cfn.get("parameters")
            out[sfn["name"]] = ToolDecl(cfn["name"], _props(params, sfn.get("parameters") or {})
                                        if isinstance(params, dict) else {})
    return out
