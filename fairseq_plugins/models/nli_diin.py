"""``nli_diin``: the Densely Interactive Inference Network (Gong, Luo and Zhang 2018,
"Natural Language Inference over Interaction Space", ICLR; Nie, Wang and Bansal 2019,
section 2.1, used the authors' code) for ``--task sentence_pair_classification`` with
``--pair-inputs pos,chars``, at its paper's size.

Sources: [code] = the authors' TensorFlow code, github YichenGong/
Densely-Interactive-Inference-Network (commit cb2c23b): ``python/models/DIIN.py``,
``python/my/tensorflow/nn.py``, ``python/util/parameters.py`` (defaults, the ones the
README's SNLI command ``train_mnli.py DIIN demo_testing_SNLI
--training_completely_on_snli`` runs with), ``python/util/data_processing.py``,
``python/train_mnli.py``.  [repro] = the ICLR 2018 reproducibility report's code
(github YerevaNN/DIIN-in-Keras ``train.py``), which took its optimiser settings from
the paper.  [board] = the SNLI leaderboard's DIIN rows, "448D Densely Interactive
Inference Network (DIIN, code)" (448 = the embedding width below).

Architecture (each sentence padded or cut to a fixed ``--fixed-len`` words first):

1. Embedding, 448 wide: word embedding 300 (GloVe 840B, trained, OOV N(0, 1): [code]
   ``loadEmbedding_rand``, ``--emb_train`` on) ⊕ character feature 100 (char embedding 8,
   16 chars per word, one Conv1d of 100 filters, kernel 5, "VALID", ReLU, max over
   positions: [code] ``char_emb_size 8``, ``char_in_word_size 16``,
   ``out_channel_dims 100``, ``filter_heights 5``, ``multi_conv1d``) ⊕ POS one-hot (47
   in [code]: 46 Penn tags + PAD; here the width of the POS dictionary) ⊕ exact match
   (1 binary feature: the word occurs in the other sentence).  Dropout on the word
   embedding and on the char CNN's input.
2. Highway network, 2 layers, ReLU transform, sigmoid gate, no dropout, shared by the
   two sentences ([code] ``highway_num_layers 2``, ``highway_network``).
3. Self-attention encoding, 1 layer ([code] ``self_att_enc_layers 1``): tri-linear
   scores w·[x_i; x_j; x_i⊙x_j] (padded keys masked), attended x̂_i, then the
   two-gate fuse gate z = tanh(W1 x + U1 x̂), r = σ(W2 x + U2 x̂), f = σ(W3 x + U3 x̂),
   out = r⊙x + f⊙z ([code] ``two_gate_fuse_gate`` on, ``fuse_gate``; every W/U a
   448×448 Linear with bias and its own input dropout).  Premise and hypothesis have
   separate encoders ([code] ``wo_enc_sharing`` on); ``--share-encoder`` shares them.
4. Interaction tensor I_ij = p_i ⊙ h_j, [L, L, 448] ([code] ``bi_attention_mx``; no
   mask there: padded rows and columns are in it), dropout.
5. Feature extraction ([code] ``dense_net``): 1×1 conv to ⌊448 η⌋ = 134 channels,
   η = 0.3, no activation ([code] ``dense_net_first_scale_down_ratio 0.3``,
   ``first_scale_down_kernel 1``); then 3 × (dense block of n = 8 layers, each a 3×3
   conv of growth rate 20 + ReLU whose output is concatenated to its input; transition:
   1×1 conv to ⌊C θ⌋ channels, θ = 0.5, no activation, 2×2 max pooling stride 2)
   ([code] ``dense_net_layers 8``, ``dense_net_growth_rate 20``,
   ``dense_net_kernel_size 3``, ``dense_net_transition_rate 0.5``).  At L = 48 the
   map ends 6 × 6 × 156 = 5,616 wide (the vector ``features`` returns).
6. Dropout, Linear to the classes.

Size: 4,369,552 parameters without the word embedding at ``--fixed-len 48`` with a
47-symbol POS dictionary (tests/test_nli_diin.py: highway 804,608; two encoders
2,416,514; dense net 1,127,479; output 16,851; char CNN 4,100; + char embedding 8 ×
|chars|).  The paper's own count could not be read here (its text was not
retrievable; the stored SNLI leaderboard copy lists only the DIIN ensemble, at 17m), so
we compare with the authors' code: [code]'s
own counter prints 4,365,552 for the same network (it counts variables named
weights/kernel/biases/bias, so it skips the char CNN's ``filter``, 4,000).  With a real
POS dictionary (fairseq's 4 specials + the tags, padded to a multiple of 8) the
embedding is a few columns wider than 448 and the count a little higher.

Training in [code] (python/train_mnli.py; data_prep/nli/doc.md, "Paper profile against
the authors' code", has every setting with its line): batch 70 ([code] ``batch_size
70``); Adadelta lr 0.5, ρ 0.95, ε 1e-8 (TF 1.3's Adadelta defaults; [code]
``learning_rate 0.5``) with global gradient-norm clipping 1.0 ([code]
``gradient_clip_value 1.0``), for the whole run: [code] builds one
``AdadeltaOptimizer`` and never switches (its only SGD line, at python/train_mnli.py
:330, is commented out), and Nie et al. ran [code], so the paper profile does not switch
either.  ([repro] switches optimisers when the dev accuracy stalls, to SGD at the end;
an earlier version of this model took an SGD 3e-4 phase from it.)  Dropout keep rate starts at 1.0 and
decays exponentially by 0.977 every 10,000 steps ([code] ``keep_rate 1.0``,
``dropout_decay_rate 0.977``, ``dropout_decay_step 10000``,
``tf.train.exponential_decay``, not staircase): here ``--dropout`` (initial rate, 0),
``--dropout-decay-rate``, ``--dropout-decay-steps``, driven by fairseq's update count.
L2 on all weight matrices and conv kernels (no biases, no embeddings, not the char
CNN's filter), its ratio rising along a sigmoid to 9e-5 at 100,000 steps ([code]
``l2_regularization_ratio 9e-5``, ``sigmoid_growing_l2loss``,
``weight_l2loss_step_full_reg 100000``), plus an L2 penalty (1e-3) on the difference
between the premise's and the hypothesis's encoder weights ([code]
``diff_penalty_loss_ratio 1e-3``): :meth:`DIIN.regularization_loss`, added to the
training loss by ``--criterion diin_classification``
(``fairseq_plugins/criterions/diin_classification.py``; ``--l2-ratio``,
``--l2-full-reg-step``, ``--diff-penalty``).  Sequence length 48 ([code] ``seq_length
48``).  [code] validates every 1,000 steps (every 500, then 100, once the dev accuracy
passes 87.2% / 87.8% on SNLI), keeps the best checkpoint and stops 35,000 steps after
the last best one.

Deviations (all of them):

* Exact match is computed here from word ids, case-folded (a word matches a word of
  the other sentence with the same lower-cased form; "n't" matches "not").  [code]
  precomputes it (``is_exact_match``) also counting a match when the Snowball stems are
  equal or when one word's stem equals the stem of a WordNet synonym of the other.
  ``<unk>`` (a word outside the dictionary) matches nothing here.  (As in [code], the
  match is over the whole sentences, before they are cut to ``--fixed-len``.)
* The POS one-hot is as wide as the POS dictionary (fairseq's 4 specials, the tags,
  fillers up to a multiple of 8), not [code]'s 47; the padding tag's row is zero, as in
  [code].
* The L2 schedule and the encoder-difference penalty need ``--criterion
  diin_classification`` (the paper profile sets it); with the shared
  ``sequence_classification`` criterion neither is applied.
* The character CNN's bias starts at zero; [code] draws it Glorot-uniform as a 1-D
  variable (±0.17 for 100 filters).
* The padding word's embedding is fixed at zero (``padding_idx``); [code] initialises it
  at zero but trains it.  Padded characters have a trained embedding, as in [code].

Kept from [code] although odd: self-attention at a padded query position has every key
masked there, so its softmax is uniform over all L positions (done explicitly here);
the interaction tensor and the dense net see the padded rows and columns.
Initialisation: Glorot-uniform weights and zero biases, TF's defaults.

Fixed length (as [code]): every sentence is right-padded, or cut, to ``--fixed-len``
words (48, SNLI in [code]) and every word to ``--chars-per-word`` characters (16) before
the network sees it, so an example's logits do not depend on how far its batch pads it
(tested).  A longer sentence loses its words past ``--fixed-len``, as in [code]
(``sentences_to_padded_index_sequences`` keeps the first ``seq_length`` tokens); the
model logs a warning the first time that happens.  Longer words lose their characters
past ``--chars-per-word``, as in [code]; a warning the first time too.
"""

