"""Classifiers for CTL++ (Csordás, Irie and Schmidhuber 2022), as the authors' released
code builds them (RobertCsordas/ctlpp@1b5ab28; data_prep/ctlpp/doc.md lists every
setting with its file and line):

* ``ctlpp_bilstm``: a bidirectional LSTM (``models/encoder_decoder.py``,
  ``BidirectionalLSTMEncoder``; ``models/sequence_classifier.py``);
* ``ctlpp_transformer``: a Transformer encoder whose layers share their weights
  (one layer applied ``layers`` times), with Transformer-XL-style relative positional
  encoding in the attention;
* ``ctlpp_ndr``: the Neural Data Router: shared layers with geometric attention
  (directional, sigmoid match probabilities, nearest match first) and a copy gate.

Inputs arrive as fairseq writes them, ``c b a 3 </s>`` (the last-applied function
first, the end token last: the authors' encoder appends the same end token).  The
representation below the classifier is what :meth:`features` returns, for the
representation analysis of section 4.1.  Defaults are the paper's sizes; a quick
profile overrides them on the command line.
"""

import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.dataclass import FairseqDataclass
from fairseq.models import BaseFairseqModel, register_model

from ..labels import trim_filler_outputs
from ..packing import packed_lstm_states


class _Classifier(BaseFairseqModel):
    """Embedding -> encoder (subclass) -> a representation per input -> classes.

    Subclasses set how the embeddings start (``embedding_std``: None keeps PyTorch's
    N(0, 1)), whether dropout also reaches the classifier's input
    (``dropout_before_classifier``), and :meth:`represent`."""

    embedding_std = None
    dropout_before_classifier = False

    def __init__(self, cfg, task, d_model: int):
        super().__init__()
        self.cfg = cfg
        self.pad = task.source_dictionary.pad()
        self.embed = nn.Embedding(len(task.source_dictionary), d_model, padding_idx=self.pad)
        if self.embedding_std is not None:
            nn.init.normal_(self.embed.weight, std=self.embedding_std(d_model))
        self.dropout = nn.Dropout(cfg.dropout)
        self.out = nn.Linear(self.output_dim(), task.num_classes)

    @classmethod
    def build_model(cls, cfg, task):
        return cls(cfg, task)

    def output_dim(self) -> int:
        raise NotImplementedError

    def represent(self, x, padding_mask):  # embedded [B, T, d] -> [B, d_out]
        raise NotImplementedError

    def features(self, src_tokens, src_lengths=None):
        """The representation below the classifier: [B, d_out]."""
        padding_mask = src_tokens.eq(self.pad)
        return self.represent(self.dropout(self.embed(src_tokens)), padding_mask)

    def forward(self, src_tokens, src_lengths=None, **kwargs):
        h = self.features(src_tokens, src_lengths)
        return self.out(self.dropout(h) if self.dropout_before_classifier else h)

    def max_positions(self):
        return None

    def upgrade_state_dict_named(self, state_dict, name):
        """Checkpoints written before the fillers were dropped (2026-11-24) have output rows for fairseq's filler
        classes (fairseq_plugins/labels.py): cut to this model's classes."""
        trim_filler_outputs(state_dict, f"{name}.out" if name else "out",
                            self.out.out_features)
        super().upgrade_state_dict_named(state_dict, name)


# ----------------------------------------------------------------------------- Bi-LSTM
@dataclass
class BiLSTMConfig(FairseqDataclass):
    # the authors' sweep: state_size 256, split over the two directions; embeddings of
    # the state size (embedding_size unset); n_layers 1
    hidden_size: int = field(default=128, metadata={"help": "units per direction"})
    embed_dim: int = field(default=256, metadata={"help": "embedding size"})
    layers: int = field(default=1, metadata={"help": "LSTM layers"})
    dropout: float = field(default=0.5, metadata={"help": "dropout on the embeddings"})


@register_model("ctlpp_bilstm", dataclass=BiLSTMConfig)
class CTLPPBiLSTM(_Classifier):
    """The authors' Bi-LSTM classifier: embeddings (PyTorch's N(0, 1)), dropout on
    them only, one bidirectional LSTM over the input and its end token, and a linear
    classifier over the final states: the forward direction's after the end token and
    the backward direction's after the first token (``get_run_summary_state``)."""

    def __init__(self, cfg, task):
        self._out_dim = 2 * cfg.hidden_size
        super().__init__(cfg, task, cfg.embed_dim)
        self.lstm = nn.LSTM(cfg.embed_dim, cfg.hidden_size, num_layers=cfg.layers,
                            batch_first=True, bidirectional=True)

    def output_dim(self) -> int:
        return self._out_dim

    def represent(self, x, padding_mask):
        _, (h, _) = packed_lstm_states(self.lstm, x, (~padding_mask).sum(1))
        return torch.cat([h[-2], h[-1]], -1)     # the last layer's forward, backward


