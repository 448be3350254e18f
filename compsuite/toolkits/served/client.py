"""The HTTP side of a served model: one OpenAI-compatible endpoint asked through the
maintained ``openai`` client (its own retries off), with the suite's retry loop around
each request and every failure turned into one line naming the URL.

Retried, after deterministic waits (``backoff`` seconds, doubled each time, at most
:data:`MAX_WAIT`; a server's ``Retry-After`` where it asks for longer): an answer 429
(too many requests), 5xx, a time-out, a connection that fails or breaks.  Not retried:
another 4xx, and an answer that is not the JSON the API promises.  After the last try,
a :class:`ServerError` (a ToolkitError: the command line prints it in one line) says
what happened and what to do.

Answers are read from the response's JSON as plain data (not the client's typed
objects, which accept anything): a completion's text, why it finished, the first
token's alternatives with their log-probabilities where the server gives them, the
tokens in and out, and the model id the server answered as.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from compsuite.foundation.errors import ToolkitError

#: the longest wait between two tries, in seconds
MAX_WAIT = 30.0
#: the endpoints, by the ``api`` setting
ENDPOINTS = {"completions": "/completions", "chat": "/chat/completions"}


class ServerError(ToolkitError):
    """The server did not answer, or answered what the API does not allow; the message
    is one line naming the URL."""


@dataclass
class Reply:
    """One answer of the server, as data."""

    text: str
    finish_reason: str | None = None
    #: the first generated token's alternatives (token -> log-probability); None where
    #: the server gave none
    logprobs: dict[str, float] | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    #: the model id the answer names
    model: str | None = None
    #: tries it took (1: answered at once)
    tries: int = 1
    #: read from the request cache, not sent
    cached: bool = False

    def record(self) -> dict:
        return {"text": self.text, "finish_reason": self.finish_reason,
                "logprobs": self.logprobs, "tokens_in": self.tokens_in,
                "tokens_out": self.tokens_out, "model": self.model}

    @classmethod
    def from_record(cls, rec: dict) -> "Reply":
        return cls(text=rec.get("text") or "", finish_reason=rec.get("finish_reason"),
                   logprobs=rec.get("logprobs"), tokens_in=int(rec.get("tokens_in") or 0),
                   tokens_out=int(rec.get("tokens_out") or 0), model=rec.get("model"),
                   cached=True)


def waits(retries: int, backoff: float) -> list[float]:
    """The waits before each retry: ``backoff``, doubled each time, at most
    :data:`MAX_WAIT` (1, 2, 4, 8 s for 4 retries of 1 s)."""
    return [min(backoff * 2 ** i, MAX_WAIT) for i in range(retries)]


@dataclass
class Client:
    """An OpenAI-compatible endpoint at ``url`` (the API's base, ``.../v1``):
    ``timeout`` seconds a request may take, ``retries`` after the first try,
    ``backoff`` seconds before the first retry; ``key`` the API key (never written
    anywhere; None: the server needs none)."""

    url: str
    key: str | None = None
    timeout: float = 120.0
    retries: int = 4
    backoff: float = 1.0
    #: how the loop waits (the tests may watch it)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def __post_init__(self):
        from openai import OpenAI

        self.url = self.url.rstrip("/")
        self._client = OpenAI(base_url=self.url, api_key=self.key or "none",
                              timeout=self.timeout, max_retries=0)

    def close(self) -> None:
        self._client.close()

    # ------------------------------------------------------------------ the API
    def models(self) -> list[str] | None:
        """The ids of the models the server serves (``GET {url}/models``); None where
        the server has no such list (404)."""
        try:
            body = self._ask("/models", lambda: self._client.models.with_raw_response.list())
        except _NoList:
            return None
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or not all(isinstance(m, dict) and isinstance(
                m.get("id"), str) for m in data):
            raise ServerError(f"{self.url}/models: the answer is not a list of models "
                              f"({_short(json.dumps(body))}); is {self.url} an "
                              "OpenAI-compatible API's base URL (e.g. http://host:8000/v1)?")
        return [m["id"] for m in data]

    def complete(self, api: str, request: dict[str, Any]) -> Reply:
        """The answer to one request (``api``: ``completions`` or ``chat``; ``request``:
        the body, ``model`` included)."""
        path = ENDPOINTS[api]
        resource = self._client.completions if api == "completions" else \
            self._client.chat.completions
        tries = [0]

        def send():
            tries[0] += 1
            return resource.with_raw_response.create(**request)

        body = self._ask(path, send)
        reply = _reply(body, api, f"{self.url}{path}")
        reply.tries = tries[0]
        return reply

    # ------------------------------------------------------------------ the retry loop
    def _ask(self, path: str, send: Callable[[], Any]) -> Any:
        """``send()``'s answer as JSON, retried where it may succeed later."""
        import openai

        where = f"{self.url}{path}"
        delays = waits(self.retries, self.backoff)
        for attempt in range(len(delays) + 1):
            last = attempt == len(delays)
            try:
                raw = send()
            except openai.APITimeoutError:
                if last:
                    raise ServerError(
                        f"{where}: no answer within {self.timeout:g} s, {attempt + 1} "
                        f"{_times(attempt + 1)}; raise the run's timeout (args.timeout), "
                        "or check that the server is not overloaded") from None
                self.sleep(delays[attempt])
                continue
            except openai.APIConnectionError as e:
                if last:
                    raise ServerError(f"{where}: {_connection(e)}, {attempt + 1} "
                                      f"{_times(attempt + 1)}; start the server or "
                                      "correct --model-url (the run's url)") from None
                self.sleep(delays[attempt])
                continue
            except openai.APIStatusError as e:
                status = e.status_code
                if path == "/models" and status == 404:
                    raise _NoList() from None
                if status == 429 or status >= 500:
                    if last:
                        raise ServerError(f"{where}: {_status(e)}, {attempt + 1} "
                                          f"{_times(attempt + 1)}; "
                                          + ("lower --concurrency (the run's concurrency) "
                                             "or wait" if status == 429 else
                                             "see the server's log")) from None
                    self.sleep(max(delays[attempt], _retry_after(e)))
                    continue
                raise ServerError(f"{where}: {_status(e)}; {_advice(status)}") from None
            except openai.OpenAIError as e:   # anything else of the client's
                raise ServerError(f"{where}: {type(e).__name__}: {_short(str(e))}") from None
            return _json(raw, where)
        raise AssertionError("unreachable")


class _NoList(Exception):
    """The server has no list of models."""


# ----------------------------------------------------------------------------- reading answers
def _json(raw, where: str) -> Any:
    """The JSON of a raw response; what is not JSON is a ServerError."""
    http = raw.http_response
    try:
        return json.loads(http.content)
    except (ValueError, UnicodeDecodeError):
        kind = http.headers.get("content-type", "no content type")
        raise ServerError(f"{where}: answered {http.status_code} with what is not JSON "
                          f"({kind}: {_short(http.text)!r}); is this an OpenAI-compatible "
                          "server (the URL is its API's base, e.g. http://host:8000/v1)?"
                          ) from None


def _reply(body: Any, api: str, where: str) -> Reply:
    """A completion's answer from its JSON; one without the fields the API promises is
    a ServerError naming ``where``."""
    def bad(what: str) -> ServerError:
        return ServerError(f"{where}: the answer is not an OpenAI {api} response ({what}: "
                           f"{_short(json.dumps(body, ensure_ascii=False))})")

    if not isinstance(body, dict):
        raise bad("not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise bad("no choices")
    choice = choices[0]
    if api == "chat":
        message = choice.get("message")
        if not isinstance(message, dict):
            raise bad("no message")
        text = message.get("content")
    else:
        text = choice.get("text")
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise bad("its text is not a string")
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return Reply(text=text, finish_reason=choice.get("finish_reason"),
                 logprobs=_first_logprobs(choice.get("logprobs"), api),
                 tokens_in=_count(usage.get("prompt_tokens")),
                 tokens_out=_count(usage.get("completion_tokens")),
                 model=body.get("model") if isinstance(body.get("model"), str) else None)


def _first_logprobs(logprobs: Any, api: str) -> dict[str, float] | None:
    """The first generated token's alternatives, token -> log-probability, from either
    API's ``logprobs``; None where there are none (``transformers serve`` gives none)."""
    if not isinstance(logprobs, dict):
        return None
    out: dict[str, float] = {}
    try:
        if api == "chat":
            content = logprobs.get("content") or []
            first = content[0] if content else None
            if not isinstance(first, dict):
                return None
            for alt in first.get("top_logprobs") or []:
                out[str(alt["token"])] = float(alt["logprob"])
            if not out and "token" in first:
                out[str(first["token"])] = float(first["logprob"])
        else:
            top = logprobs.get("top_logprobs") or []
            if top and isinstance(top[0], dict):
                out = {str(t): float(lp) for t, lp in top[0].items()}
            elif logprobs.get("tokens"):
                out = {str(logprobs["tokens"][0]): float(logprobs["token_logprobs"][0])}
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    return out or None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


# ----------------------------------------------------------------------------- messages
def _times(n: int) -> str:
    return "try" if n == 1 else "tries"


def _connection(e: Exception) -> str:
    """What went wrong with a connection, in words."""
    cause = e.__cause__ or e.__context__
    text = f"{type(cause).__name__}: {cause}" if cause is not None else str(e)
    low = text.lower()
    if "refused" in low:
        return "no server answers (connection refused)"
    if "name or service not known" in low or "nodename nor servname" in low or \
            "name resolution" in low:
        return "no such host (the name does not resolve)"
    if "disconnect" in low or "closed" in low or "reset" in low or "protocol" in low:
        return "the server broke the connection before it answered"
    return f"the connection failed ({_short(text)})"


def _status(e) -> str:
    """``e``'s status and what the server said, in one line."""
    import http

    try:
        phrase = http.HTTPStatus(e.status_code).phrase
    except ValueError:
        phrase = "?"
    said = ""
    try:
        said = e.response.text
    except Exception:  # noqa: BLE001 - a body that cannot be read: nothing to quote
        pass
    said = " ".join(said.split())
    return f"the server answered {e.status_code} ({phrase})" + (
        f": {_short(said)}" if said else "")


def _advice(status: int) -> str:
    if status in (401, 403):
        return ("the server refused the API key: set COMPSUITE_API_KEY (or the variable "
                "the run's api_key_env names)")
    if status == 404:
        return ("no such endpoint: the URL is the API's base, e.g. http://host:8000/v1, "
                "and the server must offer this API (--model-api completions or chat)")
    return "the request was refused; check the run's settings against the server"


def _retry_after(e) -> float:
    """The wait a 429 or 503 asks for (``Retry-After`` in seconds), at most
    :data:`MAX_WAIT`; 0 where it asks none."""
    try:
        value = float(e.response.headers.get("retry-after", 0))
    except (TypeError, ValueError, AttributeError):
        return 0.0
    return max(0.0, min(value, MAX_WAIT))


def _short(text: str, most: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= most else text[:most] + "..."