import logging
import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.dataclass import FairseqDataclass
from fairseq.models import register_model

from ..criterions import diin_classification  # noqa: F401  (registers DIIN's loss)
from .nli import PairClassifier, masked_softmax, need

logger = logging.getLogger(__name__)

PAIR_INPUTS = ("pos", "chars")


@dataclass
class DIINConfig(FairseqDataclass):
    embed_dim: int = field(default=300, metadata={"help": "word embedding size (GloVe: 300)"})
    char_embed_dim: int = field(default=8, metadata={"help": "character embedding size"})
    char_filters: int = field(default=100, metadata={"help": "filters of the char CNN "
                                                             "(its output width)"})
    char_kernel: int = field(default=5, metadata={"help": "kernel width of the char CNN"})
    chars_per_word: int = field(default=16, metadata={
        "help": "characters kept per word (words padded or cut to it)"})
    fixed_len: int = field(default=48, metadata={
        "help": "words per sentence the network sees (padded or cut to it; 48 for SNLI)"})
    highway_layers: int = field(default=2, metadata={"help": "highway layers (shared)"})
    self_att_layers: int = field(default=1, metadata={"help": "self-attention + fuse-gate "
                                                                "encoding layers"})
    share_encoder: bool = field(default=False, metadata={
        "help": "one self-attention encoder for both sentences (the paper: separate)"})
    scale_down_ratio: float = field(default=0.3, metadata={
        "help": "η: the 1×1 conv before the dense net keeps ⌊η d⌋ channels"})
    dense_blocks: int = field(default=3, metadata={"help": "dense blocks (each followed by "
                                                           "a transition layer)"})
    dense_layers: int = field(default=8, metadata={"help": "n: conv layers per dense block"})
    growth_rate: int = field(default=20, metadata={"help": "channels each dense layer adds"})
    dense_kernel: int = field(default=3, metadata={"help": "kernel of the dense layers"})
    transition_ratio: float = field(default=0.5, metadata={
        "help": "θ: a transition layer keeps ⌊θ C⌋ channels, then 2×2 max pooling"})
    dropout: float = field(default=0.0, metadata={
        "help": "initial dropout rate (the paper: keep rate 1.0, i.e. 0)"})
    dropout_decay_rate: float = field(default=0.977, metadata={
        "help": "the keep rate is multiplied by this every --dropout-decay-steps updates "
                "(continuously)"})
    dropout_decay_steps: int = field(default=10000, metadata={
        "help": "updates per --dropout-decay-rate step of the keep rate"})
    freeze_embeddings: bool = field(default=False, metadata={"help": "do not train the "
                                                              "word embeddings"})
    l2_ratio: float = field(default=9e-5, metadata={
        "help": "full weight of the L2 penalty (sum of squares / 2) on the weight matrices "
                "and conv kernels; applied by --criterion diin_classification"})
    l2_full_reg_step: int = field(default=100000, metadata={
        "help": "update at which the L2 weight, rising along a sigmoid centred on half of "
                "it, is (nearly) full"})
    diff_penalty: float = field(default=1e-3, metadata={
        "help": "weight of the L2 penalty on the difference between the premise's and the "
                "hypothesis's encoder weights (separate encoders only); applied by "
                "--criterion diin_classification"})


