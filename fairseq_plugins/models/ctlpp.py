"""Classifiers for CTL++ (Csordás, Irie and Schmidhuber 2022), as the authors' released
code builds them (RobertCsordas/ctlpp@1b5ab28; data_prep/ctlpp/doc.md lists every
setting with its file and line):

* ``ctlpp_bilstm``: a bidirectional LSTM (``models/encoder_decoder.py``,
  ``BidirectionalLSTMEncoder``; ``models/sequence_classifier.py``);
* ``ctlpp_transformer``: their ``relative_universal`` variant: one post-norm
  Transformer layer applied ``layers`` times, with Transformer-XL-style relative
  positions in the attention (``layers/transformer/relative_transformer.py``,
  ``multi_head_relative_pos_attention.py``);
* ``ctlpp_ndr``: their ``ndr_residual_core_gelu`` variant, the Neural Data Router: one
  layer applied ``layers`` times in training and ``test_layers`` times in evaluation,
  with direction-sensitive geometric attention and a copy gate
  (``layers/transformer/ndr_experimental.py``, ``direction_sensitive_geometric.py``).

Inputs arrive as fairseq writes them, ``c b a 3 </s>`` (the last-applied function
first, the end token last: the authors' encoder appends the same end token).  The two
attention models also read a start token in front, as the authors' encoder adds one,
and classify its column; the start token is fairseq's ``<s>``, a row of the input
embedding that the data never uses, added inside the model.  The representation below
the classifier is what :meth:`features` returns, for the representation analysis of
section 4.1.  Defaults are the sizes of the authors' sweeps; a quick profile
overrides them on the command line.
"""

import math
from dataclasses import dataclass, field
from typing import Optional

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
    N(0, 1)), whether dropout reaches the embeddings (``dropout_on_embeddings``) and the
    classifier's input (``dropout_before_classifier``), and :meth:`represent`."""

    embedding_std = None
    dropout_on_embeddings = True
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
        x = self.embed(src_tokens)
        return self.represent(self.dropout(x) if self.dropout_on_embeddings else x, padding_mask)

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
# References below are to RobertCsordas/ctlpp@1b5ab28.

