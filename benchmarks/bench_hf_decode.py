"""Checkpoint selection's decoding with the hf backend: the old path against the new one,
on LoRA adapters over one base model (SGET's Llama 2 run: one adapter per saved step).

    .venv/bin/python benchmarks/bench_hf_decode.py [--shape quick|llama2-7b] \\
        [--adapters 3] [--n 256] [--max-new-tokens 32] [--json out.json]

The old path: each adapter loads its base afresh, decodes unmerged (peft's LoRA layers),
in the inputs' order, batch 32, to the end-of-sentence token or the cap.  The new path:
the base is loaded once and each adapter loaded onto it, merged into a copy of its
weights, inputs sorted by length, ``batch_size: auto`` (on a GPU the largest batch that
fits; on the CPU the default, 32), greedy generation stopped at the stop string.

The model is a stand-in with random weights built from a config (``--shape quick``:
SGET's quick stand-in, 2 layers of 128; ``--shape llama2-7b``: Llama-2-7B's shape,
6.74B parameters, bfloat16 on a GPU) with a byte-level BPE tokenizer trained on
synthetic sentences of 4 to 40 words; the adapters are LoRA r 8 on q_proj and v_proj
with random (non-zero) weights.  Random weights seldom emit the stop string or the
end-of-sentence token, so both paths mostly decode to the cap: the ratio shown is that
of loading, merging and batching; stopping early saves more on a trained model.

Prints sentences per second of each path (loading included), the ratio, and the share
of outputs identical between the paths: in float32 on the CPU they must all be (the
script exits with status 1 otherwise); in bfloat16 on a GPU the share is measured.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

SHAPES = {
    "quick": {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 4,
              "max_position_embeddings": 256, "tie_word_embeddings": True},
    # Llama-2-7b-hf's config.json
    "llama2-7b": {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
                  "num_attention_heads": 32, "num_key_value_heads": 32,
                  "max_position_embeddings": 4096, "vocab_size": 32000,
                  "rms_norm_eps": 1e-5, "tie_word_embeddings": False},
}
PROMPT = "### Input: {input} ### Output:\n"
WORDS = ("the a cat dog girl boy saw found gave liked ran slept near under with to in "
         "Emma Liam Noah Mia ball box cake friend teacher quickly happily").split()


def sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40))) + "."
            for _ in range(n)]


def build(root: Path, shape: str, adapters: int, max_new_tokens: int, device: str) -> list[Path]:
    """The base (random weights, saved) and ``adapters`` LoRA checkpoints over it, each a
    folder the hf backend's translator loads."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM

    from compsuite.toolkits.hf.backend import train_tokenizer
    from compsuite.toolkits.hf.translator import META

    tok = train_tokenizer([PROMPT.format(input=s) for s in sentences(2000, 0)], 1000)
    spec = dict(SHAPES[shape])
    spec.setdefault("vocab_size", len(tok))
    cfg = AutoConfig.for_model("llama", pad_token_id=tok.pad_token_id,
                               bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                               **spec)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    torch.manual_seed(0)
    with torch.device(device):
        base = AutoModelForCausalLM.from_config(cfg, dtype=dtype)
    base_dir = root / "base"
    base.save_pretrained(base_dir)
    tok.save_pretrained(base_dir)
    base = AutoModelForCausalLM.from_pretrained(base_dir, dtype=dtype).to(device)
    folders = []
    meta = {"kind": "causal", "prompt": PROMPT, "stop": ["\n"],
            "max_new_tokens": max_new_tokens, "lora": True}
    for k in range(adapters):
        torch.manual_seed(100 + k)
        lora = LoraConfig(r=8, lora_alpha=32, lora_dropout=0.0, target_modules=["q_proj", "v_proj"],
                          init_lora_weights=False, task_type="CAUSAL_LM")
        model = get_peft_model(base, lora)
        out = root / f"checkpoint-{(k + 1) * 200}"
        model.save_pretrained(out)
        tok.save_pretrained(out)
        (out / META).write_text(json.dumps(meta))
        base = model.unload()
        folders.append(out)
    del base
    return folders


def decode(folders: list[Path], sources: list[str], new: bool) -> tuple[float, list[list[str]]]:
    from compsuite.toolkits.hf.translator import HFTranslator, SharedBase

    start = time.perf_counter()
    outs = []
    SharedBase._kept = None
    for f in folders:
        if not new:
            SharedBase._kept = None      # the old path: the base loaded again
        t = HFTranslator(f, batch_size="auto" if new else 32, merge=new, sort=new,
                         stop_early=new)
        outs.append(t.translate(sources))
        del t
    SharedBase._kept = None
    return time.perf_counter() - start, outs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="quick")
    ap.add_argument("--adapters", type=int, default=3)
    ap.add_argument("--n", type=int, default=256, help="sources decoded per adapter")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--json")
    a = ap.parse_args()
    from compsuite.devices import cuda_available

    device = "cuda" if cuda_available() else "cpu"
    sources = sentences(a.n, 1)
    with tempfile.TemporaryDirectory() as tmp:
        folders = build(Path(tmp), a.shape, a.adapters, a.max_new_tokens, device)
        rows = {}
        for name, new in (("old", False), ("new", True)):
            wall, outs = decode(folders, sources, new)
            rows[name] = {"seconds": round(wall, 2),
                          "sentences_per_s": round(a.adapters * a.n / wall, 2), "outs": outs}
    same = sum(x == y for o, n in zip(rows["old"]["outs"], rows["new"]["outs"])
               for x, y in zip(o, n)) / (a.adapters * a.n)
    ratio = rows["old"]["seconds"] / rows["new"]["seconds"]
    print(f"shape {a.shape} on {device}; {a.adapters} adapters x {a.n} sources, "
          f"max_new_tokens {a.max_new_tokens}")
    for name in ("old", "new"):
        print(f"  {name}: {rows[name]['seconds']:8.2f} s  "
              f"{rows[name]['sentences_per_s']:8.2f} sentences/s")
    print(f"  ratio (old / new time): {ratio:.2f}x; identical outputs: {100 * same:.1f}%")
    if a.json:
        Path(a.json).write_text(json.dumps(
            {"shape": a.shape, "device": device, "adapters": a.adapters, "n": a.n,
             "max_new_tokens": a.max_new_tokens, "ratio": round(ratio, 3),
             "identical": same, **{k: {x: v[x] for x in ("seconds", "sentences_per_s")}
                                   for k, v in rows.items()}}, indent=2))
    if device == "cpu" and same < 1.0:
        print("float32 on the CPU: the outputs must be identical", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