class DecayingDropout(nn.Module):
    """Dropout whose keep rate decays with the update count: keep = (1 − p0) ·
    rate^(updates / steps) (TF ``exponential_decay``, not staircase).  One instance
    serves the whole model; it is called like ``F.dropout``."""

    def __init__(self, p0: float, rate: float, steps: int):
        super().__init__()
        self.p0, self.rate, self.steps = p0, rate, max(1, steps)
        self.num_updates = 0

    def set_num_updates(self, num_updates):
        self.num_updates = num_updates

    @property
    def p(self) -> float:
        keep = (1.0 - self.p0) * self.rate ** (self.num_updates / self.steps)
        return min(max(1.0 - keep, 0.0), 1.0)

    def forward(self, x):
        p = self.p
        if not self.training or p <= 0.0:
            return x
        return F.dropout(x, p, training=True)


def _linear(d_in: int, d_out: int, bias: bool = True) -> nn.Linear:
    layer = nn.Linear(d_in, d_out, bias=bias)
    nn.init.xavier_uniform_(layer.weight)
    if bias:
        nn.init.zeros_(layer.bias)
    return layer


def _conv(cls, c_in: int, c_out: int, k: int, **kw):
    layer = cls(c_in, c_out, k, **kw)
    nn.init.xavier_uniform_(layer.weight)
    nn.init.zeros_(layer.bias)
    return layer


