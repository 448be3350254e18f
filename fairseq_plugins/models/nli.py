"""NLI models for ``--task sentence_pair_classification`` (Nie, Wang and Bansal 2019,
section 2.1), at their papers' sizes:

* ``nli_esim``: ESIM (Chen et al. 2017): BiLSTM encoder (300 per direction), soft
  alignment between the encoded premise and hypothesis, enhancement [a; ã; a−ã; a⊙ã],
  a ReLU projection to 300, composition BiLSTM (300), average and max pooling, a tanh
  MLP of 300; dropout 0.5 on the embeddings, on the projection's output and around the
  MLP's hidden layer, where their code (lukecq1231/nli, ``scripts/ESIM/main.py``) puts
  it.  ``--original-init``, ``--bos-eos`` and ``--unscaled-dropout`` give that code's
  initialisation, its ``_BOS_``/``_EOS_`` words around each sentence and its dropout
  (the mask without rescaling in training, × (1 − p) at evaluation); the paper profile
  sets all three.
* ``nli_dam``: the decomposable attention model (Parikh et al. 2016, without
  intra-sentence attention): embeddings projected to 200, two-layer ReLU feed-forward
  nets F (attend), G (compare), H (aggregate) of 200, the compared vectors summed;
  dropout 0.2.  It has no recurrent layer: it is a bag-of-words model already (the
  paper's Table 1), so it has no ``--bow`` variant.  No code of Parikh et al. was
  released; ``--unit-norm-embeddings``, ``--null-token`` and ``--original-init`` give
  the settings of the replication harvardnlp/decomp-attn (GloVe rows scaled to length
  1, a sentence-initial ``<s>`` every word can align to, weights from N(0, 0.01²)); the
  paper profile sets them, with the word vectors frozen and ``--optimizer adagrad_acc``
  (``fairseq_plugins/optim/``: Adagrad whose accumulators start at 0.1, as there).
* ``nli_rse``: the residual-connected sentence encoder (Nie and Bansal 2017, section 6;
  their code easonnie/ResEncoder, ``model/res_encoder.py``): three stacked BiLSTMs (600
  per direction each); layer 1 reads the word embedding, every later layer the
  embedding concatenated with the *sum* of the earlier layers' outputs (so those layers
  must be equally wide); max pooling over time, features [u; v; |u−v|; u⊙v], an MLP
  with one ReLU hidden layer of 800 followed by dropout 0.1 (none before it).
  ``--max-train-len`` cuts training sentences to their first N words (their 60).

``--bow`` (or the architectures ``nli_esim_bow``, ``nli_rse_bow``): every BiLSTM replaced
by a position-wise fully connected layer (Linear + ReLU) of the same output width
(2 × hidden), as in the paper's Table 3 "BoW" rows: nothing then depends on word order.

Every model takes ``premise_tokens``/``premise_lengths``/``hypothesis_tokens``/
``hypothesis_lengths`` (right-padded) and returns class logits; padding is masked in the
attention softmaxes and the poolings, and the BiLSTMs read packed sequences, so an
example's logits do not depend on how far its batch pads it.  ``features`` gives the
vector below the classifier.  The word embedding is ``model.embed`` (the task fills it
from ``--embedding-path``); unknown words start from N(0, 1).
"""

from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.dataclass import FairseqDataclass
from fairseq.models import BaseFairseqModel, register_model

from ..packing import packed_lstm, packed_lstm_states


