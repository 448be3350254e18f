"""Recursive NLI models for ``--task sentence_pair_classification`` (Nie, Wang and Bansal
2019, section 2.1 and Tables 1, 2, 5: "S-TLSTM" and "G-TLSTM"), batched level by level
(``fairseq_plugins/trees.py``): no per-example Python recursion in the forward pass.

* ``nli_stlstm``: the syntactic tree-LSTM ESIM of Chen et al. (2017), "Enhanced LSTM for
  Natural Language Inference" (ACL), sections 3.1-3.3 with tree-LSTMs: ESIM (``nli_esim``)
  with both BiLSTMs replaced by binary tree-LSTMs over the sentence's parse, the soft
  alignment taken between all nodes of the two trees, the composition tree-LSTM run
  over the same tree with each node's enhanced local-inference vector as its input,
  and average and max pooling over all nodes.  The parse comes with the data
  (``--pair-inputs tree``): see ``fairseq_plugins/doc.md`` for which parse and why.
* ``nli_gtlstm``: the Gumbel Tree-LSTM sentence encoder of Choi, Yoo and Lee (2018),
  "Learning to Compose Task-Specific Tree Structures" (AAAI): a leaf LSTM, then n-1
  steps that each compose every adjacent pair with a tree-LSTM cell, score the
  candidate parents against a query vector and merge the pair picked by
  straight-through Gumbel-softmax (the argmax at evaluation); the root is the sentence
  vector, the pair's features [u; v; |u-v|; u⊙v] go to an MLP.  All the batch's
  sentences take their steps together; a finished sentence keeps its root.

Both take the word streams and, for S-TLSTM, ``premise_tree``/``hypothesis_tree``
(``PAIR_INPUTS``); padding never changes an example's logits (tested).
"""

from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from fairseq.dataclass import FairseqDataclass
from fairseq.models import register_model

from ..trees import BinaryTreeLSTM, schedule
from .nli import PairClassifier, UnscaledDropout, masked_max, masked_mean, need, soft_align


# ----------------------------------------------------------------------------- S-TLSTM
@dataclass
class STLSTMConfig(FairseqDataclass):
    embed_dim: int = field(default=300, metadata={"help": "word embedding size (GloVe: 300)"})
    hidden_size: int = field(default=300, metadata={
        "help": "units of both tree-LSTMs; also the projection before composition"})
    mlp_dim: int = field(default=300, metadata={"help": "the tanh MLP's hidden layer"})
    dropout: float = field(default=0.5, metadata={"help": "dropout"})
    freeze_embeddings: bool = field(default=False, metadata={"help": "do not train the "
                                                              "word embeddings"})
    original_init: bool = field(default=False, metadata={
        "help": "Chen et al.'s initialisation (their code): orthogonal square blocks of the "
                "tree-LSTMs, N(0, 0.01^2) for the other weights and the word embedding, "
                "zero biases (the paper profile); otherwise PyTorch's defaults"})
    unscaled_dropout: bool = field(default=False, metadata={
        "help": "their code's dropout: the kept units are not scaled up in training, and "
                "every unit is multiplied by the keep rate at evaluation (the paper "
                "profile); otherwise PyTorch's inverted dropout"})