class Highway(nn.Module):
    def __init__(self, d: int, layers: int):
        super().__init__()
        self.trans = nn.ModuleList(_linear(d, d) for _ in range(layers))
        self.gate = nn.ModuleList(_linear(d, d) for _ in range(layers))

    def forward(self, x):
        for t, g in zip(self.trans, self.gate):
            gate = torch.sigmoid(g(x))
            x = gate * F.relu(t(x)) + (1 - gate) * x
        return x


class SelfAttentionFuse(nn.Module):
    """Tri-linear self-attention then the two-gate fuse gate ([code]
    ``self_attention_layer``)."""

    def __init__(self, d: int, drop: DecayingDropout):
        super().__init__()
        self.drop = drop
        self.score = _linear(3 * d, 1)
        # z, r, f: each = Linear(x) + Linear(x̂) (two biases, as in [code])
        self.lhs = nn.ModuleList(_linear(d, d) for _ in range(3))
        self.rhs = nn.ModuleList(_linear(d, d) for _ in range(3))

    def forward(self, x, mask):
        d = x.size(-1)
        w = self.score.weight[0]
        s = ((x @ w[:d])[:, :, None] + (x @ w[d:2 * d])[:, None, :]
             + torch.bmm(x * w[2 * d:], x.transpose(1, 2)) + self.score.bias)   # [B, L, L]
        att = masked_softmax(s, mask[:, None, :])
        # a padded query has every key masked in [code]: uniform over all positions
        att = torch.where(mask[:, :, None], att, torch.full_like(att, 1.0 / x.size(1)))
        xh = torch.bmm(att, x)
        z, r, f = (self.lhs[k](self.drop(x)) + self.rhs[k](self.drop(xh)) for k in range(3))
        return torch.sigmoid(r) * x + torch.sigmoid(f) * torch.tanh(z)


