"""The SGET paper's numbers in eval/sget/paper_numbers.yaml are the paper's own:
every figure is found in the paper's text (../shared/papers/kumon2024_sget.txt, a
plain-text rendering), printed as in the paper and in the same table row (rebuilt from
the YAML and compared with the table's lines, in order) or, for the running text, in
the same sentence.  Skips, naming the path, when the paper is not there."""
import re

import pytest

from compsuite.eval.reports.tables import paper_numbers

from conftest import REFERENCE

PAPERS = REFERENCE.parent / "papers"
PAPER = "kumon2024_sget.txt"
MODELS = ("transformer", "llama2")
METRICS = ("exact", "bleu", "partial")


def clean(line):
    """A line as printed: the LaTeX copies of a ``48.7(±1.6)`` cell dropped, arrows as →,
    no-break spaces as spaces, runs of spaces as one."""
    line = re.sub(r"subscript.*?end_POSTSUBSCRIPT", "", line)
    line = line.replace("\xa0", " ")
    line = re.sub(r"\s*\\rightarrow\s*", " → ", line)
    return re.sub(r"\s+", " ", line).strip()


@pytest.fixture(scope="module")
def lines():
    p = PAPERS / PAPER
    if not p.exists():
        pytest.skip(f"paper text not available: {p}")
    return [clean(ln) for ln in p.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def nums():
    return paper_numbers("sget")


def table_block(lines, n):
    """The lines of Table n: those before its caption, up to a blank line or the
    previous table's caption."""
    caption = [i for i, ln in enumerate(lines) if ln.startswith(f"Table {n}:")]
    assert len(caption) == 1, n
    i = caption[0]
    block = []
    while i > 0 and lines[i - 1] and not re.match(r"Table \d+:", lines[i - 1]):
        i -= 1
        block.insert(0, lines[i])
    return block


def assert_rows(lines, n, expected):
    """Table n's rows are exactly `expected`, in order; what precedes them is header
    (holds no figure), so no printed row is left unchecked."""
    block = table_block(lines, n)
    assert len(block) >= len(expected), (n, block)
    got = block[len(block) - len(expected):]
    for want, have in zip(expected, got):
        assert want == have, f"Table {n}: YAML gives {want!r}, the paper prints {have!r}"
    for head in block[:len(block) - len(expected)]:
        assert not re.search(r"\d\.\d", head), (n, head)


def ms(cell):
    """A mean ± std cell as printed: 48.7(±1.6)."""
    return f"{cell['mean']:.1f}(±{cell['std']:.1f})"


def figs(per):
    """Exact, BLEU, Partial of one model as printed; a lost (null) cell is not printed."""
    return [f"{per[m]:.1f}" for m in METRICS if per[m] is not None]


# ------------------------------------------------------------------ the tables
def test_yaml_loads_with_house_fields(nums):
    assert nums["unit"] == "percent"
    for key, block in nums.items():
        if isinstance(block, dict) and key not in ("model_labels",):
            assert block["source"].startswith("Kumon et al. (2024), "), key


def test_table2(lines, nums):
    t = nums["table2"]
    rows = []
    for model in ("lstm", "transformer", "llama2"):
        for split, head in (("test", nums["model_labels"][model] + " Test"), ("gen", "Gen.")):
            cell = t[model][split]
            rows.append(f"{head} {ms(cell['exact'])} {ms(cell['bleu'])}")
    assert_rows(lines, 2, rows)


def test_table3(lines, nums):
    t = nums["table3"]
    rows = []
    for model in MODELS:
        for i, (group, label) in enumerate(t["group_labels"].items()):
            head = f"{nums['model_labels'][model]} {label}" if i == 0 else label
            cell = t[model][group]
            rows.append(f"{head} {ms(cell['exact'])} {ms(cell['bleu'])}")
    assert_rows(lines, 3, rows)


def test_table4(lines, nums):
    rows = [f"{r['label']} {ms(r['transformer'])} {ms(r['llama2'])}"
            for r in nums["table4"]["rows"].values()]
    assert_rows(lines, 4, rows)


def test_table5(lines, nums):
    t = nums["table5"]
    rows = []
    for key in ("with_restrictions", "without_restrictions"):
        for split, head in (("test", t[key]["label"] + " Test"), ("gen", "Gen.")):
            cell = t[key][split]
            rows.append(f"{head} {ms(cell['exact'])} {ms(cell['bleu'])}")
    assert_rows(lines, 5, rows)


def test_table6(lines, nums):
    rows = [" ".join([r["label"]] + [ms(r[m][c]) for m in MODELS for c in ("w_concat", "wo_concat")])
            for r in nums["table6"]["rows"].values()]
    assert_rows(lines, 6, rows)


def test_table7(lines, nums):
    t = nums["table7"]
    rows = []
    for length, llabel in t["length_labels"].items():
        for concat, clabel in t["concat_labels"].items():
            cell = t[length][concat]
            rows.append(f"{llabel} {clabel} {ms(cell['transformer'])} {ms(cell['llama2'])}")
    assert_rows(lines, 7, rows)


def test_table10(lines, nums):
    labels = nums["table10_labels"]
    rows, category = [], None
    for pat in labels["patterns"]:
        if pat["category"] != category:
            category = pat["category"]
            rows.append(labels["categories"][category]["label"])
        r = nums["table10"]["rows"][pat["key"]]
        assert r["label"] == pat["label"], pat["key"]
        rows.append(" ".join([r["label"]] + figs(r["transformer"]) + figs(r["llama2"])))
    assert_rows(lines, 10, rows)


def test_table10_lost_cells_are_marked(nums):
    """A row printed with four figures has both Partial cells null, never a guess."""
    for key, r in nums["table10"]["rows"].items():
        lost = [r[m]["partial"] is None for m in MODELS]
        assert lost in ([False, False], [True, True]), key
        assert all(r[m][k] is not None for m in MODELS for k in ("exact", "bleu")), key


def test_table11(lines, nums):
    t10 = nums["table10"]["rows"]
    rows = []
    for key, r in nums["table11"]["rows"].items():
        assert r["pattern"] in t10 and r["label"].startswith(t10[r["pattern"]]["label"]), key
        rows.append(" ".join([r["label"]] + figs(r["transformer"]) + figs(r["llama2"])))
    assert_rows(lines, 11, rows)


# ------------------------------------------------------------ labels and groups
def test_table10_labels(lines, nums):
    labels = nums["table10_labels"]
    pats = labels["patterns"]
    assert [p["key"] for p in pats] == list(nums["table10"]["rows"])
    assert len(pats) == sum(nums["dataset"]["patterns"]["values"].values()) == 42
    assert len(labels["categories"]) == nums["dataset"]["categories"]["values"]["count"]
    for p in pats:
        assert p["group"] in (None, "lexical", "lexical_morphological", "structural"), p["key"]
        assert (p["group"] is None) == ("group_basis" not in p), p["key"]
        family = labels["categories"][p["category"]]["family"]
        if p["group"] == "structural" or family == "structural":
            assert p["group"] == family == "structural", p["key"]
    # the appendix row of each pattern, in Table 8 (lexical) or 9 (structural)
    for p in pats:
        app = p["appendix"]
        assert app["table"] == {"lexical": 8, "structural": 9}[labels["categories"][p["category"]]["family"]]
        block = table_block(lines, app["table"])
        at = [i for i, ln in enumerate(block) if ln.startswith(app["label"] + " ") or ln == app["label"]]
        assert at, (p["key"], app["label"])
        if "head" in app:
            assert any(ln == app["head"] for ln in block[:at[0]]), (p["key"], app["head"])
    # the generalization-set size: 2,000 per pattern, 1,000 for CP recursion and wh-questions
    sizes = nums["dataset"]
    assert sum(p["gen_size"] for p in pats) == sizes["generalization_set"]["values"]["total"]
    assert {p["gen_size"] for p in pats} == {sizes["generalization_set"]["values"]["per_pattern"],
                                              sizes["generalization_set_cp_recursion_and_wh"]["values"]["per_pattern"]}


def test_tables_agree_where_the_paper_repeats_a_figure(nums):
    t10 = nums["table10"]["rows"]
    for key, r in nums["table4"]["rows"].items():
        assert [r[m]["mean"] for m in MODELS] == [t10[key][m]["exact"] for m in MODELS], key
    for key, r in nums["table6"]["rows"].items():
        assert [r[m]["w_concat"]["mean"] for m in MODELS] == [t10[key][m]["exact"] for m in MODELS], key
    t5 = nums["table5"]["with_restrictions"]
    assert {s: t5[s] for s in ("test", "gen")} == nums["table2"]["llama2"]
    slog = nums["text_results"]["indirect_obj_extracted_rc_vs_slog"]
    assert slog["values"]["transformer_exact_sget"] == t10[slog["pattern"]]["transformer"]["exact"]


# ------------------------------------------------------------ the running text
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
         8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}


