"""Binary trees for the plugins' models, batched level by level.

A batch of sentences comes with their binary parses as ``children`` [B, K, 2] (the task's
``--pair-inputs tree``; ``fairseq_plugins/doc.md``): row k holds the two children of a
sentence's k-th internal node in post-order, in the sentence's own numbering (0..n-1 the
words, n+k the k-th internal node); rows past n-2 are -1.  The models keep every node of
every sentence in one buffer [B, N, d], N = T + K: the T word positions first (as the
word tensors have them), then the K internal nodes; so node ``n+k`` of a sentence lives
at buffer position ``T+k`` whatever its own length, and the padding never mixes with it.

:func:`schedule` groups the internal nodes of the whole batch by height (a node's height
is one more than its higher child's; words have height 0).  Every node of one height
depends only on lower ones, so a tree-LSTM computes each height in one batched call:
as many calls as the tallest tree is high, with no per-example Python recursion in the
forward pass.  :class:`BinaryTreeLSTM` is that cell (Tai, Socher and Manning 2015's
binary N-ary Tree-LSTM with one forget gate per child, in Chen et al. 2017's
form).  :func:`recursive_tree_lstm` computes the same thing one example and
one node at a time: the reference the tests and ``benchmarks/bench_tree_lstm.py``
compare against.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn


@dataclass
class Schedule:
    """Where each node of a batch lives in the flat buffer [B * N] and in which order
    the internal nodes are computed.  ``levels``: per height 1, 2, ... (node, left,
    right) flat indices; ``node_mask`` [B, N]: real nodes; ``root`` [B]: each
    sentence's root (its last internal node, or its only word)."""

    B: int
    T: int
    K: int
    levels: list
    node_mask: torch.Tensor
    root: torch.Tensor
    children: torch.Tensor = None
    lengths: torch.Tensor = None

    @property
    def N(self) -> int:
        return self.T + self.K


def schedule(children: torch.Tensor, lengths: torch.Tensor, T: int) -> Schedule:
    """The :class:`Schedule` of ``children`` [B, K, 2] for sentences of ``lengths`` [B]
    words, their word tensors ``T`` wide.  A parse with the wrong number of internal
    nodes (n-1 for n words) or a child that is not an earlier node is a ValueError."""
    device = children.device
    ch = children.detach().cpu().numpy().astype(np.int64)
    n = lengths.detach().cpu().numpy().astype(np.int64)
    B, K = ch.shape[0], ch.shape[1]
    N = T + K
    real = ch[:, :, 0] >= 0                                   # [B, K]
    if (real.sum(1) != np.maximum(n - 1, 0)).any():
        b = int(np.flatnonzero(real.sum(1) != np.maximum(n - 1, 0))[0])
        raise ValueError(f"batch row {b}: {int(real[b].sum())} internal nodes for "
                         f"{int(n[b])} words (a binary parse has n-1)")
    if ((ch < 0) & real[:, :, None]).any():
        b, k = np.argwhere(((ch < 0) & real[:, :, None]).any(-1))[0]
        raise ValueError(f"batch row {b}: internal node {k} has a child -1")
    # sentence numbering -> buffer position: words stay, node n+k goes to T+k
    pos = np.where(ch >= n[:, None, None], ch - n[:, None, None] + T, ch)
    height = np.zeros((B, N), dtype=np.int64)
    for k in range(K):                   # post-order: children come before their parent
        rows = np.flatnonzero(real[:, k])
        if not len(rows):
            continue
        left, right = pos[rows, k, 0], pos[rows, k, 1]
        if ((left >= T + k) | (right >= T + k)).any():
            raise ValueError(f"internal node {k}: a child that is not an earlier node")
        height[rows, T + k] = 1 + np.maximum(height[rows, left], height[rows, right])
    levels = []
    flat = (np.arange(B) * N)[:, None]
    for h in range(1, int(height.max(initial=0)) + 1):
        b, k = np.nonzero((height[:, T:] == h) & real)
        node = torch.from_numpy(flat[b, 0] + T + k).to(device)
        left = torch.from_numpy(flat[b, 0] + pos[b, k, 0]).to(device)
        right = torch.from_numpy(flat[b, 0] + pos[b, k, 1]).to(device)
        levels.append((node, left, right))
    mask = np.zeros((B, N), dtype=bool)
    mask[:, :T] = np.arange(T)[None, :] < n[:, None]
    mask[:, T:] = real
    root = np.where(n >= 2, T + n - 2, 0)
    return Schedule(B, T, K, levels, torch.from_numpy(mask).to(device),
                    torch.from_numpy(root).to(device), children, lengths)