class DenseNet(nn.Module):
    """[code] ``dense_net``: scale-down 1×1 conv, then (dense block, transition) × k."""

    def __init__(self, d: int, cfg):
        super().__init__()
        c = int(d * cfg.scale_down_ratio)
        if c < 1:
            raise ValueError(f"--scale-down-ratio {cfg.scale_down_ratio} leaves no channel "
                             f"of {d}")
        self.first = _conv(nn.Conv2d, d, c, 1)
        self.blocks, self.transitions = nn.ModuleList(), nn.ModuleList()
        pad = cfg.dense_kernel // 2
        for _ in range(cfg.dense_blocks):
            layers = nn.ModuleList()
            for _ in range(cfg.dense_layers):
                layers.append(_conv(nn.Conv2d, c, cfg.growth_rate, cfg.dense_kernel,
                                    padding=pad))
                c += cfg.growth_rate
            self.blocks.append(layers)
            c_out = int(c * cfg.transition_ratio)
            if c_out < 1:
                raise ValueError(f"--transition-ratio {cfg.transition_ratio} leaves no "
                                 f"channel of {c}")
            self.transitions.append(_conv(nn.Conv2d, c, c_out, 1))
            c = c_out
        self.out_channels = c

    def forward(self, x):                     # [B, d, L, L]
        x = self.first(x)
        for layers, trans in zip(self.blocks, self.transitions):
            for conv in layers:
                x = torch.cat([x, F.relu(conv(x))], 1)
            x = F.max_pool2d(trans(x), 2, 2)
        return x.flatten(1)


def _fit(x: torch.Tensor, length: int, dim: int, pad: int) -> torch.Tensor:
    """Cut or right-pad ``x`` along ``dim`` to ``length`` with ``pad``."""
    n = x.size(dim)
    if n >= length:
        return x.narrow(dim, 0, length)
    shape = list(x.shape)
    shape[dim] = length - n
    return torch.cat([x, x.new_full(shape, pad)], dim)


