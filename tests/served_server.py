"""A real OpenAI-compatible server for the tests: ``transformers serve`` on 127.0.0.1,
serving a tiny Llama-architecture causal LM built here from a config (nothing is
downloaded), and tiny ``http.server`` servers that misbehave on purpose (500s,
malformed JSON).  A helper module, not a test file: ``tests/test_served.py`` and any
other test that needs a served model import it.

The tiny model (:func:`build_model`): a byte-level BPE tokenizer trained offline with
the ``tokenizers`` library on a few hundred words, a simple chat template, and a
2-layer Llama with random weights under a fixed seed (the same bytes every time).  Its
weights are random, so its answers are noise, except for one designed behaviour: the
token ``<nothing>`` (an added, non-special token) is followed by the end-of-sentence
token, always (a reserved hidden dimension carries it to the output layer, which no
layer writes to), and the end-of-sentence token follows nothing else; the model never
answers a single byte (half a character, a line break) or a special token.  So a
prompt that ends in ``<nothing>`` gets an empty answer, any other prompt words that run
until ``max_tokens``.

:class:`Served` starts ``transformers serve <folder> --host 127.0.0.1 --port <free
port> --device cpu`` with ``HF_HUB_OFFLINE=1`` and waits on ``GET /health``; ``stop()``
and ``start()`` again (a server stopped mid-run and restarted).  The server, pinned to
the folder, reports the folder's path as the model's id in ``GET /v1/models`` and
answers requests whose ``model`` is that path.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator

#: the token after which the tiny model ends its answer at once
NOTHING = "<nothing>"
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")
WORDS = ("the a an one two three some every no this that these those he she it they we "
         "you I man woman child dog cat bird fish tree house car road river hill city "
         "book letter song word name day night year time water fire stone wind sun moon "
         "star sees saw walks walked runs ran gives gave takes took finds found makes made "
         "knows knew likes liked wants wanted eats ate sleeps slept sings sang reads read "
         "writes wrote big small old new good bad red green blue black white long short "
         "happy sad quick slow near far here there now then and or but if when because "
         "with without in on at under over from to of for by about after before copy "
         "reverse shift swap_first_last repeat echo append prepend remove_first "
         "remove_second A B C D E F G H I J K L M N O P Q R S T U V W X Y Z entailment "
         "neutral contradiction yes no maybe true false premise hypothesis answer "
         "question input output translate sentence").split()


def build_model(folder: Path, seed: int = 0) -> Path:
    """The tiny model and its tokenizer in ``folder`` (see the module docstring); the
    same bytes for the same seed.  Returns ``folder``."""
    import random

    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from compsuite.toolkits.hf.backend import train_tokenizer

    folder = Path(folder)
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(400)]
    tok = train_tokenizer(lines, 400)
    tok.add_tokens([NOTHING])
    tok.chat_template = CHAT_TEMPLATE
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32,
                      num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=512, tie_word_embeddings=False,
                      pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg).eval()
    nothing, eos = tok.convert_tokens_to_ids(NOTHING), tok.eos_token_id
    with torch.no_grad():
        # dimension 0 of the residual stream: 1 at <nothing>, 0 elsewhere; no layer
        # writes to it; only the end-of-sentence token reads it
        emb = model.model.embed_tokens.weight
        emb[:, 0] = 0.0
        emb[nothing] = 0.0
        emb[nothing, 0] = 1.0
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight[0, :] = 0.0
            layer.mlp.down_proj.weight[0, :] = 0.0
        head = model.lm_head.weight
        head[:, 0] = 0.0
        # answers of words: no single bytes (half a character, a line break), no
        # special token, never <nothing> itself (their logits stay 0, below the best
        # word's)
        for token, i in tok.get_vocab().items():
            if len(token) == 1 or i in (tok.unk_token_id, tok.bos_token_id, nothing):
                head[i] = 0.0
        head[eos] = 0.0
        head[eos, 0] = 100.0
    check_designed(model, tok, nothing, eos)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def check_designed(model, tok, nothing: int, eos: int) -> None:
    """The designed behaviour holds: the end-of-sentence token right after
    ``<nothing>``, and never first after an ordinary prompt."""
    import torch

    with torch.no_grad():
        ids = tok("the dog saw a cat " + NOTHING, return_tensors="pt").input_ids
        assert ids[0, -1].item() == nothing
        logits = model(ids).logits[0]
        assert logits[-1].argmax().item() == eos, "<nothing> is not followed by </s>"
        assert (logits[:-1].argmax(-1) != eos).all(), "</s> follows an ordinary token"
        # a greedy answer of a few words runs on (no end, no line break)
        out = model.generate(tok("the dog", return_tensors="pt").input_ids, max_new_tokens=12,
                             do_sample=False)
        assert eos not in out[0, 2:].tolist() and nothing not in out[0].tolist()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Served:
    """``transformers serve`` of ``folder`` on 127.0.0.1 (see the module docstring):
    :attr:`url` (``http://127.0.0.1:PORT/v1``), :attr:`model` (the id it reports),
    :meth:`start`, :meth:`stop`; its log in ``log``."""

    def __init__(self, folder: Path, log: Path, port: int | None = None):
        self.folder = Path(folder)
        self.log = Path(log)
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return self.root + "/v1"

    @property
    def model(self) -> str:
        return str(self.folder)

    def start(self, timeout: float = 120.0) -> "Served":
        """Start the server (on the same port as before) and wait until ``/health``
        answers 200 and the model is loaded (one completion asked); one already
        running is stopped first."""
        self.stop()
        exe = Path(sys.executable).with_name("transformers")
        cmd = [str(exe) if exe.is_file() else "transformers", "serve", str(self.folder),
               "--host", "127.0.0.1", "--port", str(self.port), "--device", "cpu",
               "--log-level", "warning"]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        env.pop("COMPSUITE_API_KEY", None)
        env.pop("OPENAI_API_KEY", None)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.log, "ab")
        self.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        fh.close()
        atexit.register(self.stop)   # never left running by a test session that ends
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited ({self.proc.returncode}); "
                                   f"log {self.log}:\n{self.log.read_text(errors='replace')[-3000:]}")
            try:
                if get(self.root + "/health")[0] == 200:
                    self.warm_up()
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"transformers serve did not answer /health in {timeout:.0f} s; "
                           f"log {self.log}")

    def warm_up(self) -> None:
        """One completion, so that the model is loaded before a test times anything."""
        body = json.dumps({"model": self.model, "prompt": "the", "max_tokens": 1,
                           "temperature": 0}).encode()
        req = urllib.request.Request(self.url + "/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            r.read()

    def stop(self) -> None:
        """Stop the server (its process group), if it runs."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ----------------------------------------------------------------------------- bad servers
@contextmanager
def bad_server(answer: Callable[[BaseHTTPRequestHandler], tuple[int, bytes]]
               ) -> Iterator[tuple[str, list]]:
    """A tiny HTTP server on 127.0.0.1 in a thread, every request answered by
    ``answer(handler) -> (status, body)`` (``GET /v1/models`` lists the model ``tiny``
    unless ``answer`` says otherwise by answering it too): yields its base URL (``.../v1``)
    and the list of the paths it was asked."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):   # quiet
            pass

        def _reply(self):
            length = int(self.headers.get("Content-Length") or 0)
            self.body = self.rfile.read(length) if length else b""
            asked.append(f"{self.command} {self.path}")
            got = answer(self)
            if got is None:
                got = (200, json.dumps({"object": "list", "data": [
                    {"id": "tiny", "object": "model", "created": 0, "owned_by": "me"}]}
                ).encode())
            status, body = got
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _reply

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", asked
    finally:
        server.shutdown()
        server.server_close()