# ----------------------------------------------------------------------------- masking
def masked_softmax(scores: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis with padded keys (``key_mask`` False) given weight 0.
    ``key_mask`` broadcasts against ``scores`` ([B, 1, Lk] for [B, Lq, Lk])."""
    scores = scores.masked_fill(~key_mask, torch.finfo(scores.dtype).min)
    return scores.softmax(-1) * key_mask


def masked_max(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """[B, T, d], [B, T] -> the maximum over real positions, [B, d]."""
    return x.masked_fill(~mask[..., None], torch.finfo(x.dtype).min).max(1).values


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask[..., None].to(x.dtype)
    return (x * m).sum(1) / m.sum(1).clamp(min=1)


def masked_sum(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask[..., None].to(x.dtype)).sum(1)


def need(kwargs: dict, names, model: str) -> list:
    """The pair inputs ``names`` from a forward's keyword arguments, or a ValueError
    saying which ``--pair-inputs`` the model needs."""
    missing = [n for n in names if kwargs.get(n) is None]
    if missing:
        kinds = sorted({n.split("_", 1)[1] for n in missing})
        raise ValueError(f"{model} needs the task option --pair-inputs {','.join(kinds)} "
                         f"(missing from the batch: {', '.join(missing)})")
    return [kwargs[n] for n in names]


def init_like_theano(module: nn.Module, std: float = 0.01) -> None:
    """ESIM's original initialisation (lukecq1231/nli, ``scripts/ESIM/main.py``:
    ``norm_weight``, ``ortho_weight``, ``param_init_lstm``, ``param_init_fflayer``):
    each gate's input weights orthogonal when square, else N(0, ``std``²); recurrent
    weights orthogonal per gate; feed-forward weights N(0, ``std``²); every bias 0.
    The word embedding (``module.embed``) starts from N(0, ``std``²) (GloVe rows are
    copied over it when the model is built for training)."""
    with torch.no_grad():
        for mod in module.modules():
            if isinstance(mod, nn.LSTM):
                for name, w in mod.named_parameters():
                    if name.startswith("bias"):
                        w.zero_()
                        continue
                    for gate in w.chunk(4, 0):           # PyTorch's gate blocks i, f, g, o
                        if gate.size(0) == gate.size(1):
                            nn.init.orthogonal_(gate)
                        else:
                            gate.normal_(0.0, std)
            elif isinstance(mod, nn.Linear):
                mod.weight.normal_(0.0, std)
                if mod.bias is not None:
                    mod.bias.zero_()
        embed = getattr(module, "embed", None)
        if embed is not None:
            embed.weight.normal_(0.0, std)
            if embed.padding_idx is not None:
                embed.weight[embed.padding_idx].zero_()


def wrap_bos_eos(tokens: torch.Tensor, pad: int, bos: int, eos: int) -> torch.Tensor:
    """Right-padded [B, T] -> [B, T + 2]: each row's words between ``bos`` and ``eos``
    (the ``_BOS_`` / ``_EOS_`` words ESIM's code puts around every sentence), padding
    after them."""
    B, T = tokens.shape
    lengths = tokens.ne(pad).sum(1)
    out = tokens.new_full((B, T + 2), pad)
    out[:, 0] = bos
    out[:, 1:T + 1] = tokens
    out[torch.arange(B, device=tokens.device), lengths + 1] = eos
    return out


class SequenceLayer(nn.Module):
    """A BiLSTM with ``hidden`` units per direction over packed sequences, or (``bow``)
    its bag-of-words stand-in: a position-wise Linear + ReLU to the same width,
    2 × ``hidden``.  Padding positions come out as zeros."""

    def __init__(self, d_in: int, hidden: int, bow: bool):
        super().__init__()
        self.bow = bow
        if bow:
            self.ff = nn.Linear(d_in, 2 * hidden)
        else:
            self.lstm = nn.LSTM(d_in, hidden, batch_first=True, bidirectional=True)

    def forward(self, x, mask):
        if self.bow:
            return F.relu(self.ff(x)) * mask[..., None].to(x.dtype)
        return packed_lstm(self.lstm, x, mask.sum(1))


def soft_align(a, b, a_mask, b_mask):
    """Co-attention: e_ij = a_i · b_j; each a_i's summary of b (softmax over the real
    j) and each b_j's summary of a (softmax over the real i).  Returns (ã [B, La, d],
    b̃ [B, Lb, d], weights of a over b [B, La, Lb], weights of b over a [B, Lb, La])."""
    e = torch.bmm(a, b.transpose(1, 2))                          # [B, La, Lb]
    w_ab = masked_softmax(e, b_mask[:, None, :])
    w_ba = masked_softmax(e.transpose(1, 2), a_mask[:, None, :])
    return torch.bmm(w_ab, b), torch.bmm(w_ba, a), w_ab, w_ba


# ----------------------------------------------------------------------------- base
class PairClassifier(BaseFairseqModel):
    """Word embedding (``embed``) -> the pair's features (subclass) -> class logits."""

    def __init__(self, cfg, task):
        super().__init__()
        self.cfg = cfg
        self.pad = task.source_dictionary.pad()
        self.num_classes = task.num_classes
        self.embed = nn.Embedding(len(task.source_dictionary), cfg.embed_dim,
                                  padding_idx=self.pad)
        nn.init.normal_(self.embed.weight, std=1.0)
        with torch.no_grad():
            self.embed.weight[self.pad].zero_()
        if cfg.freeze_embeddings:
            self.embed.weight.requires_grad_(False)

    @classmethod
    def build_model(cls, cfg, task):
        return cls(cfg, task)

    def features(self, premise_tokens, premise_lengths, hypothesis_tokens,
                 hypothesis_lengths=None, **kwargs):
        """The vector below the classifier, [B, d]."""
        raise NotImplementedError

    def classify(self, features):
        raise NotImplementedError

    def forward(self, premise_tokens, premise_lengths, hypothesis_tokens, hypothesis_lengths,
                **kwargs):
        return self.classify(self.features(premise_tokens, premise_lengths,
                                           hypothesis_tokens, hypothesis_lengths, **kwargs))

    def tanh_mlp(self, v):
        """ESIM's classifier (also DR-BiLSTM's and S-TLSTM's): dropout, Linear + tanh
        (``self.hidden``), dropout, Linear to the classes (``self.out``)."""
        return self.out(self.drop(torch.tanh(self.hidden(self.drop(v)))))

    def max_positions(self):
        return None