@register_model("nli_diin", dataclass=DIINConfig)
class DIIN(PairClassifier):
    PAIR_INPUTS = PAIR_INPUTS
    _warned_long = False
    _warned_chars = False

    def __init__(self, cfg, task):
        super().__init__(cfg, task)
        get = getattr(task, "feature_dictionary", None)
        dicts = {name: (get(name) if get is not None else None) for name in PAIR_INPUTS}
        missing = [name for name, d in dicts.items() if d is None]
        if missing:
            raise ValueError(f"nli_diin needs --pair-inputs {','.join(PAIR_INPUTS)} "
                             f"(missing: {','.join(missing)})")
        if cfg.chars_per_word < cfg.char_kernel:
            raise ValueError(f"--chars-per-word {cfg.chars_per_word} is shorter than "
                             f"--char-kernel {cfg.char_kernel}")
        if cfg.fixed_len < 2 ** cfg.dense_blocks:
            raise ValueError(f"--fixed-len {cfg.fixed_len} is too short for "
                             f"{cfg.dense_blocks} 2×2 poolings")
        pos_dict, char_dict = dicts["pos"], dicts["chars"]
        self.pos_pad, self.n_pos = pos_dict.pad(), len(pos_dict)
        self.char_pad = char_dict.pad()
        self.unk = task.source_dictionary.unk()
        self.register_buffer("match_key", self._match_keys(task.source_dictionary),
                             persistent=False)

        self.num_updates = 0
        self.drop = DecayingDropout(cfg.dropout, cfg.dropout_decay_rate,
                                    cfg.dropout_decay_steps)
        self.char_embed = nn.Embedding(len(char_dict), cfg.char_embed_dim)
        nn.init.xavier_uniform_(self.char_embed.weight)
        self.char_conv = _conv(nn.Conv1d, cfg.char_embed_dim, cfg.char_filters,
                               cfg.char_kernel)
        d = cfg.embed_dim + cfg.char_filters + self.n_pos + 1
        self.dim = d
        self.highway = Highway(d, cfg.highway_layers)
        n_enc = 1 if cfg.share_encoder else 2
        self.encoders = nn.ModuleList(
            nn.ModuleList(SelfAttentionFuse(d, self.drop) for _ in range(cfg.self_att_layers))
            for _ in range(n_enc))
        self.dense = DenseNet(d, cfg)
        side = cfg.fixed_len
        for _ in range(cfg.dense_blocks):
            side //= 2
        self.feature_dim = self.dense.out_channels * side * side
        self.out = _linear(self.feature_dim, self.num_classes)

    # ------------------------------------------------------------------ exact match
    @staticmethod
    def _match_keys(dictionary) -> torch.Tensor:
        """Word id -> id of its lower-cased form ("n't" -> "not"); specials map to
        themselves."""
        keys, canon = [], {}
        for i, sym in enumerate(dictionary.symbols):
            form = sym.lower()
            if form == "n't":
                form = "not"
            keys.append(canon.setdefault(form, i) if i >= dictionary.nspecial else i)
        return torch.tensor(keys, dtype=torch.long)

    def exact_match(self, tokens, other):
        """[B, T] ids, [B, T'] ids -> [B, T] float: 1 where a real word has a
        (case-folded) equal among the real words of ``other``; ``<unk>`` matches
        nothing (two unknown words need not be the same word)."""
        a, b = self.match_key[tokens], self.match_key[other]
        same = a[:, :, None] == b[:, None, :]
        real_a = tokens.ne(self.pad) & tokens.ne(self.unk)
        real_b = other.ne(self.pad) & other.ne(self.unk)
        same &= real_a[:, :, None] & real_b[:, None, :]
        return same.any(-1).to(self.embed.weight.dtype)

    # ------------------------------------------------------------------ layers
    def _check_length(self, *tokens):
        if DIIN._warned_long:
            return
        L = self.cfg.fixed_len
        if all(t.size(1) <= L for t in tokens):      # no sync with the device needed
            return
        longest = max(int(t.ne(self.pad).sum(1).max()) for t in tokens)
        if longest > L:
            DIIN._warned_long = True
            logger.warning(
                "nli_diin: a sentence of %d words is longer than --fixed-len %d; its words "
                "past %d are dropped (as in the original DIIN). Warned once.",
                longest, L, L)

    def _check_chars(self, *chars):
        C = self.cfg.chars_per_word
        if DIIN._warned_chars or all(c.size(2) <= C for c in chars):
            return
        DIIN._warned_chars = True
        logger.warning(
            "nli_diin: a word of more than --chars-per-word %d characters; its characters "
            "past %d are dropped (as in the original DIIN). Warned once.", C, C)

    def embed_sentence(self, tokens, pos, chars, em):
        """Fixed-length inputs -> the 448-wide embedding + highway, [B, L, d]."""
        B, L, C = chars.shape
        w = self.drop(self.embed(tokens))
        c = self.char_embed(chars).view(B * L, C, -1).transpose(1, 2)      # [BL, e, C]
        c = F.relu(self.char_conv(self.drop(c))).max(-1).values.view(B, L, -1)
        p = F.one_hot(pos, self.n_pos).to(w.dtype) * pos.ne(self.pos_pad)[..., None]
        return self.highway(torch.cat([w, c, p, em[..., None]], -1))

    def encode(self, x, mask, side: int):
        for layer in self.encoders[side % len(self.encoders)]:
            x = layer(x, mask)
        return x

    def features(self, premise_tokens, premise_lengths, hypothesis_tokens,
                 hypothesis_lengths=None, premise_pos=None, premise_chars=None,
                 hypothesis_pos=None, hypothesis_chars=None, **kwargs):
        given = dict(premise_pos=premise_pos, premise_chars=premise_chars,
                     hypothesis_pos=hypothesis_pos, hypothesis_chars=hypothesis_chars)
        need(given, list(given), "nli_diin")
        self._check_length(premise_tokens, hypothesis_tokens)
        self._check_chars(premise_chars, hypothesis_chars)
        L, C = self.cfg.fixed_len, self.cfg.chars_per_word
        em_p = self.exact_match(premise_tokens, hypothesis_tokens)
        em_h = self.exact_match(hypothesis_tokens, premise_tokens)
        sides = []
        for k, (tok, pos, chars, em) in enumerate((
                (premise_tokens, premise_pos, premise_chars, em_p),
                (hypothesis_tokens, hypothesis_pos, hypothesis_chars, em_h))):
            tok = _fit(tok, L, 1, self.pad)
            chars = _fit(_fit(chars, L, 1, self.char_pad), C, 2, self.char_pad)
            x = self.embed_sentence(tok, _fit(pos, L, 1, self.pos_pad), chars,
                                    _fit(em, L, 1, 0))
            sides.append(self.encode(x, tok.ne(self.pad), k))
        p, h = sides
        inter = p[:, :, None, :] * h[:, None, :, :]                       # [B, L, L, d]
        inter = self.drop(inter.permute(0, 3, 1, 2))
        return self.dense(inter)

    def classify(self, v):
        return self.out(self.drop(v))

    # ------------------------------------------------------------------ regularisation
    def set_num_updates(self, num_updates):
        self.num_updates = num_updates
        super().set_num_updates(num_updates)

    def l2_weights(self):
        """The tensors [code]'s L2 loss sums over: every linear layer's weight matrix
        (TF ``kernel``: highway, self-attention scores, fuse gates, output) and every
        kernel of the dense net (``convolution2d``'s ``weights``); not the biases, the
        word or character embeddings, nor the character CNN's filter (a variable named
        ``filter``)."""
        out = [layer.weight for layer in (*self.highway.trans, *self.highway.gate)]
        for enc in self.encoders:
            for layer in enc:
                out.append(layer.score.weight)
                out += [m.weight for m in (*layer.lhs, *layer.rhs)]
        out.append(self.dense.first.weight)
        out += [conv.weight for block in self.dense.blocks for conv in block]
        out += [t.weight for t in self.dense.transitions]
        out.append(self.out.weight)
        return out

    def l2_ratio_now(self) -> float:
        """[code] ``sigmoid_growing_l2loss``: sigmoid((step − S/2) · 8 / (S/2)) · ratio,
        S = ``--l2-full-reg-step``, step = updates done."""
        half = self.cfg.l2_full_reg_step / 2
        x = (float(self.num_updates) - half) * 8.0 / half
        return self.cfg.l2_ratio / (1.0 + math.exp(-x))

    def regularization_loss(self) -> torch.Tensor:
        """[code]'s terms beside the mean cross-entropy (models/DIIN.py, "L2 Loss" and
        the ``diff_penalty_loss``): the growing L2 penalty Σ ||W||² / 2 over
        :meth:`l2_weights`, and ``--diff-penalty`` × Σ ||W_p − W_h||² / 2 over the
        premise's and the hypothesis's self-attention score and fuse-gate weights (both
        only as TF's ``l2_loss``: sum of squares / 2).  The criterion
        ``diin_classification`` adds it to each training batch's mean loss."""
        l2 = sum((w.float() ** 2).sum() for w in self.l2_weights()) / 2
        loss = self.l2_ratio_now() * l2
        if len(self.encoders) == 2 and self.cfg.diff_penalty:
            diff = 0.0
            for lp, lh in zip(self.encoders[0], self.encoders[1]):
                pairs = [(lp.score, lh.score)] + list(zip(lp.lhs, lh.lhs)) \
                    + list(zip(lp.rhs, lh.rhs))
                diff = diff + sum(((a.weight - b.weight).float() ** 2).sum()
                                  for a, b in pairs) / 2
            loss = loss + self.cfg.diff_penalty * diff
        return loss

    def forward(self, premise_tokens, premise_lengths, hypothesis_tokens, hypothesis_lengths,
                **kwargs):
        return self.classify(self.features(premise_tokens, premise_lengths,
                                           hypothesis_tokens, hypothesis_lengths, **kwargs))
