"""A language model behind an OpenAI-compatible server, prompted, as a translator and a
classifier of the model protocol (:mod:`compsuite.models.protocol`).

Each input becomes one prompt (:class:`compsuite.models.prompting.Prompter`: the
template, demonstrations from the study's training split, an instruction) and one
request: ``/v1/completions`` with the prompt's text, or ``/v1/chat/completions`` with
its messages; greedy (temperature 0), ``max_tokens`` and the stop strings from the
prompting.  The requests of a call go out through a bounded pool of ``concurrency``
threads; the answers come back in input order, and each moves the progress bar as it
arrives.  A classification also asks for the first token's log-probabilities (5
alternatives): the class is the one whose word starts the likeliest of them; where the
server gives none (``transformers serve`` gives none), the class whose word the answer
starts with; neither, ``""`` (scored as wrong).  The class words are the prompting's
``labels``; without them, the classes of the training split (the demonstrations'
answers), each its own word.  An empty answer, or one cut at
``max_tokens``, is an answer like any other (counted in the usage record).

Every answer is kept in the run folder's request cache as it arrives, and what the
cache holds is never sent again; each call's answers, raw and read, are appended to
the folder's ``answers.jsonl``, and what the call cost is added to its usage record
(:mod:`compsuite.toolkits.served.cache`).
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import ConfigError
from compsuite.models.protocol import ModelBase, batch_done
from compsuite.toolkits.served.cache import (add_usage, append_answers, open_cache,
                                             request_key)
from compsuite.toolkits.served.client import Client, Reply, ServerError

#: the first token's alternatives a classification asks for
TOP_LOGPROBS = 5
#: the most stop strings a request carries (OpenAI's limit; the answer is cut at every
#: stop string of the prompting anyway)
MAX_STOPS = 4
#: the most classes read from a training split's answers (without prompting.labels)
MAX_CLASSES = 50


class ServedModel(ModelBase):
    """A served model (see the module docstring).  ``url``: the API's base; ``model``:
    the model's name as the server lists it; ``api``: ``completions`` or ``chat``;
    ``spec``: the prompting (a :class:`~compsuite.models.prompting.PromptSpec`);
    ``data``: the dataset demonstrations come from; ``folder``: where the request
    cache and the usage record are kept (None: neither); ``key``: the API key."""

    capabilities = frozenset({"translate", "classify"})

    def __init__(self, url: str, model: str, spec, *, api: str = "completions",
                 data=None, folder: str | Path | None = None, key: str | None = None,
                 concurrency: int = 4, timeout: float = 120.0, retries: int = 4,
                 backoff: float = 1.0):
        from compsuite.models.prompting import Prompter

        self.url = url.rstrip("/")
        self.model = model
        self.api = api
        self.spec = spec
        self.prompter = Prompter(spec, data)
        self.folder = None if folder is None else Path(folder)
        self.concurrency = concurrency
        self.name = f"served:{model} ({self.url})"
        self.client = Client(self.url, key, timeout=timeout, retries=retries, backoff=backoff)
        self._model_id: str | None = None
        self._lock = threading.Lock()
        #: the answers of the last call (raw and read), in input order
        self.answers: list = []
        self._label: str | None = None
        self._unit: str | None = None

    # ------------------------------------------------------------------ the protocol
    def respond(self, request):
        # what the answers are recorded under: the request's label and unit
        self._label, self._unit = request.label, request.unit
        return super().respond(request)

    def translate(self, sources: Sequence[str]) -> list[str]:
        """One answer per source (the answer read from the model's text)."""
        return [a.answer for a in self._answer(list(sources), classify=False)]

    def classify(self, inputs: Sequence) -> list[str]:
        """The class of each input (a text, or a sentence pair); ``""`` where the
        answer names none."""
        self._classes()
        return [a.answer for a in self._answer(list(inputs), classify=True)]

    def close(self) -> None:
        self.client.close()

    def _classes(self) -> None:
        """Without ``prompting.labels``, the classes of the training split (the
        demonstrations' answers), each answered by its own name."""
        if self.prompter.spec.labels:
            return
        from dataclasses import replace

        from compsuite.foundation.errors import DataError

        try:
            _, outputs = self.prompter.demonstrations()
        except (ConfigError, DataError) as e:
            raise ConfigError(f"{self.name}: classifying needs prompting.labels (each class "
                              "and the word the model answers for it, e.g. {entailment: "
                              f"yes, contradiction: no, neutral: maybe}}), or a training "
                              f"split whose answers are the classes ({e})") from None
        classes = sorted(set(outputs))
        if len(classes) > MAX_CLASSES:
            raise ConfigError(f"{self.name}: classifying needs prompting.labels: the "
                              f"training split's answers are {len(classes)} different "
                              "texts, not a few classes")
        self.prompter.spec = replace(self.prompter.spec, labels={c: c for c in classes})

    # ------------------------------------------------------------------ the server
    def model_id(self) -> str:
        """The model's id as the server lists it (``GET {url}/models``), asked once; a
        name it does not list is an error listing those it does."""
        with self._lock:
            if self._model_id is None:
                self._model_id = served_model_id(self.client, self.model)
            return self._model_id

    def decoding(self, classify: bool) -> dict:
        """The decoding settings a request carries (besides the model and the prompt)."""
        d: dict = {"temperature": 0, "max_tokens": self.spec.max_tokens}
        stops = [s for s in self.spec.stop if s][:MAX_STOPS]
        if stops:
            d["stop"] = stops
        if classify:
            d.update({"logprobs": True, "top_logprobs": TOP_LOGPROBS} if self.api == "chat"
                     else {"logprobs": TOP_LOGPROBS})
        return d

    def about(self) -> dict:
        """How the model is asked: what the usage record says beside its counts."""
        return {"model": self._model_id or self.model, "url": self.url, "api": self.api,
                "decoding": self.decoding(False), "label": self.spec.label(),
                "prompting": self.spec.label(),
                "template_sha256": self.spec.sha256()}

    # ------------------------------------------------------------------ internals
    def _answer(self, items: list, classify: bool) -> list:
        from compsuite.processes import check_stop

        check_stop()
        start = time.monotonic()
        counts = {"requests_sent": 0, "requests_cached": 0, "tokens_in": 0, "tokens_out": 0,
                  "answers_empty": 0, "answers_cut": 0}
        try:
            replies = self._replies(items, classify, counts)
            answers = [self.prompter.answer(r.text, classify, r.logprobs) for r in replies]
            counts["answers_empty"] = sum(not a.answer for a in answers)
            counts["answers_cut"] = sum(r.finish_reason == "length" for r in replies)
            if self.folder is not None and items:
                self._record(items, replies, answers)
        finally:
            if self.folder is not None and (counts["requests_sent"] or
                                            counts["requests_cached"]):
                add_usage(self.folder, {**counts, "wall_s": time.monotonic() - start},
                          self.about())
        self.answers = answers
        return answers

    def _record(self, items: list, replies: list[Reply], answers: list) -> None:
        """Each answer, raw and read, appended to the folder's ``answers.jsonl`` under
        the request's label (as the hf backend records a prompted model's)."""
        from compsuite.models.prompting import fields_of

        lines = []
        for k, (item, r, a) in enumerate(zip(items, replies, answers)):
            f = fields_of(item)
            lines.append({"unit": self._unit, "label": self._label, "index": k,
                          "input": [f["premise"], f["hypothesis"]] if "premise" in f
                          else f["input"], "raw": a.raw, "answer": a.answer,
                          "tokens_in": r.tokens_in, "tokens_out": r.tokens_out,
                          "finish_reason": r.finish_reason, "cached": r.cached})
        append_answers(self.folder, lines)

    def _replies(self, items: list, classify: bool, counts: dict) -> list[Reply]:
        """The server's reply to each item's prompt, from the cache where it holds it;
        ``counts`` counted."""
        if not items:
            return []
        model_id = self.model_id()
        chat = self.api == "chat"
        decoding = self.decoding(classify)
        prompts = self.prompter.prompts(items)
        keys = [request_key(model_id, self.api, p.key(chat), decoding) for p in prompts]
        cache = open_cache(self.folder) if self.folder is not None else None
        replies: list[Reply | None] = [None] * len(items)
        todo: dict[str, list[int]] = {}   # key -> the items asking it (sent once)
        for i, key in enumerate(keys):
            rec = cache.get(key) if cache is not None else None
            if rec is not None:
                replies[i] = Reply.from_record(rec)
            else:
                todo.setdefault(key, []).append(i)
        cached = len(items) - sum(len(v) for v in todo.values())
        counts["requests_cached"] += cached
        if cached:
            batch_done(cached, batches=0)
        if todo:
            bodies = {key: self._body(prompts[idx[0]], chat, decoding)
                      for key, idx in todo.items()}
            for key, reply in self._send_all(bodies, cache, prompts, todo, chat):
                for i in todo[key]:
                    replies[i] = reply
                counts["requests_sent"] += 1
                counts["tokens_in"] += reply.tokens_in
                counts["tokens_out"] += reply.tokens_out
                batch_done(len(todo[key]))
        return replies   # type: ignore[return-value]

    def _body(self, prompt, chat: bool, decoding: dict) -> dict:
        body = {"model": self.model, **decoding}
        if chat:
            body["messages"] = [dict(m) for m in prompt.messages]
        else:
            body["prompt"] = prompt.text
        return body

    def _send_all(self, bodies: dict[str, dict], cache, prompts, todo, chat: bool):
        """(key, reply) for each request of ``bodies``, as they arrive, from a pool of
        :attr:`concurrency` threads; each kept in ``cache`` as it arrives.  The first
        failure cancels what was not sent yet and is raised once the requests in
        flight have ended."""
        from compsuite.processes import check_stop

        failed = threading.Event()   # once a request failed, no other is sent

        def one(key: str) -> Reply | None:
            check_stop()
            if failed.is_set():
                return None
            try:
                reply = self.client.complete(self.api, bodies[key])
            except BaseException:
                failed.set()
                raise
            if cache is not None:
                cache.put(key, {"prompt": prompts[todo[key][0]].key(chat), **reply.record()})
            return reply

        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(bodies)),
                                  thread_name_prefix="served")
        pending = {pool.submit(one, key): key for key in bodies}
        failure: BaseException | None = None
        try:
            while pending:
                done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                check_stop()
                for f in done:
                    key = pending.pop(f)
                    try:
                        reply = f.result()
                    except ServerError as e:
                        failure = failure or e
                        continue
                    if failure is None and reply is not None:
                        yield key, reply
                if failure is not None:
                    for f in pending:
                        f.cancel()
                    wait(pending)
                    pending = {}
        finally:
            pool.shutdown(wait=failure is not None, cancel_futures=True)
        if failure is not None:
            raise failure


def served_model_id(client: Client, name: str) -> str:
    """``name`` as the server at ``client.url`` lists it (``GET /models``); a server
    without that list is taken at its word; a name it does not list is a ServerError
    that lists those it does."""
    listed = client.models()
    if listed is None or name in listed:
        return name
    served = ", ".join(listed[:20]) + (f" and {len(listed) - 20} more" if len(listed) > 20
                                       else "") if listed else "none"
    raise ServerError(f"{client.url}: the server serves no model {name!r} (it serves: "
                      f"{served}); correct --model-name (the run's model)")