@register_model("nli_stlstm", dataclass=STLSTMConfig)
class SyntacticTreeLSTM(PairClassifier):
    """ESIM with tree-LSTMs (Chen et al. 2017); see the module docstring."""

    PAIR_INPUTS = ("tree",)

    def __init__(self, cfg, task):
        super().__init__(cfg, task)
        h = cfg.hidden_size
        self.drop = (UnscaledDropout(cfg.dropout) if getattr(cfg, "unscaled_dropout", False)
                     else nn.Dropout(cfg.dropout))
        # the input of an internal node, "like an unknown word" (Chen et al. section 3.1;
        # their code: the embedding row of _PAD_, which every internal node reads)
        self.node_input = nn.Parameter(torch.empty(cfg.embed_dim).normal_(0, 0.01))
        self.encoder = BinaryTreeLSTM(cfg.embed_dim, h)
        self.project = nn.Linear(4 * h, h)
        self.composition = BinaryTreeLSTM(h, h)
        self.hidden = nn.Linear(6 * h, cfg.mlp_dim)
        self.out = nn.Linear(cfg.mlp_dim, self.num_classes)
        if getattr(cfg, "original_init", False):
            self.reset_original_parameters()

    def reset_original_parameters(self):
        """Chen et al.'s initialisation (lukecq1231/nli, scripts/TreeLSTM_IM/main.py,
        ``init_params``): the word embedding N(0, 0.01^2) (``norm_weight(n_words,
        dim_word)``; GloVe's words are then overwritten, the padding row stays zero
        here), both tree-LSTMs as :meth:`BinaryTreeLSTM.reset_original_parameters`, the
        projection and the two classifier layers N(0, 0.01^2) (``norm_weight(...,
        ortho=False)``) with zero biases."""
        with torch.no_grad():
            self.embed.weight.normal_(0.0, 0.01)
            self.embed.weight[self.pad].zero_()
            for layer in (self.project, self.hidden, self.out):
                layer.weight.normal_(0.0, 0.01)
                layer.bias.zero_()
        self.encoder.reset_original_parameters()
        self.composition.reset_original_parameters()

    def encode(self, tokens, lengths, tree):
        """Every node's state [B, N, h], the schedule (node mask, levels)."""
        B, T = tokens.shape
        sched = schedule(tree, lengths, T)
        nodes = self.node_input.expand(B, sched.K, -1)
        x = self.drop(torch.cat([self.embed(tokens), nodes], 1))
        return self.run_tree(self.encoder, x, sched), sched

    def run_tree(self, cell, x, sched):
        """``cell`` over every node of the batch, level by level
        (``benchmarks/bench_tree_lstm.py`` swaps in a per-example recursion)."""
        return cell(x, sched)

    def compose(self, a, a_aligned, sched):
        """[root; average; max] of the composition tree-LSTM's node states."""
        m = torch.cat([a, a_aligned, a - a_aligned, a * a_aligned], -1)
        v = self.run_tree(self.composition, F.relu(self.project(m)), sched)
        mask = sched.node_mask
        root = v.gather(1, sched.root[:, None, None].expand(-1, 1, v.size(-1)))[:, 0]
        return torch.cat([root, masked_mean(v, mask), masked_max(v, mask)], -1)

    def features(self, premise_tokens, premise_lengths, hypothesis_tokens,
                 hypothesis_lengths=None, **kwargs):
        p_tree, h_tree = need(kwargs, ("premise_tree", "hypothesis_tree"), "nli_stlstm")
        p_len = premise_tokens.ne(self.pad).sum(1)
        h_len = hypothesis_tokens.ne(self.pad).sum(1)
        a, sa = self.encode(premise_tokens, p_len, p_tree)
        b, sb = self.encode(hypothesis_tokens, h_len, h_tree)
        a_al, b_al, _, _ = soft_align(a, b, sa.node_mask, sb.node_mask)
        return torch.cat([self.compose(a, a_al, sa), self.compose(b, b_al, sb)], -1)

    classify = PairClassifier.tanh_mlp


# ----------------------------------------------------------------------------- G-TLSTM
@dataclass
class GTLSTMConfig(FairseqDataclass):
    embed_dim: int = field(default=300, metadata={"help": "word embedding size (GloVe: 300)"})
    hidden_size: int = field(default=300, metadata={"help": "D_h: tree-LSTM and leaf LSTM units"})
    mlp_dim: int = field(default=1024, metadata={"help": "D_c: the MLP's hidden layers"})
    mlp_layers: int = field(default=1, metadata={"help": "hidden layers of the MLP (600D: 3)"})
    dropout: float = field(default=0.1, metadata={
        "help": "dropout on the word embeddings, the MLP's input and its last hidden layer"})
    no_batchnorm: bool = field(default=False, metadata={
        "help": "no batch normalisation of the MLP's input and last hidden layer (the 100D "
                "model; 300D and 600D have it)"})
    no_leaf_rnn: bool = field(default=False, metadata={
        "help": "leaf states from a linear map of each word instead of an LSTM over the "
                "words (Choi et al.'s 'no leaf LSTM' rows)"})
    temperature: float = field(default=1.0, metadata={"help": "Gumbel-softmax temperature"})
    freeze_embeddings: bool = field(default=False, metadata={
        "help": "do not train the word embeddings (300D and 600D kept GloVe fixed)"})
    original_init: bool = field(default=False, metadata={
        "help": "Choi et al.'s initialisation (their code and supplement): He-normal input "
                "weights and orthogonal recurrent weights of the leaf LSTM with zero biases "
                "but the forget gate's 1, He-normal MLP weights, the word embedding "
                "N(0, 0.01^2), or zero for the words GloVe lacks when --embedding-path is "
                "given (the paper profile); otherwise PyTorch's defaults"})