def sinusoids(positions: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal encodings of (relative) positions, [N] -> [N, dim]: sines in the even
    and cosines in the odd channels (framework/layers/positional_encoding.py:7-14)."""
    inv = torch.exp(torch.arange(0, dim, 2, dtype=torch.float, device=positions.device)
                    * (-math.log(10000.0) / dim))
    ang = positions.float()[:, None] * inv[None]
    return torch.stack([ang.sin(), ang.cos()], -1).flatten(1)


def xavier_uniform_fans_(weight: torch.Tensor, fan_in: int, fan_out: int, gain: float = 1.0):
    """Glorot's uniform init for the fans given (not the tensor's own shape)."""
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    with torch.no_grad():
        return weight.uniform_(-bound, bound)


class RelativeMultiheadAttention(nn.Module):
    """Transformer-XL attention as the authors' ``FixedRelativeMultiheadAttention``:
    score(i, j) = s * ((q_i + u)·k_j + (q_i + v)·W_r r(j - i)), with r a sinusoidal
    encoding of the relative position, s a learned scale that starts at 1/sqrt(d_head),
    projections without biases, dropout on the keys and on W_r r (not on the attention
    weights), and a bias-free output projection."""

    def __init__(self, d_model: int, heads: int, dropout: float):
        super().__init__()
        self.h, self.dh, self.d_model = heads, d_model // heads, d_model
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.kv = nn.Linear(d_model, 2 * d_model, bias=False)   # per head: key, value
        self.pos = nn.Linear(d_model, d_model, bias=False)
        self.content_bias = nn.Parameter(torch.zeros(heads, self.dh))    # u
        self.position_bias = nn.Parameter(torch.zeros(heads, self.dh))   # v
        self.scale = nn.Parameter(torch.tensor([self.dh ** -0.5]))
        self.o = nn.Linear(d_model, d_model, bias=False)         # PyTorch's default init
        self.drop = nn.Dropout(dropout)
        for lin in (self.q, self.kv, self.pos):
            nn.init.xavier_uniform_(lin.weight)

    def forward(self, x, padding_mask):
        B, T, _ = x.shape
        q = self.q(x).view(B, T, self.h, self.dh)
        k, v = self.kv(x).view(B, T, self.h, 2, self.dh).unbind(3)
        rel = torch.arange(1 - T, T, device=x.device)                       # j - i
        r = self.pos(sinusoids(rel, self.d_model)).view(2 * T - 1, self.h, self.dh)
        k, r = self.drop(k), self.drop(r)               # r's mask is shared by the batch
        content = torch.einsum("bihd,bjhd->bhij", q + self.content_bias, k)
        position = torch.einsum("bihd,rhd->bhir", q + self.position_bias, r)  # [B,H,T,2T-1]
        idx = (torch.arange(T, device=x.device)[None, :]                    # column of j - i
               - torch.arange(T, device=x.device)[:, None] + T - 1)         # [T(i), T(j)]
        position = position.gather(3, idx[None, None].expand(B, self.h, T, T))
        scores = (content + position) * self.scale
        att = scores.masked_fill(padding_mask[:, None, None, :], float("-inf")).softmax(-1)
        return self.o(torch.einsum("bhij,bjhd->bihd", att, v).reshape(B, T, -1))


def geometric_precedence(T: int, device=None) -> torch.Tensor:
    """before[i, j, m]: for query i, key m is considered before key j (it is nearer to
    i, or as near and on i's right while j is on its left: the authors' window sums,
    layers/transformer/geometric_attention/cuda_interface.cu:63-88, put the right key
    first at equal distance).  A query is never its own key.  [T, T, T] bool."""
    pos = torch.arange(T, device=device)
    i, j, m = pos[:, None, None], pos[None, :, None], pos[None, None, :]
    dj, dm = (j - i).abs(), (m - i).abs()
    return ((dm < dj) | ((dm == dj) & (m > i) & (j < i))) & (m != i)


def geometric_order(T: int, device=None) -> torch.Tensor:
    """For each query i, its keys j != i in the order geometric attention considers
    them (nearest first, the right one first at equal distance): [T, T-1]."""
    before = geometric_precedence(T, device)
    rank = before.sum(-1)                                  # keys before j, for query i
    rank = rank.masked_fill(torch.eye(T, dtype=torch.bool, device=device), T)
    return rank.argsort(-1)[:, :max(T - 1, 0)]


class GeometricAttention(nn.Module):
    """The NDR's direction-sensitive geometric attention, as the authors'
    ``DirectionSensitiveGeometricAttention`` with ``normalize_score`` off:
    logit_ij = s q_i·k_j + s_d beta_ij + b, where beta_ij is one of two per-head
    projections of h_i (keys left of i, keys right of i) and s (from 1/sqrt(d_head)),
    s_d (from 1) and b (from 0) are learned; p_ij = sigmoid(logit_ij); the weight of key j
    is p_ij times the probability that no key considered before it matched,
    A_ij = p_ij * prod_{m before j} (1 - p_im) (:func:`geometric_precedence`), not
    normalised.  A query never attends to itself nor to padding.  Dropout reaches the
    keys; the output projection has no bias."""

    def __init__(self, d_model: int, heads: int, dropout: float):
        super().__init__()
        self.h, self.dh = heads, d_model // heads
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * d_model)                 # per head: key, value
        self.direction = nn.Linear(d_model, 2 * heads)            # per head: left, right
        self.o = nn.Linear(d_model, d_model, bias=False)
        self.scale = nn.Parameter(torch.full([1], self.dh ** -0.5))
        self.direction_scale = nn.Parameter(torch.ones(1))
        self.bias = nn.Parameter(torch.zeros(1))
        self.drop = nn.Dropout(dropout)
        # the authors' fans (direction_sensitive_geometric.py:105-115): the query's fan-out
        # is one head's size; the first half of the key/value rows (in their per-head
        # layout: heads 0 .. H/2-1, keys and values) as the query, the second half with
        # fan-out d_model; biases and the direction projection keep PyTorch's init
        xavier_uniform_fans_(self.q.weight, d_model, self.dh)
        xavier_uniform_fans_(self.kv.weight[:d_model], d_model, self.dh)
        xavier_uniform_fans_(self.kv.weight[d_model:], d_model, d_model)
        xavier_uniform_fans_(self.o.weight, d_model, d_model)

    def weights(self, x, padding_mask):
        B, T, _ = x.shape
        q = self.q(x).view(B, T, self.h, self.dh)
        k = self.drop(self.kv(x).view(B, T, self.h, 2, self.dh)[:, :, :, 0])
        logits = torch.einsum("bihd,bjhd->bhij", q, k) * self.scale
        left, right = (self.direction(x) * self.direction_scale).view(B, T, self.h, 2) \
            .permute(3, 0, 2, 1)                                             # [B, H, T(i)]
        pos = torch.arange(T, device=x.device)
        j_left = (pos[None, :] < pos[:, None])                               # [T(i), T(j)]
        j_right = (pos[None, :] > pos[:, None])
        logits = (logits + left[..., None] * j_left + right[..., None] * j_right + self.bias)
        eye = torch.eye(T, dtype=torch.bool, device=x.device)
        logits = logits.masked_fill(eye | padding_mask[:, None, None, :], float("-inf"))
        log_p, log_miss = F.logsigmoid(logits), F.logsigmoid(-logits)
        # sum over the keys before j of log(1 - p_im); a product and a sum rather than a
        # matrix product, so that it stays in float32 under amp as the authors' cumulative
        # sums do (the learned [1]-shaped scales make the logits float32 there too)
        before = geometric_precedence(T, x.device)
        none_before = (log_miss[:, :, :, None, :] * before).sum(-1)
        return (log_p + none_before).exp()

    def forward(self, x, padding_mask):
        B, T, _ = x.shape
        v = self.kv(x).view(B, T, self.h, 2, self.dh)[:, :, :, 1]
        att = self.weights(x, padding_mask)
        return self.o(torch.einsum("bhij,bjhd->bihd", att, v).reshape(B, T, -1))


class _SharedLayerClassifier(_Classifier):
    """The authors' ``TransformerClassifierModel`` (models/transformer_classifier.py,
    models/transformer_encoder.py:78-117) around one shared layer: a start token in
    front of the input (fairseq's ``<s>`` row; the end token is in the data already), no
    positional encoding added to the embeddings (``pos_embeddig`` is the identity,
    tasks/simple/transformer_classifier_mixin.py:37,47), no dropout on the embeddings
    nor before the classifier, the layer applied ``layers`` times in training and
    ``test_layers`` times (default: as in training) in evaluation
    (layers/transformer/rnn_columns.py:19-24), the start token's column classified
    (``result_column`` first) by a linear layer with PyTorch's init (its xavier init in
    transformer_classifier.py:50 compares the module with a string and never runs)."""

    dropout_on_embeddings = False
    dropout_before_classifier = False

    def __init__(self, cfg, task, d_model: int):
        super().__init__(cfg, task, d_model)
        self.start = task.source_dictionary.bos()

    def output_dim(self) -> int:
        return self.cfg.d_model

    def n_layers(self) -> int:
        test = getattr(self.cfg, "test_layers", None)
        return self.cfg.layers if self.training or not test else test

    def layer(self, x, padding_mask):
        raise NotImplementedError

    def features(self, src_tokens, src_lengths=None):
        start = src_tokens.new_full((src_tokens.shape[0], 1), self.start)
        return super().features(torch.cat([start, src_tokens], 1), src_lengths)

    def represent(self, x, padding_mask):
        for _ in range(self.n_layers()):      # one layer, shared across the steps
            x = self.layer(x, padding_mask)
        return x[:, 0]                        # the start token's column


# ----------------------------------------------------------------------------- Transformer
@dataclass
class SharedTransformerConfig(FairseqDataclass):
    # sweeps/fit_parallel_branches_ababab_many_trafo.yaml: state_size 128, n_heads 4,
    # encoder_n_layers 8, ff_multiplier 2, dropout 0.1, attention_dropout 0.1
    d_model: int = field(default=128, metadata={"help": "model size"})
    heads: int = field(default=4, metadata={"help": "attention heads"})
    ff: int = field(default=256, metadata={"help": "feed-forward size"})
    layers: int = field(default=8, metadata={"help": "applications of the shared layer"})
    test_layers: Optional[int] = field(default=None, metadata={
        "help": "applications of the shared layer in evaluation (default: --layers)"})
    dropout: float = field(default=0.1, metadata={
        "help": "dropout on the attention output, the feed-forward hidden layer and output"})
    attention_dropout: float = field(default=0.1, metadata={
        "help": "dropout on the attention's keys and relative-position keys"})


@register_model("ctlpp_transformer", dataclass=SharedTransformerConfig)
class CTLPPTransformer(_SharedLayerClassifier):
    """The authors' ``relative_universal`` classifier: embeddings from kaiming_normal_
    (N(0, 2/d), sweep ``embedding_init: kaiming``), then one post-norm layer
    (layers/transformer/relative_transformer.py:28-41):
    x = LN(x + drop(Att(x)));  x = LN(x + drop(W_2 drop(ReLU(W_1 x))))
    with W_1 from xavier_normal_ (gain sqrt(2)) and W_2 from xavier_uniform_."""

    embedding_std = staticmethod(lambda d: math.sqrt(2.0 / d))   # kaiming_normal_, fan_in d

    def __init__(self, cfg, task):
        super().__init__(cfg, task, cfg.d_model)
        d = cfg.d_model
        self.att = RelativeMultiheadAttention(d, cfg.heads, getattr(cfg, "attention_dropout", 0.0))
        self.ff1, self.ff2 = nn.Linear(d, cfg.ff), nn.Linear(cfg.ff, d)
        nn.init.xavier_normal_(self.ff1.weight, gain=nn.init.calculate_gain("relu"))
        nn.init.xavier_uniform_(self.ff2.weight)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def layer(self, x, padding_mask):
        x = self.ln1(x + self.dropout(self.att(x, padding_mask)))
        return self.ln2(x + self.dropout(self.ff2(self.dropout(F.relu(self.ff1(x))))))


# ----------------------------------------------------------------------------- NDR
@dataclass
class NDRConfig(FairseqDataclass):
    # sweeps/fit_parallel_branches_ababab_many_ndr.yaml: state_size 256, n_heads 4,
    # encoder_n_layers 8, universal.n_test_layers 10, ff_multiplier 2, dropout 0.5,
    # attention_dropout 0.1, ndr.drop_gate 0.1
    d_model: int = field(default=256, metadata={"help": "model size"})
    heads: int = field(default=4, metadata={"help": "attention heads"})
    ff: int = field(default=512, metadata={"help": "feed-forward size"})
    layers: int = field(default=8, metadata={"help": "applications of the shared layer"})
    test_layers: Optional[int] = field(default=10, metadata={
        "help": "applications of the shared layer in evaluation (unset: --layers)"})
    dropout: float = field(default=0.5, metadata={"help": "dropout on the attention output"})
    attention_dropout: float = field(default=0.1, metadata={
        "help": "dropout on the attention's keys"})
    gate_dropout: float = field(default=0.1, metadata={
        "help": "in training, the probability that a column's copy gate is closed (the "
                "column copied through the layer unchanged)"})


@register_model("ctlpp_ndr", dataclass=NDRConfig)
class CTLPPNDR(_SharedLayerClassifier):
    """The authors' ``NDRResidualCoreInitGelu`` layer
    (layers/transformer/ndr_experimental.py:40-61), applied ``layers`` times:
    u = LN(h + drop(Att_geo(h)));  û = LN(W_2 GELU(W_1 u) + u);
    g = sigmoid(W_g2 GELU(W_g1 u)), its bias from -3 (start by copying);
    in training, each column's g is set to 0 with probability ``gate_dropout``;
    h' = g * û + (1 - g) * h.
    Embeddings keep PyTorch's N(0, 1) (``embedding_init`` auto: "pytorch");
    W_1 and W_g1 from xavier_uniform_ with gain sqrt(2), W_2 and W_g2 with gain 1."""

    def __init__(self, cfg, task):
        super().__init__(cfg, task, cfg.d_model)
        d = cfg.d_model
        self.att = GeometricAttention(d, cfg.heads, getattr(cfg, "attention_dropout", 0.0))
        self.ln_att, self.ln_ff = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, cfg.ff), nn.Linear(cfg.ff, d)
        self.gate1, self.gate2 = nn.Linear(d, d), nn.Linear(d, d)
        relu_gain = nn.init.calculate_gain("relu")
        nn.init.xavier_uniform_(self.ff1.weight, gain=relu_gain)
        nn.init.xavier_uniform_(self.ff2.weight)
        nn.init.xavier_uniform_(self.gate1.weight, gain=relu_gain)
        nn.init.xavier_uniform_(self.gate2.weight)     # calculate_gain("sigmoid") is 1
        nn.init.constant_(self.gate2.bias, -3.0)

    def layer(self, h, padding_mask):
        return self.gated_layer(h, padding_mask)[0]

    def gated_layer(self, h, padding_mask):
        """One step: the new states and the copy gate's values."""
        u = self.ln_att(h + self.dropout(self.att(h, padding_mask)))
        update = self.ln_ff(self.ff2(F.gelu(self.ff1(u))) + u)
        g = torch.sigmoid(self.gate2(F.gelu(self.gate1(u))))
        if self.training and self.cfg.gate_dropout > 0:
            closed = torch.rand(*g.shape[:-1], 1, device=g.device) < self.cfg.gate_dropout
            g = g.masked_fill(closed, 0.0)
        return g * update + (1 - g) * h, g