def printed_forms(v):
    """How a figure of the running text may be printed: 43,800 / 43800, 4.7, 1e-4, five."""
    if isinstance(v, bool):
        raise TypeError(v)
    if isinstance(v, int):
        return [f"{v:,}", str(v)] + ([WORDS[v]] if v in WORDS else [])
    out = [f"{v:.1f}", repr(v)]
    if v < 0.01:
        out.append(f"{v:.0e}".replace("e-0", "e-"))
    return out


def in_quote(v, quote):
    return any(re.search(rf"(?<![\w.,]){re.escape(f)}(?![\d]|[.,]\d)", quote)
               for f in printed_forms(v))


def text_entries(node, path=()):
    """Every {values, quote} entry under a block."""
    if isinstance(node, dict):
        if "quote" in node:
            yield path, node
        else:
            for k, v in node.items():
                yield from text_entries(v, path + (k,))


@pytest.mark.parametrize("block", ["text_results", "dataset", "lexicon", "training"])
def test_running_text_figures(lines, nums, block):
    entries = list(text_entries(nums[block]))
    assert entries, block
    for path, e in entries:
        quote = e["quote"]
        assert any(quote in ln for ln in lines), (block, path, quote)
        assert e["values"], (block, path)
        for name, v in e["values"].items():
            for x in (v if isinstance(v, list) else [v]):
                assert in_quote(x, quote), (block, path, name, x, quote)


def test_llama_checkpoint(lines, nums):
    assert any(nums["training"]["llama2"]["checkpoint"] in ln for ln in lines)
