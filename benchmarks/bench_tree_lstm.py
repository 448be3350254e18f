"""S-TLSTM training throughput: the tree-LSTMs batched level by level (the suite's
``nli_stlstm``) against the same model with a per-example recursive encoder (each
sentence's nodes computed one at a time by recursion from the root, as a
straightforward tree-LSTM implementation does).

    .venv/bin/python benchmarks/bench_tree_lstm.py [--pairs 256] [--batch 32] \\
        [--hidden 300] [--min-len 6] [--max-len 20] [--rounds 3] [--threads 1]

Random binary trees over random sentences (lengths uniform in [min-len, max-len]), one
model's weights for both ways.  Prints the largest difference between the two ways'
logits (evaluation mode, so dropout is off) and between their gradients after one
backward pass, then training throughput (forward, backward and an Adam step, pairs per
second) for each way in alternating rounds, and the ratio of the medians.
"""
from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fairseq.data import Dictionary  # noqa: E402

from fairseq_plugins.models.nli_trees import STLSTMConfig, SyntacticTreeLSTM  # noqa: E402
from fairseq_plugins.trees import recursive_tree_lstm  # noqa: E402


def random_tree(n: int, rng: random.Random) -> list:
    """Children of a random binary tree over n words, post-order (sentence numbering)."""
    stack, out, nxt = [], [], 0
    while nxt < n or len(stack) > 1:
        if nxt < n and (len(stack) < 2 or rng.random() < 0.5):
            stack.append(nxt)
            nxt += 1
        else:
            r, l = stack.pop(), stack.pop()
            out.append((l, r))
            stack.append(n + len(out) - 1)
    return out


def batch(lengths, vocab: int, rng: random.Random) -> dict:
    T = max(lengths)
    net = {}
    for side in ("premise", "hypothesis"):
        toks = torch.full((len(lengths), T), 1, dtype=torch.long)
        tree = torch.full((len(lengths), max(T - 1, 1), 2), -1, dtype=torch.long)
        for b, n in enumerate(lengths):
            toks[b, :n] = torch.tensor([rng.randrange(4, vocab) for _ in range(n)])
            for k, (l, r) in enumerate(random_tree(n, rng)):
                tree[b, k] = torch.tensor([l, r])
        net[f"{side}_tokens"], net[f"{side}_tree"] = toks, tree
        net[f"{side}_lengths"] = torch.tensor(lengths)
    return net


class RecursiveSTLSTM(SyntacticTreeLSTM):
    """The same model, each sentence's tree-LSTMs computed one node at a time."""

    def run_tree(self, cell, x, sched):
        B, N, _ = x.shape
        T = sched.T
        out = x.new_zeros(B, N, cell.hidden)
        for b in range(B):
            n = int(sched.lengths[b])
            idx = torch.cat([torch.arange(n), torch.arange(T, T + n - 1)])
            h = recursive_tree_lstm(cell, x[b, idx], sched.children[b, :n - 1], n)
            out = out.index_put((torch.full_like(idx, b), idx), h)
        return out


def throughput(model, batches, n_pairs: int) -> float:
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.train()
    target = torch.zeros(len(batches[0]["premise_lengths"]), dtype=torch.long)
    t = time.perf_counter()
    for net in batches:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(**net), target[:len(net["premise_lengths"])])
        loss.backward()
        opt.step()
    return n_pairs / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=300)
    ap.add_argument("--min-len", type=int, default=6)
    ap.add_argument("--max-len", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rng = random.Random(0)
    torch.manual_seed(0)
    d = Dictionary()
    for i in range(1000):
        d.add_symbol(f"w{i}")
    task = SimpleNamespace(source_dictionary=d, num_classes=3)
    cfg = STLSTMConfig(embed_dim=a.hidden, hidden_size=a.hidden, mlp_dim=a.hidden)
    batched = SyntacticTreeLSTM(cfg, task)
    recursive = RecursiveSTLSTM(cfg, task)
    recursive.load_state_dict(batched.state_dict())
    batches = [batch([rng.randint(a.min_len, a.max_len) for _ in range(a.batch)], len(d), rng)
               for _ in range(max(1, a.pairs // a.batch))]
    n_pairs = a.batch * len(batches)

    batched.eval()
    recursive.eval()
    with torch.no_grad():
        diff = (batched(**batches[0]) - recursive(**batches[0])).abs().max().item()
    grads = []
    for m in (batched, recursive):
        m.zero_grad()
        m(**batches[0]).sum().backward()
        grads.append({k: p.grad.clone() for k, p in m.named_parameters() if p.grad is not None})
    gdiff = max((grads[0][k] - grads[1][k]).abs().max().item() for k in grads[0])
    print(f"{n_pairs} pairs in batches of {a.batch}, lengths {a.min_len}-{a.max_len}, "
          f"hidden {a.hidden}, {a.threads} thread(s)")
    print(f"largest logit difference: {diff:.2e}; largest gradient difference: {gdiff:.2e}")
    speeds = {"level by level": [], "per-example recursion": []}
    for _ in range(a.rounds):
        for name, m in (("level by level", batched), ("per-example recursion", recursive)):
            speeds[name].append(throughput(copy.deepcopy(m), batches, n_pairs))
    for name, v in speeds.items():
        print(f"{name:>22}: median {statistics.median(v):8.1f} pairs/s "
              f"({', '.join(f'{x:.1f}' for x in v)})")
    ratio = statistics.median(speeds["level by level"]) / statistics.median(
        speeds["per-example recursion"])
    print(f"training throughput ratio (level by level / recursion): {ratio:.1f}x")


if __name__ == "__main__":
    main()
