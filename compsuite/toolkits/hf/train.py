"""The hf backend's training program, run in a child process by
:meth:`compsuite.toolkits.hf.backend.HFBackend.train`: ``python -m
compsuite.toolkits.hf.train CONFIG.json`` (the command a user can rerun) trains as the
config says with ``transformers.Trainer``, resuming from the newest complete checkpoint.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.foundation.io import atomic_open, read_lines
from compsuite.schema import check
from compsuite.toolkits.hf.backend import PREFIX, Settings, checkpoints
from compsuite.toolkits.hf.translator import (META, ensure_padding, model_class,
                                              position_limit, prompt_ids)


class Examples:
    """Tokenised training pairs: ``input_ids`` and ``labels`` (-100 where no loss).
    Causal: prompt + answer + ``</s>``, the loss on the answer and ``</s>`` only (the
    prompt's tokens counted as they are tokenised alone, as Alpaca-LoRA does);
    seq2seq: the prompt in the encoder, the answer + ``</s>`` as labels.  Pairs longer
    than ``max_length`` tokens are cut and counted (``cut``)."""

    def __init__(self, tokenizer, sources: list[str], targets: list[str], s: Settings):
        eos = tokenizer.eos_token_id
        self.items, self.cut = [], 0
        for src, tgt in zip(sources, targets):
            prompt = s.prompt.format(input=src)
            p = prompt_ids(tokenizer, prompt, causal=s.kind == "causal")
            if s.kind == "seq2seq":
                a = tokenizer(text_target=tgt)["input_ids"]
                a = a if a and a[-1] == eos else a + [eos]
                item = {"input_ids": p[:s.max_length], "labels": a[:s.max_length]}
                self.cut += len(p) > s.max_length or len(a) > s.max_length
            else:
                full = prompt_ids(tokenizer, prompt + tgt, causal=True) + [eos]
                item = {"input_ids": full[:s.max_length],
                        "labels": ([-100] * len(p) + full[len(p):])[:s.max_length]}
                self.cut += len(full) > s.max_length
            self.items.append(item)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> dict:
        return self.items[i]



def collate(pad_id: int):
    """Right padding (the positions of a sentence's tokens start at 0, as in
    generation); labels padded with -100."""
    import torch

    def fn(batch: list[dict]) -> dict:
        out = {}
        for key, fill in (("input_ids", pad_id), ("labels", -100)):
            n = max(len(b[key]) for b in batch)
            out[key] = torch.tensor([b[key] + [fill] * (n - len(b[key])) for b in batch])
        n = out["input_ids"].shape[1]
        out["attention_mask"] = torch.tensor([[1] * len(b["input_ids"]) +
                                              [0] * (n - len(b["input_ids"])) for b in batch])
        return out
    return fn



def load_base(base: str, s: Settings, cuda: bool):
    """The base model and tokenizer from a local folder (never a download), LoRA
    added when asked."""
    import torch
    from transformers import AutoTokenizer

    auto = model_class(s.kind)
    kwargs: dict[str, Any] = {"local_files_only": True}
    if s.load_in_8bit:
        if not cuda:
            raise ConfigError("load_in_8bit: needs a CUDA GPU (bitsandbytes)")
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True)
    elif cuda and s.precision != "fp32":
        kwargs["dtype"] = torch.bfloat16 if s.precision == "bf16" else torch.float16
    try:
        tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
        model = auto.from_pretrained(base, **kwargs)
    except (OSError, ValueError) as e:
        raise ConfigError(f"{base}: not a model folder transformers can load "
                          f"({str(e).splitlines()[0]})") from None
    ensure_padding(tokenizer)
    if s.lora is not None:
        from peft import LoraConfig, get_peft_model

        if s.load_in_8bit:
            from peft import prepare_model_for_kbit_training

            model = prepare_model_for_kbit_training(model)
        model = get_peft_model(model, LoraConfig(
            r=s.lora.r, lora_alpha=s.lora.alpha, lora_dropout=s.lora.dropout,
            target_modules=s.lora.target_modules, bias="none",
            task_type="SEQ_2_SEQ_LM" if s.kind == "seq2seq" else "CAUSAL_LM"))
    return model, tokenizer



def accumulation(s: Settings, world: int = 1) -> int:
    """Gradient accumulation steps: each of ``world`` processes (torchrun) takes
    ``micro_batch_size`` sentences a step, and an update sums ``batch_size``."""
    micro = s.micro_batch_size or s.batch_size
    if s.batch_size % (micro * world):
        raise ConfigError(f"batch_size {s.batch_size} is not a multiple of micro_batch_size "
                          f"{micro} x {world} processes")
    return s.batch_size // (micro * world)



def training_arguments(cfg: dict, s: Settings):
    from transformers import TrainingArguments

    micro = s.micro_batch_size or s.batch_size
    cuda = cfg["cuda"]
    return TrainingArguments(
        output_dir=cfg["out"], per_device_train_batch_size=micro,
        gradient_accumulation_steps=accumulation(s, int(os.environ.get("WORLD_SIZE", "1"))),
        learning_rate=s.learning_rate,
        num_train_epochs=s.epochs, max_steps=s.max_steps or -1, warmup_steps=s.warmup_steps,
        weight_decay=s.weight_decay, lr_scheduler_type="linear", optim="adamw_torch",
        save_strategy="steps" if s.save_steps else "epoch", save_steps=s.save_steps or 500,
        logging_steps=1, logging_strategy="steps", report_to="none", disable_tqdm=True,
        seed=cfg["seed"], data_seed=cfg["seed"], use_cpu=not cuda,
        bf16=cuda and s.precision == "bf16", fp16=cuda and s.precision == "fp16",
        dataloader_num_workers=0, remove_unused_columns=False)



def progress_callback(s: Settings):
    """Prints ``step N/M loss L`` (the backend's progress bar reads it) and writes
    ``compsuite_hf.json`` into every checkpoint saved."""
    from transformers import TrainerCallback

    meta = {"kind": s.kind, "prompt": s.prompt, "stop": s.stop,
            "max_new_tokens": s.max_new_tokens, "lora": s.lora is not None}

    class Progress(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            if logs and "loss" in logs:
                print(f"step {state.global_step}/{state.max_steps} loss {logs['loss']:.4f} "
                      f"lr {logs.get('learning_rate', 0):.3g}", flush=True)

        def on_save(self, args, state, control, **kw):
            folder = Path(args.output_dir) / f"{PREFIX}{state.global_step}"
            with atomic_open(folder / META) as fh:
                json.dump(meta, fh, indent=2)
    return Progress()



def train_from_config(path: Path) -> None:
    """Train as ``config.json`` says (written by :meth:`HFBackend.train`), resuming from
    the newest complete checkpoint."""
    import torch
    from transformers import Trainer

    cfg = json.loads(Path(path).read_text(encoding="utf-8"))
    s = check(Settings, cfg["settings"], f"{path}: settings")
    torch.manual_seed(cfg["seed"])
    model, tokenizer = load_base(cfg["base"], s, cfg["cuda"])
    limit = position_limit(model.config, tokenizer)
    if limit is not None and limit[0] < s.max_length:
        print(f"hf: max_length {s.max_length} lowered to {limit[0]}, the positions the model "
              f"reads ({limit[1]})", flush=True)
        s.max_length = limit[0]
    src, tgt = (read_lines(f) for f in cfg["train"])
    if len(src) != len(tgt):
        raise DataError(f"{cfg['train'][0]}: {len(src)} lines, but {cfg['train'][1]} has {len(tgt)}")
    data = Examples(tokenizer, src, tgt, s)
    print(f"hf: {len(data)} training pairs, {data.cut} cut at {s.max_length} tokens; "
          f"{sum(p.numel() for p in model.parameters() if p.requires_grad)} trainable "
          "parameters", flush=True)
    trainer = Trainer(model=model, args=training_arguments(cfg, s), train_dataset=data,
                      data_collator=collate(tokenizer.pad_token_id), processing_class=tokenizer,
                      callbacks=[progress_callback(s)])
    done = checkpoints(Path(cfg["out"]).parent)
    resume = str(done[-1][1]) if done and (done[-1][1] / "trainer_state.json").is_file() else None
    trainer.train(resume_from_checkpoint=resume)



def main(argv: list[str] | None = None) -> int:
    """``python -m compsuite.toolkits.hf.train CONFIG.json``: train as the config says."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m compsuite.toolkits.hf.train CONFIG.json", file=sys.stderr)
        return 2
    try:
        train_from_config(Path(argv[0]))
    except (ConfigError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