# ----------------------------------------------------------------------------- attention
def sinusoids(positions: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal encodings of (relative) positions: [N] -> [N, dim]."""
    inv = torch.exp(torch.arange(0, dim, 2, dtype=torch.float, device=positions.device)
                    * (-math.log(10000.0) / dim))
    ang = positions.float()[:, None] * inv[None]
    return torch.cat([ang.sin(), ang.cos()], -1)


class RelativeMultiheadAttention(nn.Module):
    """Transformer-XL attention: score(i, j) = (q_i + u)·k_j + (q_i + v)·W_r r(i - j),
    with r a sinusoidal encoding of the relative position."""

    def __init__(self, d_model: int, heads: int, dropout: float):
        super().__init__()
        self.h, self.dh = heads, d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.pos = nn.Linear(d_model, d_model, bias=False)
        self.u = nn.Parameter(torch.zeros(heads, self.dh))
        self.v = nn.Parameter(torch.zeros(heads, self.dh))
        self.o = nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)
        self.d_model = d_model

    def forward(self, x, padding_mask):
        B, T, _ = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.dh).unbind(2)   # [B, T, H, dh]
        rel = torch.arange(T - 1, -T, -1, device=x.device)                 # i - j, 2T-1 values
        r = self.pos(sinusoids(rel, self.d_model)).view(2 * T - 1, self.h, self.dh)
        content = torch.einsum("bihd,bjhd->bhij", q + self.u, k)
        position = torch.einsum("bihd,rhd->bhir", q + self.v, r)          # [B, H, T, 2T-1]
        idx = (torch.arange(T, device=x.device)[None, :]                  # column of i - j
               - torch.arange(T, device=x.device)[:, None] + T - 1)       # [T(i), T(j)]
        position = position.gather(3, idx[None, None].expand(B, self.h, T, T))
        scores = (content + position) / math.sqrt(self.dh)
        scores = scores.masked_fill(padding_mask[:, None, None, :], float("-inf"))
        att = self.drop(scores.softmax(-1))
        return self.o(torch.einsum("bhij,bjhd->bihd", att, v).reshape(B, T, -1))


def geometric_order(T: int, device) -> torch.Tensor:
    """For each query i, the keys j != i nearest first; at equal distance the left one
    first.  [T, T-1] (for T = 1: [1, 0])."""
    rows = []
    for i in range(T):
        rows.append(sorted((j for j in range(T) if j != i), key=lambda j: (abs(i - j), j > i)))
    return torch.tensor(rows, dtype=torch.long, device=device).view(T, max(T - 1, 0))


class GeometricAttention(nn.Module):
    """The NDR's geometric attention: p_ij = sigmoid(q_i·k_j/sqrt(dh) + beta_ij), with a
    directional term beta_ij from q's position (left of / right of i); the weight of
    key j is p_ij times the probability that no nearer key matched,
    A_ij = p_ij * prod_{k nearer than j} (1 - p_ik).  A query never attends to itself."""

    def __init__(self, d_model: int, heads: int, dropout: float):
        super().__init__()
        self.h, self.dh = heads, d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.direction = nn.Linear(d_model, 2 * heads)   # per head: left, right
        self.o = nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def weights(self, x, padding_mask):
        B, T, _ = x.shape
        q, k, _ = self.qkv(x).view(B, T, 3, self.h, self.dh).unbind(2)
        logits = torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(self.dh)
        left, right = self.direction(x).view(B, T, 2, self.h).permute(2, 0, 3, 1)  # [B,H,T]
        j_left = (torch.arange(T, device=x.device)[None, :]
                  < torch.arange(T, device=x.device)[:, None])                 # [T(i), T(j)]
        logits = logits + torch.where(j_left, left[..., None], right[..., None])
        p = torch.sigmoid(logits)
        eye = torch.eye(T, dtype=torch.bool, device=x.device)
        p = p.masked_fill(eye | padding_mask[:, None, None, :], 0.0)
        if T == 1:
            return p
        order = geometric_order(T, x.device)                                  # [T, T-1]
        po = p.gather(3, order[None, None].expand(B, self.h, T, T - 1))
        # probability that none of the nearer keys matched (exclusive cumulative product)
        log_miss = torch.log1p(-po.clamp(max=1 - 1e-6))
        before = torch.cumsum(log_miss, -1) - log_miss
        a = po * before.exp()
        return torch.zeros_like(p).scatter(3, order[None, None].expand(B, self.h, T, T - 1), a)

    def forward(self, x, padding_mask):
        B, T, _ = x.shape
        v = self.qkv(x).view(B, T, 3, self.h, self.dh)[:, :, 2]
        att = self.drop(self.weights(x, padding_mask))
        return self.o(torch.einsum("bhij,bjhd->bihd", att, v).reshape(B, T, -1))


# ----------------------------------------------------------------------------- Transformer
@dataclass
class SharedTransformerConfig(FairseqDataclass):
    d_model: int = field(default=128, metadata={"help": "model size"})
    heads: int = field(default=4, metadata={"help": "attention heads"})
    ff: int = field(default=512, metadata={"help": "feed-forward size"})
    layers: int = field(default=8, metadata={"help": "applications of the shared layer"})
    dropout: float = field(default=0.5, metadata={"help": "dropout"})


@register_model("ctlpp_transformer", dataclass=SharedTransformerConfig)
class CTLPPTransformer(_Classifier):
    embedding_std = staticmethod(lambda d: d ** -0.5)
    dropout_before_classifier = True

    def __init__(self, cfg, task):
        super().__init__(cfg, task, cfg.d_model)
        self.att = RelativeMultiheadAttention(cfg.d_model, cfg.heads, cfg.dropout)
        self.ff = nn.Sequential(nn.Linear(cfg.d_model, cfg.ff), nn.ReLU(), nn.Dropout(cfg.dropout),
                                nn.Linear(cfg.ff, cfg.d_model))
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)

    def output_dim(self) -> int:
        return self.cfg.d_model

    def represent(self, x, padding_mask):
        for _ in range(self.cfg.layers):    # one layer, shared across the steps
            x = self.ln1(x + self.dropout(self.att(x, padding_mask)))
            x = self.ln2(x + self.dropout(self.ff(x)))
        return x[:, 0]


# ----------------------------------------------------------------------------- NDR
@dataclass
class NDRConfig(FairseqDataclass):
    d_model: int = field(default=256, metadata={"help": "model size"})
    heads: int = field(default=4, metadata={"help": "attention heads"})
    ff: int = field(default=1024, metadata={"help": "feed-forward size"})
    layers: int = field(default=8, metadata={"help": "applications of the shared layer"})
    dropout: float = field(default=0.5, metadata={"help": "dropout"})
    gate_dropout: float = field(default=0.1, metadata={"help": "dropout on the copy gate's input"})


@register_model("ctlpp_ndr", dataclass=NDRConfig)
class CTLPPNDR(_Classifier):
    """One NDR layer, applied ``layers`` times:
    a = h + MHA_geo(h);  u = LN(a);  g = sigmoid(W_g dropout_g(u));
    û = u + W_2 dropout(GELU(W_1 u))   (the residual feed-forward path);
    h' = g * û + (1 - g) * h           (the copy gate keeps h where g is near 0)."""

    embedding_std = staticmethod(lambda d: d ** -0.5)
    dropout_before_classifier = True

    def __init__(self, cfg, task):
        super().__init__(cfg, task, cfg.d_model)
        self.att = GeometricAttention(cfg.d_model, cfg.heads, cfg.dropout)
        self.ln = nn.LayerNorm(cfg.d_model)
        self.gate = nn.Linear(cfg.d_model, cfg.d_model)
        nn.init.constant_(self.gate.bias, -3.0)       # start by copying
        self.gate_drop = nn.Dropout(cfg.gate_dropout)
        self.ff1, self.ff2 = nn.Linear(cfg.d_model, cfg.ff), nn.Linear(cfg.ff, cfg.d_model)

    def output_dim(self) -> int:
        return self.cfg.d_model

    def layer(self, h, padding_mask):
        u = self.ln(h + self.dropout(self.att(h, padding_mask)))
        g = torch.sigmoid(self.gate(self.gate_drop(u)))
        update = u + self.ff2(self.dropout(F.gelu(self.ff1(u))))
        return g * update + (1 - g) * h, g

    def represent(self, x, padding_mask):
        for _ in range(self.cfg.layers):
            x, _ = self.layer(x, padding_mask)
        return x[:, 0]
