"""SGET sentence generator: the pattern table, determinism, split and pattern counts,
hold-outs (target words, modifiers, recursion depths), no repeated content word,
concatenation and selectional-restriction switches, translation of every line, the
manifest and the command line; and (skipped when ``../shared/reference`` is absent) a
comparison of the generated in-distribution data with the released development pairs.

Runs use a small ``scale`` (every pattern present, sizes scaled) to stay fast."""
import collections
import json

import pytest

from conftest import reference_path

from compsuite.data_prep.sget import patterns as P, selection
from compsuite.data_prep.sget.generate import generate, main, n_words
from compsuite.data_prep.sget.grammar import parse
from compsuite.data_prep.sget.lexicon import load
from compsuite.data_prep.sget.translate import tokenize, translate
from compsuite.data_prep.sget.trees import argument_pairs, construction, content_words, depths
from compsuite.foundation.errors import DataError

SCALE = 0.02
FILES = ("train.txt", "dev.txt", "test.txt", "gen.txt", "gen_info.tsv")
TRAIN_DEPTHS = {0, *P.TRAIN_DEPTHS}


def _read(d, name):
    return [line.split("\t") for line in (d / name).read_text(encoding="utf-8").splitlines()]


class Run:
    def __init__(self, path, manifest):
        self.path, self.manifest = path, manifest
        self.split = {s: _read(path, f"{s}.txt") for s in ("train", "dev", "test", "gen")}
        self.info = _read(path, "gen_info.tsv")
        self._trees = {}

    def tree(self, english):
        t = self._trees.get(english)
        if t is None:
            t = self._trees[english] = parse(tokenize(english), load())
        return t


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("sget") / "a"
    return Run(d, generate(d, seed=3, scale=SCALE, show=False))


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """The same seed again, another seed, restrictions off, concatenation off."""
    root = tmp_path_factory.mktemp("sget_variants")
    out = {}
    for name, kw in {"again": dict(seed=3), "seed4": dict(seed=4),
                     "free": dict(seed=3, restrictions=False),
                     "noconcat": dict(seed=3, concatenation=False)}.items():
        out[name] = Run(root / name, generate(root / name, scale=SCALE, show=False, **kw))
    return out


# ----------------------------------------------------------------------------- table
def test_pattern_table():
    P.check()
    assert len(P.PATTERNS) == 42 and len(set(P.table10_labels().values())) == 42
    assert sum(p.size for p in P.PATTERNS) == 76_000
    unscored = {p.name for p in P.PATTERNS if not p.partial_match}
    assert unscored == {"prim_to_inf_arg", "cp_recursion_shallower", "cp_recursion_deeper",
                        "ce_recursion_shallower", "ce_recursion_deeper", "iobj_extracted_wh",
                        "wh_active_subject", "wh_passive_subject", "wh_dobj_ditransitive",
                        "wh_subject_with_pp", "wh_long_movement"}
    small = {p.name for p in P.PATTERNS if p.size == 1000}
    assert small == {p.name for p in P.PATTERNS if not p.complement_clause}
    assert {len(v) for v in P.by_group().values()} == {9, 6, 6, 6, 8, 2, 5}
    assert [p.table3_group for p in P.PATTERNS].count("Lex. + Mor.") == 10
    lx = load()
    for p in P.lexical():
        assert len(p.targets) == 5
        for w in p.targets:
            assert w in lx.nouns or w in lx.proper_nouns or w in lx.verbs, w
        if p.group == P.PRIMITIVE_STRUCTURAL_ALTERNATION:
            assert all(lx.verbs[w].past == lx.verbs[w].pp for w in p.targets), p.name
        if p.irregular:  # four regular simple pasts and one irregular
            regular = [w for w in p.targets if lx.verbs[w].past.endswith("ed")]
            assert p.irregular not in regular and len(regular) == 4, p.name
    assert P.get("obj_pp_to_subj_pp").label == "PP in Subj"
    with pytest.raises(KeyError):
        P.get("nope")