class BinaryTreeLSTM(nn.Module):
    """h, c of every node, Chen et al. (2017)'s binary tree-LSTM (their eqs. 3-10):
    i = σ(W_i x + U_i [h_L; h_R]), f_L = σ(W_f x + U_fL [h_L; h_R]), f_R = σ(W_f x +
    U_fR [h_L; h_R]) (one input weight W_f for both forget gates), o = σ(W_o x + U_o [h_L;
    h_R]), u = tanh(W_u x + U_u [h_L; h_R]); c = i⊙u + f_L⊙c_L + f_R⊙c_R; h = o⊙tanh(c).
    Words have no children (h_L = h_R = c_L = c_R = 0); internal nodes take their own
    input row of ``x`` too (the encoding layer gives them a learnt "non-word" vector, the
    composition layer a local-inference vector for every node)."""

    def __init__(self, d_in: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.W = nn.Linear(d_in, 4 * hidden)                    # i, f, o, u
        self.U = nn.Linear(2 * hidden, 5 * hidden, bias=False)  # i, f_L, f_R, o, u

    def reset_original_parameters(self):
        """Chen et al.'s own initialisation (lukecq1231/nli, scripts/TreeLSTM_IM/main.py,
        ``param_init_tree_lstm`` with ``norm_weight`` / ``ortho_weight``): each gate's
        input block of ``W`` a random orthogonal matrix when it is square (d_in ==
        hidden), else N(0, 0.01^2); each of the ten hidden-to-gate blocks of ``U`` (five
        gates, left and right child) a random orthogonal matrix; biases zero."""
        h = self.hidden
        with torch.no_grad():
            for g in range(4):
                block = self.W.weight[g * h:(g + 1) * h]
                if block.size(0) == block.size(1):
                    nn.init.orthogonal_(block)
                else:
                    block.normal_(0.0, 0.01)
            self.W.bias.zero_()
            for g in range(5):
                for side in range(2):
                    nn.init.orthogonal_(self.U.weight[g * h:(g + 1) * h, side * h:(side + 1) * h])

    def cell(self, wx, h_l, c_l, h_r, c_r):
        wi, wf, wo, wu = wx.chunk(4, -1)
        ui, ufl, ufr, uo, uu = self.U(torch.cat([h_l, h_r], -1)).chunk(5, -1)
        c = (torch.sigmoid(wi + ui) * torch.tanh(wu + uu) + torch.sigmoid(wf + ufl) * c_l
             + torch.sigmoid(wf + ufr) * c_r)
        return torch.sigmoid(wo + uo) * torch.tanh(c), c

    def forward(self, x: torch.Tensor, sched: Schedule) -> torch.Tensor:
        """``x`` [B, N, d_in] -> h [B, N, hidden], zeros at padded nodes."""
        B, N, _ = x.shape
        wx = self.W(x).reshape(B * N, -1)
        zeros = wx.new_zeros(B * N, self.hidden)
        words = sched.node_mask[:, :sched.T]
        h, c = self.cell(wx, zeros, zeros, zeros, zeros)   # every node as a word ...
        keep = torch.zeros(B, N, dtype=torch.bool, device=x.device)
        keep[:, :sched.T] = words
        keep = keep.reshape(-1, 1)
        h, c = h * keep, c * keep                          # ... kept for the words only
        for node, left, right in sched.levels:
            hn, cn = self.cell(wx[node], h[left], c[left], h[right], c[right])
            h = h.index_copy(0, node, hn)
            c = c.index_copy(0, node, cn)
        return h.reshape(B, N, self.hidden)


def recursive_tree_lstm(cell: BinaryTreeLSTM, x: torch.Tensor, children: torch.Tensor,
                        n: int) -> torch.Tensor:
    """One sentence, one node at a time, by recursion from the root: ``x`` [n + n-1,
    d_in] (words, then internal nodes in post-order), ``children`` [n-1, 2] in the
    sentence's numbering.  Returns h of every node [2n-1, hidden]; the reference for
    :meth:`BinaryTreeLSTM.forward`."""
    wx = cell.W(x)
    zero = wx.new_zeros(cell.hidden)
    memo: dict = {}

    def node(i: int):
        if i in memo:
            return memo[i]
        if i < n:
            out = cell.cell(wx[i], zero, zero, zero, zero)
        else:
            (hl, cl), (hr, cr) = node(int(children[i - n, 0])), node(int(children[i - n, 1]))
            out = cell.cell(wx[i], hl, cl, hr, cr)
        memo[i] = out
        return out

    node(2 * n - 2 if n > 1 else 0)
    return torch.stack([memo[i][0] for i in range(2 * n - 1)])