# ----------------------------------------------------------------------------- ESIM
@dataclass
class ESIMConfig(FairseqDataclass):
    embed_dim: int = field(default=300, metadata={"help": "word embedding size (GloVe: 300)"})
    hidden_size: int = field(default=300, metadata={
        "help": "units per direction of both BiLSTMs; also the projection before the "
                "composition BiLSTM"})
    mlp_dim: int = field(default=300, metadata={"help": "the tanh MLP's hidden layer"})
    dropout: float = field(default=0.5, metadata={"help": "dropout"})
    bow: bool = field(default=False, metadata={
        "help": "replace both BiLSTMs by position-wise feed-forward layers (Table 3 BoW)"})
    freeze_embeddings: bool = field(default=False, metadata={"help": "do not train the "
                                                              "word embeddings"})
    original_init: bool = field(default=False, metadata={
        "help": "initialise as ESIM's code: orthogonal recurrent (and square input) "
                "weights, N(0, 0.01^2) otherwise, biases 0, word vectors outside GloVe "
                "N(0, 0.01^2)"})
    bos_eos: bool = field(default=False, metadata={
        "help": "read each sentence between <s> and </s>, as ESIM's code reads it between "
                "_BOS_ and _EOS_"})
    unscaled_dropout: bool = field(default=False, metadata={
        "help": "dropout as ESIM's code: training x times the 0/1 mask, evaluation x "
                "times 1 - p (not PyTorch's x / (1 - p) in training)"})