# ----------------------------------------------------------------------------- determinism
def test_same_seed_same_bytes_other_seed_differs(run, variants):
    for f in FILES:
        assert (run.path / f).read_bytes() == (variants["again"].path / f).read_bytes(), f
    assert (run.path / "train.txt").read_bytes() != (variants["seed4"].path / "train.txt").read_bytes()
    assert (run.path / "gen.txt").read_bytes() != (variants["seed4"].path / "gen.txt").read_bytes()


# ----------------------------------------------------------------------------- splits
def test_columns_and_pattern_names(run):
    names = set(P.names())
    for split, lines in run.split.items():
        assert lines and all(len(x) == 3 and x[0] and x[1] for x in lines), split
        if split == "gen":
            assert {x[2] for x in lines} == names
        else:
            assert {x[2] for x in lines} == {"in_distribution"}


def test_gen_counts_per_pattern_and_info(run):
    counts = collections.Counter(x[2] for x in run.split["gen"])
    for p in P.PATTERNS:
        assert counts[p.name] == P.scaled_size(p, SCALE), p.name
    assert len(run.info) == len(run.split["gen"])
    for (en, ja, pat), (ipat, in_cp, detail) in zip(run.split["gen"], run.info):
        p = P.get(pat)
        assert ipat == pat
        assert in_cp == "0" or p.complement_clause
        if p.targets:
            assert detail.startswith("target=") and detail[7:] in p.targets
    for p in P.PATTERNS:
        cps = [i[1] for i in run.info if i[0] == p.name]
        assert cps.count("1") == (len(cps) // 2 if p.complement_clause else 0), p.name


def test_split_sizes_scale_and_no_duplicates_across_splits(run):
    m = run.manifest
    assert len(run.split["dev"]) == len(run.split["test"]) == round(5000 * SCALE)
    comp = m["statistics"]["train_composition"]
    assert comp["in_distribution"] + comp["topicalised"] == round(40_000 * SCALE)
    assert comp["exposures"] == sum(P.scaled_exposures(p, SCALE) for p in P.lexical())
    assert comp["concatenated"] == round(1700 * SCALE)
    owner = {}
    for split, lines in run.split.items():
        for x in lines:
            assert owner.setdefault(x[0], split) == split, (x[0], owner[x[0]], split)
    # repeats inside train: only the primitive exposures and in-distribution redraws
    primitives = {w for p in P.lexical() if p.exposure == "primitive" for w in p.targets}
    for en, n in collections.Counter(x[0] for x in run.split["gen"]).items():
        assert n == 1, en
    assert all(x[0] in primitives or x[0][-1] in ".?" for x in run.split["train"])


# ----------------------------------------------------------------------------- hold-outs
ALLOWED_VERB_CATEGORIES = {
    "active_to_passive": {"V.trans.past", "V.trans.pres"},
    "passive_to_active": {"V.trans.pp"},
    "obj_omitted_transitive_to_transitive": {"V.intr.past"},
    "unacc_to_transitive": {"V.unacc.past"},
    "do_dative_to_pp_dative": {"V.dat_do.past"},
    "pp_dative_to_do_dative": {"V.dat_to.past"},
    "past_to_present_ditransitive": {"V.dat_to.past", "V.dat_do.past"},
    "transitive_to_present_ditransitive": {"V.trans.past", "V.trans.pres", "V.dat_to.past",
                                           "V.dat_do.past"},
    "past_to_present_infinitive": {"V.inf.past"},
    "transitive_to_present_infinitive": {"V.trans.past", "V.trans.pres", "V.inf.past"},
    "past_to_present_complement": {"V.cp.past"},
    "transitive_to_present_complement": {"V.trans.past", "V.trans.pres", "V.cp.past"},
}


def _occurrences(run, words):
    """Train lines (as trees) holding one of ``words``, and the leaves of the words."""
    out = []
    for en, _, _ in run.split["train"]:
        toks = set(tokenize(en)) | {tokenize(en)[0].lower()}
        hit = toks & set(words)
        if hit:
            out.append((en, run.tree(en)))
    return out


def _leaves(tree):
    from compsuite.data_prep.sget.trees import leaves
    return leaves(tree)


def test_target_words_only_in_their_training_contexts(run):
    lx = load()
    all_targets = set(P.target_words())
    for split in ("dev", "test"):
        for en, _, _ in run.split[split]:
            assert not (set(tokenize(en)) & all_targets), en
    for p in P.lexical():
        forms = set(p.targets)
        for w in p.targets:
            if w in lx.verbs:
                forms |= set(lx.verbs[w].forms().values())
        lines = _occurrences(run, forms)
        assert len(lines) == P.scaled_exposures(p, SCALE), p.name
        for en, tree in lines:
            if p.exposure == "primitive":
                assert en in p.targets, (p.name, en)
                continue
            if p.name in ALLOWED_VERB_CATEGORIES:
                cats = {leaf.category for leaf in _leaves(tree)
                        if getattr(leaf.entry, "base", None) in p.targets}
                assert cats and cats <= ALLOWED_VERB_CATEGORIES[p.name], (p.name, en, cats)
                continue
            roles = {(role, surface) for verb, role, noun, frame, surface in argument_pairs(tree)
                     if noun.english in p.targets}
            if p.name.startswith("subj_to_obj"):
                assert roles and all(s == "subject" for r, s in roles), (p.name, en, roles)
            else:  # obj_to_subj: object or recipient after the verb
                assert roles and all(s == "object" and r in ("theme", "recipient")
                                     for r, s in roles), (p.name, en, roles)


def test_gen_targets_in_their_generalisation_contexts(run):
    for (en, _, pat), (_, _, detail) in zip(run.split["gen"], run.info):
        p = P.get(pat)
        if not p.targets:
            continue
        target = detail[len("target="):]
        tree = run.tree(en)
        if p.name.startswith(("subj_to_obj", "prim_to_obj")):
            roles = {(r, s) for v, r, n, f, s in argument_pairs(tree) if n.english == target}
            assert roles and all(s == "object" for r, s in roles), (en, roles)
        elif p.name.startswith(("obj_to_subj", "prim_to_subj")):
            roles = {(r, s) for v, r, n, f, s in argument_pairs(tree) if n.english == target}
            assert roles and all(s == "subject" for r, s in roles), (en, roles)
        else:
            cats = {leaf.category for leaf in _leaves(tree)
                    if getattr(leaf.entry, "base", None) == target}
            assert cats and not (cats & ALLOWED_VERB_CATEGORIES.get(p.name, set())), (en, cats)


def test_modifiers_only_on_direct_objects_in_training(run):
    """No PP, relative clause or adjective on a subject or recipient outside gen."""
    for split in ("train", "dev"):
        for en, _, _ in run.split[split][:400]:
            tree = run.tree(en)
            if construction(tree) == "concat":
                continue
            for node, role in _subject_like_nps(tree):
                assert node.rule.name in ("np", "proper") and (
                    node.rule.name == "proper" or node.children[1].rule.name == "noun"), \
                    (en, role)


def _subject_like_nps(tree):
    """Subjects of clauses outside relative clauses (inside one, centre embedding puts a
    relative clause on the subject: the training set's CE recursion) and recipients."""
    from compsuite.data_prep.sget.grammar import Node
    out = []

    def walk(n, in_rc):
        if not isinstance(n, Node):
            return
        kids = n.children
        if n.rule.lhs.startswith("CLAUSE") and not in_rc:
            out.append((kids[0], "subject"))
        if n.rule.lhs.startswith(("VP", "VPI", "VPG")):
            name = n.rule.name
            if name == "dat_to" and isinstance(kids[3], Node):
                out.append((kids[3], "recipient"))
            if name == "dat_do" and isinstance(kids[1], Node):
                out.append((kids[1], "recipient"))
            if name.startswith("passive_to"):
                out.append((kids[3], "recipient"))
        for c in kids:
            walk(c, in_rc or n.rule.lhs == "RC")

    walk(tree, False)
    return out


def test_recursion_depths(run):
    for split in ("train", "dev", "test"):
        for en, _, _ in run.split[split]:
            d = depths(run.tree(en))
            assert set(d.values()) <= TRAIN_DEPTHS, (split, en, d)
    for (en, _, pat), (_, in_cp, detail) in zip(run.split["gen"], run.info):
        p = P.get(pat)
        d = depths(run.tree(en))
        if p.recursion:
            assert d[p.recursion] in p.depths and detail == f"depth={d[p.recursion]}", (en, d)
            others = {k: v for k, v in d.items() if k != p.recursion}
        else:
            others = d
        assert set(others.values()) <= TRAIN_DEPTHS, (pat, en, d)
        if in_cp == "1":
            assert d["cp"] >= 1


def test_no_content_word_twice(run):
    for split, lines in run.split.items():
        for en, _, _ in lines:
            words = content_words(run.tree(en))
            assert len(words) == len(set(words)), (split, en)


# ----------------------------------------------------------------------------- switches
def test_concatenation_and_its_switch(run, variants):
    longest_gen = max(n_words(x[0]) for x in run.split["gen"])
    concat = [x[0] for x in run.split["train"] if construction(run.tree(x[0])) == "concat"]
    assert len(concat) == run.manifest["statistics"]["concatenation"]["count"] > 0
    assert all(n_words(en) > longest_gen for en in concat)
    assert run.manifest["statistics"]["concatenation"]["longest_gen_sentence_words"] == longest_gen
    nc = variants["noconcat"]
    assert nc.manifest["statistics"]["concatenation"]["count"] == 0
    with_c = collections.Counter(x[0] for x in run.split["train"])
    without = collections.Counter(x[0] for x in nc.split["train"])
    assert with_c - without == collections.Counter(concat) and not (without - with_c)
    assert max(n_words(x[0]) for x in nc.split["train"]) <= longest_gen
    assert (run.path / "gen.txt").read_bytes() == (nc.path / "gen.txt").read_bytes()


def _violations(r, lines):
    bad = []
    for en in lines:
        for verb, role, noun, frame, surface in argument_pairs(r.tree(en)):
            if not selection.compatible(verb, role, noun, True, frame=frame, surface=surface):
                bad.append((en, verb.base, role, noun.english))
    return bad


def test_selectional_restrictions_and_switch(run, variants):
    assert selection.check() == []
    pairs = set(selection.pairs())
    assert ("eat", "cake") in pairs and ("eat", "chair") not in pairs
    sample = [x[0] for s in ("train", "dev", "gen") for x in run.split[s][:300]]
    bad = _violations(run, sample)
    # a relative clause's head is the theme of two verbs; when no verb takes it twice
    # the paper keeps one pair, and the manifest counts those sentences
    allowed = run.manifest["statistics"]["selectional_restrictions"][
        "relative_clause_heads_with_one_pair_only"]
    assert len(bad) <= allowed, bad[:5]
    for en, verb, role, noun in bad:
        assert "that" in en.split()
    free = variants["free"]
    assert (free.path / "train.txt").read_bytes() != (run.path / "train.txt").read_bytes()
    assert free.manifest["args"]["restrictions"] is False
    free_bad = _violations(free, [x[0] for x in free.split["train"][:300]])
    assert len(free_bad) > len(bad)
    # animacy holds with the switch off too (agents and recipients animate)
    for en in [x[0] for x in free.split["train"][:300]]:
        for verb, role, noun, frame, surface in argument_pairs(free.tree(en)):
            if role in ("agent", "recipient"):
                assert noun.cls == "animate", en


# ----------------------------------------------------------------------------- translation
def test_every_line_translates_to_its_japanese(run):
    for split, lines in run.split.items():
        for en, ja, _ in lines:
            assert translate(en) == ja, (split, en)
    for split, v in run.manifest["verification"].items():
        assert v["mismatches"] == 0, v["examples"]
    assert not [k for k in run.manifest["dropped"] if "bug" in k]


# ----------------------------------------------------------------------------- manifest
def test_manifest_matches_the_files(run):
    from compsuite.foundation.io import sha256_file

    m = json.loads((run.path / "manifest.json").read_text())
    assert m["counts"] == {s: len(v) for s, v in run.split.items()}
    assert m["per_pattern"] == dict(collections.Counter(x[2] for x in run.split["gen"]))
    for f, digest in m["sha256"].items():
        assert sha256_file(run.path / f) == digest
    assert set(m["sha256"]) == set(FILES)
    assert m["args"] == {"seed": 3, "restrictions": True, "concatenation": True, "scale": SCALE}
    lexs = m["statistics"]["lexicon"]
    assert lexs["lexicon"] == {"proper_nouns": 123, "common_nouns": 423, "verbs": 178,
                               "adjectives": 43}
    assert m["statistics"]["train"]["length_words"]["n"] == len(run.split["train"])
    topic = m["statistics"]["topicalisation"]
    assert topic["topicalised"] == round(0.1 * topic["eligible"])
    n_topic = sum(construction(run.tree(x[0])) == "topic" for x in run.split["train"])
    assert n_topic == topic["topicalised"]
    assert all(m["patterns"][p.name]["table10"] == p.label for p in P.PATTERNS)


def test_command_line(tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["--seed", "2", "--out", str(out), "--scale", "0.002", "--quiet"]) == 0
    assert "gen" in capsys.readouterr().out
    assert all((out / f).is_file() for f in FILES + ("manifest.json",))
    assert main(["--out", str(tmp_path / "x"), "--scale", "2", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "scale must be in (0, 1]" in err and "Traceback" not in err
    with pytest.raises(DataError):
        generate(tmp_path / "y", seed="1", scale=0.01, show=False)


# ----------------------------------------------------------------------------- reference
def _shares(labels):
    c = collections.Counter(labels)
    n = sum(c.values())
    return {k: v / n for k, v in c.items()}


def _tvd(a, b):
    return 0.5 * sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b))


def test_distribution_resembles_the_released_development_pairs(tmp_path):
    path = reference_path("sget", "dev.txt")
    ref = [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines()]
    lx = load()
    ref_trees = []
    for en in ref[:2000]:
        try:
            ref_trees.append(parse(tokenize(en), lx))
        except Exception:
            pass
    m = generate(tmp_path / "ref", seed=1, scale=0.1, show=False,
                 concatenation=False)
    ours = [line.split("\t")[0] for line in
            (tmp_path / "ref" / "dev.txt").read_text(encoding="utf-8").splitlines()]
    train = m["statistics"]["train"]
    ref_len, our_len = [n_words(e) for e in ref], [n_words(e) for e in ours]
    ref_cons = _shares(construction(t) for t in ref_trees)
    our_cons = {k: v / len(ours) for k, v in m["statistics"]["dev"]["constructions"].items()}
    len_tvd = _tvd(_shares(ref_len), _shares(our_len))
    cons_tvd = _tvd(ref_cons, our_cons)
    ref_topic = sum(" , " in e for e in ref) / len(ref)
    train_topic = m["statistics"]["topicalisation"]["share_of_train"]
    ref_depth = collections.Counter(max(depths(t).values()) for t in ref_trees)
    print(f"\nlength (words): reference mean {sum(ref_len) / len(ref_len):.2f}, ours "
          f"{sum(our_len) / len(our_len):.2f}; total variation {len_tvd:.3f}")
    print(f"constructions: total variation {cons_tvd:.3f}")
    for k in sorted(set(ref_cons) | set(our_cons), key=lambda k: -ref_cons.get(k, 0)):
        print(f"  {k:14s} reference {ref_cons.get(k, 0):6.1%}  ours {our_cons.get(k, 0):6.1%}")
    print(f"topicalised: reference dev {ref_topic:.2%}; ours dev "
          f"{our_cons.get('topic', 0):.2%}, train {train_topic:.2%} (released train ~3%)")
    print(f"max recursion depth: reference {dict(sorted(ref_depth.items()))}, ours dev "
          f"{m['statistics']['dev']['depths']}")
    print(f"repeated lines in dev: reference {len(ref) - len(set(ref))} of {len(ref)}, ours "
          f"{m['statistics']['dev']['repeated_lines']} of {len(ours)}")
    assert abs(sum(our_len) / len(our_len) - sum(ref_len) / len(ref_len)) < 1.0
    assert len_tvd < 0.15
    assert cons_tvd < 0.12
    assert abs(our_cons.get("topic", 0) - ref_topic) < 0.01
    assert 0.002 < train_topic < 0.05
    assert train["length_words"]["max"] <= max(ref_len) + 10