class BatchNorm(nn.BatchNorm1d):
    """Batch normalisation that normalises a training batch of one example with the
    running statistics (a batch's own variance is undefined for one example; fairseq's
    last batch of an epoch can hold one)."""

    def forward(self, x):
        if self.training and x.size(0) < 2:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight,
                                self.bias, False, 0.0, self.eps)
        return super().forward(x)


class GumbelTreeEncoder(nn.Module):
    """Choi, Yoo and Lee (2018)'s encoder over right-padded word vectors [B, T, d]."""

    def __init__(self, d_in: int, hidden: int, leaf_rnn: bool, temperature: float):
        super().__init__()
        self.hidden, self.temperature = hidden, temperature
        if leaf_rnn:
            self.leaf = nn.LSTMCell(d_in, hidden)
            with torch.no_grad():                      # forget-gate biases start at 1
                self.leaf.bias_ih[hidden:2 * hidden].fill_(1.0)
                self.leaf.bias_hh[hidden:2 * hidden].zero_()
        else:
            self.leaf_map = nn.Linear(d_in, 2 * hidden)
        self.compose_cell = nn.Linear(2 * hidden, 5 * hidden)
        nn.init.orthogonal_(self.compose_cell.weight)
        nn.init.zeros_(self.compose_cell.bias)
        self.query = nn.Parameter(torch.empty(hidden).normal_(0, 0.01))

    def reset_original_parameters(self):
        """The leaf transformation as their code initialises it (jihunchoi/
        unsupervised-treelstm, model/treelstm.py, ``BinaryTreeLSTM.reset_parameters``):
        the leaf LSTM's input weights He-normal (``kaiming_normal_``), its recurrent
        weights orthogonal, all its biases zero but the forget gate's input bias 1; or,
        without a leaf LSTM, the word map He-normal with a zero bias.  The composition
        cell (orthogonal, zero bias) and the query (N(0, 0.01^2)) start so already."""
        with torch.no_grad():
            if hasattr(self, "leaf"):
                nn.init.kaiming_normal_(self.leaf.weight_ih)
                nn.init.orthogonal_(self.leaf.weight_hh)
                self.leaf.bias_ih.zero_()
                self.leaf.bias_hh.zero_()
                self.leaf.bias_ih[self.hidden:2 * self.hidden].fill_(1.0)
            else:
                nn.init.kaiming_normal_(self.leaf_map.weight)
                self.leaf_map.bias.zero_()

    def leaves(self, x):
        """(h, c) [B, T, hidden] of the words; a word's states depend only on the words
        before it, so padding on the right never reaches them."""
        if hasattr(self, "leaf_map"):
            h, c = self.leaf_map(x).chunk(2, -1)
            return h, c
        B, T, _ = x.shape
        h, c = x.new_zeros(B, self.hidden), x.new_zeros(B, self.hidden)
        hs, cs = [], []
        for t in range(T):          # a cell loop: the cell states are the leaves' c
            h, c = self.leaf(x[:, t], (h, c))
            hs.append(h)
            cs.append(c)
        return torch.stack(hs, 1), torch.stack(cs, 1)

    def compose(self, hl, cl, hr, cr):
        """Eqs. 1-3, the forget gates as σ(f + 1) (the authors' code)."""
        i, fl, fr, u, o = self.compose_cell(torch.cat([hl, hr], -1)).chunk(5, -1)
        c = (torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(fl + 1) * cl
             + torch.sigmoid(fr + 1) * cr)
        return torch.sigmoid(o) * torch.tanh(c), c

    def select(self, scores, valid):
        """A one-hot choice of a candidate per row [B, L]: straight-through
        Gumbel-softmax in training (forward: the one-hot of the noisy argmax; backward:
        through the softmax), the plain argmax otherwise."""
        low = torch.finfo(scores.dtype).min
        if self.training:
            u = torch.rand_like(scores)
            scores = scores - torch.log(-torch.log(u + 1e-20) + 1e-20)
            soft = (scores / self.temperature).masked_fill(~valid, low).softmax(-1)
        else:
            soft = scores.masked_fill(~valid, low).softmax(-1)
        hard = F.one_hot(soft.argmax(-1), soft.size(-1)).to(soft.dtype)
        return (hard - soft).detach() + soft if self.training else hard

    def forward(self, x, lengths):
        """The root state [B, hidden] of each sentence: n-1 merge steps, all sentences
        together; a sentence with one node left keeps it."""
        h, c = self.leaves(x)
        n = lengths.clone()
        for _ in range(x.size(1) - 1):
            L = h.size(1)
            ph, pc = self.compose(h[:, :-1], c[:, :-1], h[:, 1:], c[:, 1:])   # [B, L-1, d]
            valid = torch.arange(L - 1, device=x.device)[None, :] < (n - 1)[:, None]
            live = valid.any(-1)                       # sentences still merging
            sel = self.select((ph @ self.query) / self.hidden ** 0.5, valid)
            sel = (sel * live[:, None].to(sel.dtype))[..., None]
            before = 1 - sel.cumsum(1)                 # candidates left of the chosen one
            after = sel.cumsum(1) - sel                # candidates right of it
            keep = ~live[:, None, None]
            h = torch.where(keep, h[:, :-1], before * h[:, :-1] + sel * ph + after * h[:, 1:])
            c = torch.where(keep, c[:, :-1], before * c[:, :-1] + sel * pc + after * c[:, 1:])
            n = torch.where(live, n - 1, n)
        return h[:, 0]