class UnscaledDropout(nn.Module):
    """Dropout as Chen et al.'s Theano code has it (lukecq1231/nli,
    scripts/TreeLSTM_IM/main.py, ``dropout_layer``): in training x times a 0/1 mask
    kept with probability 1 − p; at evaluation x times 1 − p.  In expectation the same as
    PyTorch's inverted dropout, but every layer after it sees its input scaled by 1 − p
    (0.5 for S-TLSTM), which changes what the initial weights and the learning rate mean."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x):
        if self.p <= 0.0:
            return x
        if not self.training:
            return x * (1.0 - self.p)
        return F.dropout(x, self.p, training=True) * (1.0 - self.p)


@register_model("nli_esim", dataclass=ESIMConfig)
class ESIM(PairClassifier):
    def __init__(self, cfg, task):
        super().__init__(cfg, task)
        h = cfg.hidden_size
        self.drop = nn.Dropout(cfg.dropout)
        self.encoder = SequenceLayer(cfg.embed_dim, h, cfg.bow)
        self.project = nn.Linear(4 * 2 * h, h)          # enhancement -> composition input
        self.composition = SequenceLayer(h, h, cfg.bow)
        self.hidden = nn.Linear(4 * 2 * h, cfg.mlp_dim)  # [avg; max] of both sentences
        self.out = nn.Linear(cfg.mlp_dim, self.num_classes)
        if getattr(cfg, "unscaled_dropout", False):
            self.drop = UnscaledDropout(cfg.dropout)
        d = task.source_dictionary
        self.bos_eos = (d.bos(), d.eos()) if getattr(cfg, "bos_eos", False) else None
        if getattr(cfg, "original_init", False):
            init_like_theano(self)

    def encode(self, tokens, mask):
        return self.encoder(self.drop(self.embed(tokens)), mask)

    def align(self, a, b, a_mask, b_mask):
        return soft_align(a, b, a_mask, b_mask)

    def compose(self, x, x_aligned, mask):
        """Enhancement, the ReLU projection, then dropout on its output (their code drops
        the projected vectors, not the 8h-wide enhancement), the composition layer and
        average and max pooling."""
        m = torch.cat([x, x_aligned, x - x_aligned, x * x_aligned], -1)
        v = self.composition(self.drop(F.relu(self.project(m))), mask)
        return torch.cat([masked_mean(v, mask), masked_max(v, mask)], -1)

    def features(self, premise_tokens, premise_lengths, hypothesis_tokens,
                 hypothesis_lengths=None, **kwargs):
        if self.bos_eos is not None:
            premise_tokens = wrap_bos_eos(premise_tokens, self.pad, *self.bos_eos)
            hypothesis_tokens = wrap_bos_eos(hypothesis_tokens, self.pad, *self.bos_eos)
        pm, hm = premise_tokens.ne(self.pad), hypothesis_tokens.ne(self.pad)
        a, b = self.encode(premise_tokens, pm), self.encode(hypothesis_tokens, hm)
        a_al, b_al, _, _ = self.align(a, b, pm, hm)
        return torch.cat([self.compose(a, a_al, pm), self.compose(b, b_al, hm)], -1)

    classify = PairClassifier.tanh_mlp


@dataclass
class ESIMBoWConfig(ESIMConfig):
    bow: bool = field(default=True, metadata={"help": "feed-forward layers for the BiLSTMs"})


@register_model("nli_esim_bow", dataclass=ESIMBoWConfig)
class ESIMBoW(ESIM):
    """ESIM with its BiLSTMs replaced by feed-forward layers (Table 3's ESIM BoW)."""


# ----------------------------------------------------------------------------- DAM
@dataclass
class DAMConfig(FairseqDataclass):
    embed_dim: int = field(default=300, metadata={"help": "word embedding size (GloVe: 300)"})
    proj_dim: int = field(default=200, metadata={"help": "the embeddings' projection"})
    ff_dim: int = field(default=200, metadata={"help": "width of F, G and H (two layers each)"})
    dropout: float = field(default=0.2, metadata={"help": "dropout before every layer of "
                                                           "F, G and H"})
    freeze_embeddings: bool = field(default=False, metadata={
        "help": "do not train the word embeddings (Parikh et al. kept GloVe fixed)"})
    unit_norm_embeddings: bool = field(default=False, metadata={
        "help": "scale every word vector to length 1 before the projection (the "
                "replication harvardnlp/decomp-attn normalises its GloVe rows)"})
    null_token: bool = field(default=False, metadata={
        "help": "put <s> before each sentence, a position every word can align to (the "
                "replication's BOS word)"})
    original_init: bool = field(default=False, metadata={
        "help": "every weight and bias from N(0, 0.01^2), as the replication"})


def _two_layer(d_in: int, d: int, dropout: float) -> nn.Sequential:
    return nn.Sequential(nn.Dropout(dropout), nn.Linear(d_in, d), nn.ReLU(),
                         nn.Dropout(dropout), nn.Linear(d, d), nn.ReLU())


@register_model("nli_dam", dataclass=DAMConfig)
class DecomposableAttention(PairClassifier):
    def __init__(self, cfg, task):
        super().__init__(cfg, task)
        d = cfg.ff_dim
        self.project = nn.Linear(cfg.embed_dim, cfg.proj_dim, bias=False)
        self.F = _two_layer(cfg.proj_dim, d, cfg.dropout)        # attend
        self.G = _two_layer(2 * cfg.proj_dim, d, cfg.dropout)    # compare
        self.H = _two_layer(2 * d, d, cfg.dropout)               # aggregate
        self.out = nn.Linear(d, self.num_classes)
        self.unit_norm = getattr(cfg, "unit_norm_embeddings", False)
        self.null = task.source_dictionary.bos() if getattr(cfg, "null_token", False) else None
        if getattr(cfg, "original_init", False):
            with torch.no_grad():
                for name, w in self.named_parameters():
                    if not name.startswith("embed."):
                        w.normal_(0.0, 0.01)

    def embed_projected(self, tokens):
        x = self.embed(tokens)
        if self.unit_norm:
            x = F.normalize(x, dim=-1)
        return self.project(x)

    def attend(self, a, b, a_mask, b_mask):
        """e_ij = F(a_i) · F(b_j); returns (β: each a_i's soft-aligned b, α: each b_j's
        soft-aligned a, the weights of a over b, of b over a)."""
        fa, fb = self.F(a), self.F(b)
        e = torch.bmm(fa, fb.transpose(1, 2))
        w_ab = masked_softmax(e, b_mask[:, None, :])
        w_ba = masked_softmax(e.transpose(1, 2), a_mask[:, None, :])
        return torch.bmm(w_ab, b), torch.bmm(w_ba, a), w_ab, w_ba

    def features(self, premise_tokens, premise_lengths, hypothesis_tokens,
                 hypothesis_lengths=None, **kwargs):
        if self.null is not None:
            premise_tokens = F.pad(premise_tokens, (1, 0), value=self.null)
            hypothesis_tokens = F.pad(hypothesis_tokens, (1, 0), value=self.null)
        pm, hm = premise_tokens.ne(self.pad), hypothesis_tokens.ne(self.pad)
        a, b = self.embed_projected(premise_tokens), self.embed_projected(hypothesis_tokens)
        beta, alpha, _, _ = self.attend(a, b, pm, hm)
        v1 = masked_sum(self.G(torch.cat([a, beta], -1)), pm)
        v2 = masked_sum(self.G(torch.cat([b, alpha], -1)), hm)
        return torch.cat([v1, v2], -1)

    def classify(self, v):
        return self.out(self.H(v))


# ----------------------------------------------------------------------------- RSE
@dataclass
class RSEConfig(FairseqDataclass):
    embed_dim: int = field(default=300, metadata={"help": "word embedding size (GloVe: 300)"})
    hidden_sizes: str = field(default="600,600,600", metadata={
        "help": "units per direction of each stacked BiLSTM, comma-separated"})
    mlp_dim: int = field(default=800, metadata={"help": "the MLP's hidden layer"})
    dropout: float = field(default=0.1, metadata={"help": "dropout after the MLP's hidden "
                                                           "layer"})
    bow: bool = field(default=False, metadata={
        "help": "replace the BiLSTMs by position-wise feed-forward layers (Table 3 BoW)"})
    freeze_embeddings: bool = field(default=False, metadata={"help": "do not train the "
                                                              "word embeddings"})
    max_train_len: int = field(default=0, metadata={
        "help": "in training, read only each sentence's first N words (0: all; their "
                "code: 60)"})


@register_model("nli_rse", dataclass=RSEConfig)
class ResidualSentenceEncoder(PairClassifier):
    """Layer 1 reads the embedding; layer k > 1 reads [embedding; out_1 + ... + out_(k-1)]
    (easonnie/ResEncoder, ``model/res_encoder.py``: ``lstm_1`` reads [e; out_1],
    ``lstm_2`` [e; out_1 + out_2]), so all layers but the last must be equally wide."""

    def __init__(self, cfg, task):
        super().__init__(cfg, task)
        sizes = [int(s) for s in str(cfg.hidden_sizes).split(",") if s.strip()]
        if not sizes:
            raise ValueError("--hidden-sizes: at least one layer")
        if len(set(sizes[:-1])) > 1:
            raise ValueError(f"--hidden-sizes {cfg.hidden_sizes}: the residual sum needs the "
                             "layers before the last equally wide")
        layers = [SequenceLayer(cfg.embed_dim if k == 0 else cfg.embed_dim + 2 * sizes[0],
                                h, cfg.bow) for k, h in enumerate(sizes)]
        self.layers = nn.ModuleList(layers)
        d = 2 * sizes[-1]
        self.drop = nn.Dropout(cfg.dropout)
        self.hidden = nn.Linear(4 * d, cfg.mlp_dim)
        self.out = nn.Linear(cfg.mlp_dim, self.num_classes)
        self.max_train_len = getattr(cfg, "max_train_len", 0)

    def encode(self, tokens, mask):
        """The sentence vector: max over time of the last layer, [B, 2 × hidden]."""
        if self.training and self.max_train_len > 0 and tokens.size(1) > self.max_train_len:
            tokens, mask = tokens[:, :self.max_train_len], mask[:, :self.max_train_len]
        e = self.embed(tokens)
        total = None                       # the sum of the earlier layers' outputs
        for k, layer in enumerate(self.layers):
            out = layer(e if total is None else torch.cat([e, total], -1), mask)
            if k < len(self.layers) - 1:
                total = out if total is None else total + out
        return masked_max(out, mask)

    def features(self, premise_tokens, premise_lengths, hypothesis_tokens,
                 hypothesis_lengths=None, **kwargs):
        u = self.encode(premise_tokens, premise_tokens.ne(self.pad))
        v = self.encode(hypothesis_tokens, hypothesis_tokens.ne(self.pad))
        return torch.cat([u, v, (u - v).abs(), u * v], -1)

    def classify(self, v):
        """Linear + ReLU, dropout, Linear (their ``classifier``: no dropout on the
        features themselves)."""
        return self.out(self.drop(F.relu(self.hidden(v))))


@dataclass
class RSEBoWConfig(RSEConfig):
    bow: bool = field(default=True, metadata={"help": "feed-forward layers for the BiLSTMs"})


@register_model("nli_rse_bow", dataclass=RSEBoWConfig)
class ResidualSentenceEncoderBoW(ResidualSentenceEncoder):
    """RSE with its BiLSTMs replaced by feed-forward layers (Table 3's RSE BoW)."""


# ----------------------------------------------------------------------------- DR-BiLSTM
class DependentReader(nn.Module):
    """Ghaeini et al. (2018)'s dependent reading with one BiLSTM (``hidden`` per
    direction): each sentence is read once from a zero state (its *independent* reading,
    whose final (h, c) is kept) and once starting from the other sentence's final
    independent state (its *dependent* reading).  ``bow``: a position-wise Linear + ReLU
    instead (Nie et al.'s Table 3 BoW), which has no state to pass on, so both readings
    are the same."""

    def __init__(self, d_in: int, hidden: int, bow: bool):
        super().__init__()
        self.bow = bow
        if bow:
            self.ff = nn.Linear(d_in, 2 * hidden)
        else:
            self.lstm = nn.LSTM(d_in, hidden, batch_first=True, bidirectional=True)

    def forward(self, a, b, a_mask, b_mask):
        """((a independent, a dependent), (b independent, b dependent)), each [B, L, 2h]
        with zeros at padding."""
        if self.bow:
            fa = F.relu(self.ff(a)) * a_mask[..., None].to(a.dtype)
            fb = F.relu(self.ff(b)) * b_mask[..., None].to(b.dtype)
            return (fa, fa), (fb, fb)
        la, lb = a_mask.sum(1), b_mask.sum(1)
        a_ind, s_a = packed_lstm_states(self.lstm, a, la)
        b_ind, s_b = packed_lstm_states(self.lstm, b, lb)
        a_dep, _ = packed_lstm_states(self.lstm, a, la, s_b)
        b_dep, _ = packed_lstm_states(self.lstm, b, lb, s_a)
        return (a_ind, a_dep), (b_ind, b_dep)


@dataclass
class DRBiLSTMConfig(FairseqDataclass):
    embed_dim: int = field(default=300, metadata={"help": "word embedding size (GloVe: 300)"})
    hidden_size: int = field(default=450, metadata={
        "help": "d: units per direction of both BiLSTMs, the projection and the MLP"})
    mlp_dim: int = field(default=450, metadata={
        "help": "the tanh MLP's hidden layer (not stated by Ghaeini et al.; d, as ESIM)"})
    dropout: float = field(default=0.4, metadata={"help": "dropout on every feed-forward "
                                                           "connection"})
    bow: bool = field(default=False, metadata={
        "help": "replace both BiLSTMs by position-wise feed-forward layers (Table 3 BoW)"})
    freeze_embeddings: bool = field(default=False, metadata={"help": "do not train the "
                                                              "word embeddings"})


@register_model("nli_drbilstm", dataclass=DRBiLSTMConfig)
class DRBiLSTM(PairClassifier):
    """DR-BiLSTM (Ghaeini et al. 2018, "DR-BiLSTM: Dependent Reading Bidirectional LSTM
    for Natural Language Inference", NAACL; sections 3.1-3.4 and 4.2): ESIM whose two
    BiLSTMs read each sentence *dependent* on the other (:class:`DependentReader`).

    Input encoding (eqs. 1-2): only the dependent readings û, v̂ go on (the paper: pooling
    the independent and dependent readings "does not further improve").  Attention and
    enhancement as ESIM (eqs. 3-6) on û, v̂; a ReLU projection 8d -> d (eq. 7).
    Inference (eqs. 8-13): dependent reading of the projected sequences, the independent
    and dependent readings merged by an element-wise maximum at each position, then max
    and average pooling over time (4d per sentence); an MLP with one tanh hidden layer
    (eq. 14).  d = 450, dropout 0.4 on every feed-forward connection, Adam 4e-4, batch
    32, GloVe 840B updated (section 4.2).  Not stated by the paper and ours: one BiLSTM
    shared by the four readings of each layer (Figure 1's colours say parameters are
    shared; which cannot be read from the text), the MLP width (d, as ESIM), and the
    training schedule.  The paper gives no parameter count; ours is in
    ``fairseq_plugins/doc.md``."""

    def __init__(self, cfg, task):
        super().__init__(cfg, task)
        d = cfg.hidden_size
        self.drop = nn.Dropout(cfg.dropout)
        self.encoder = DependentReader(cfg.embed_dim, d, cfg.bow)
        self.project = nn.Linear(8 * d, d)
        self.inference = DependentReader(d, d, cfg.bow)
        self.hidden = nn.Linear(8 * d, cfg.mlp_dim)              # [U; V], 4d each
        self.out = nn.Linear(cfg.mlp_dim, self.num_classes)

    def features(self, premise_tokens, premise_lengths, hypothesis_tokens,
                 hypothesis_lengths=None, **kwargs):
        pm, hm = premise_tokens.ne(self.pad), hypothesis_tokens.ne(self.pad)
        u, v = self.drop(self.embed(premise_tokens)), self.drop(self.embed(hypothesis_tokens))
        (_, u_hat), (_, v_hat) = self.encoder(u, v, pm, hm)
        u_al, v_al, _, _ = soft_align(u_hat, v_hat, pm, hm)
        p = F.relu(self.project(self.drop(torch.cat(
            [u_hat, u_al, u_hat - u_al, u_hat * u_al], -1))))
        q = F.relu(self.project(self.drop(torch.cat(
            [v_hat, v_al, v_hat - v_al, v_hat * v_al], -1))))
        (p_bar, p_hat), (q_bar, q_hat) = self.inference(p, q, pm, hm)
        p_t, q_t = torch.maximum(p_bar, p_hat), torch.maximum(q_bar, q_hat)
        return torch.cat([masked_max(p_t, pm), masked_mean(p_t, pm),
                          masked_max(q_t, hm), masked_mean(q_t, hm)], -1)

    classify = PairClassifier.tanh_mlp


@dataclass
class DRBiLSTMBoWConfig(DRBiLSTMConfig):
    bow: bool = field(default=True, metadata={"help": "feed-forward layers for the BiLSTMs"})


@register_model("nli_drbilstm_bow", dataclass=DRBiLSTMBoWConfig)
class DRBiLSTMBoW(DRBiLSTM):
    """DR-BiLSTM with its BiLSTMs replaced by feed-forward layers (Table 3's DR-BiLSTM
    BoW): without a recurrent state, the dependent reading is the independent one."""