@register_model("nli_gtlstm", dataclass=GTLSTMConfig)
class GumbelTreeLSTM(PairClassifier):
    """Choi, Yoo and Lee (2018)'s SNLI classifier (their eqs. 14-16); see the module
    docstring."""

    def __init__(self, cfg, task):
        super().__init__(cfg, task)
        self.drop = nn.Dropout(cfg.dropout)
        self.encoder = GumbelTreeEncoder(cfg.embed_dim, cfg.hidden_size, not cfg.no_leaf_rnn,
                                         cfg.temperature)
        d = 4 * cfg.hidden_size
        self.bn_in = BatchNorm(d) if not cfg.no_batchnorm else nn.Identity()
        layers = []
        for _ in range(cfg.mlp_layers):
            layers += [nn.Linear(d, cfg.mlp_dim), nn.ReLU()]
            d = cfg.mlp_dim
        self.mlp = nn.Sequential(*layers)
        self.bn_out = BatchNorm(d) if not cfg.no_batchnorm else nn.Identity()
        self.out = nn.Linear(d, self.num_classes)
        nn.init.uniform_(self.out.weight, -0.005, 0.005)
        nn.init.zeros_(self.out.bias)
        if getattr(cfg, "original_init", False):
            glove = getattr(getattr(task, "cfg", None), "embedding_path", None)
            self.reset_original_parameters(glove=bool(glove))

    def reset_original_parameters(self, glove: bool):
        """Choi et al.'s initialisation (jihunchoi/unsupervised-treelstm, snli/model.py
        ``reset_parameters``, snli/train.py, utils/glove.py; their supplement: "He et al.
        (2015)" for all but the query and the output layer): the encoder as
        :meth:`GumbelTreeEncoder.reset_original_parameters`, the MLP's layers He-normal
        with zero biases; the word embedding N(0, 0.01^2), or, when GloVe vectors are
        loaded over it (``glove``), zero: their ``load_glove`` gives every word missing
        from GloVe a zero vector (kept fixed with the embedding)."""
        self.encoder.reset_original_parameters()
        with torch.no_grad():
            for layer in self.mlp:
                if isinstance(layer, nn.Linear):
                    nn.init.kaiming_normal_(layer.weight)
                    layer.bias.zero_()
            if glove:
                self.embed.weight.zero_()
            else:
                self.embed.weight.normal_(0.0, 0.01)
                self.embed.weight[self.pad].zero_()

    def encode(self, tokens):
        return self.encoder(self.drop(self.embed(tokens)), tokens.ne(self.pad).sum(1))

    def features(self, premise_tokens, premise_lengths, hypothesis_tokens,
                 hypothesis_lengths=None, **kwargs):
        u, v = self.encode(premise_tokens), self.encode(hypothesis_tokens)
        return torch.cat([u, v, (u - v).abs(), u * v], -1)

    def classify(self, v):
        v = self.mlp(self.drop(self.bn_in(v)))
        return self.out(self.drop(self.bn_out(v)))
