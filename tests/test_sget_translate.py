"""SGET rule-based translation: the grammar, the lexicon and its inflection, one
hand-made case per transduction rule, errors and the command line, and agreement with
the released development pairs (skipped when ``../shared/reference`` is absent)."""
import io
import time

import pytest

from conftest import reference_path

from compsuite.data_prep.sget import grammar, lexicon
from compsuite.data_prep.sget.lexicon import JaPredicate, LexiconError, compatible
from compsuite.data_prep.sget.translate import TranslationError, evaluate_on_file, \
    translate, translate_lines


# ----------------------------------------------------------------------------- rules
RULE_CASES = {
    # word order, が/を, tense
    "transitive past": ("The dog found a cake.", "犬がケーキを見つけた。"),
    "transitive present": ("Emma finds the cake.", "エマがケーキを見つける。"),
    "unergative": ("The hero walked.", "ヒーローが歩いた。"),
    "unaccusative alternation": ("The cup broke.", "カップが壊れた。"),
    "its transitive": ("Emma broke the cup.", "エマがカップを壊した。"),
    "object omitted": ("The hero examined.", "ヒーローが調べた。"),
    # irregular and verb-specific forms
    "knew: 知っていた": ("The dog knew Emma.", "犬がエマを知っていた。"),
    "knows: 知る": ("The dog knows Emma.", "犬がエマを知る。"),
    "liked: が, 好きだった": ("The dog liked the cake.", "犬がケーキが好きだった。"),
    "likes: 好きになる": ("The dog likes the cake.", "犬がケーキが好きになる。"),
    "noticed: に": ("The hero noticed the cake.", "ヒーローがケーキに気づいた。"),
    "froze: 凍らせた": ("Emma froze the cake.", "エマがケーキを凍らせた。"),
    "cooked (intransitive): 料理をした": ("The hero cooked.", "ヒーローが料理をした。"),
    "dusted: の": ("Emma dusted the desk.", "エマが机のほこりを払った。"),
    # ditransitives
    "to-dative": ("Emma gave the cake to a dog.", "エマがケーキを犬にあげた。"),
    "double object": ("Emma gave a dog the cake.", "エマが犬にケーキをあげた。"),
    "brought: 持ってきた": ("Emma brought the cake to a dog.", "エマがケーキを犬に持ってきた。"),
    # passives
    "passive": ("The cake was eaten.", "ケーキが食べられた。"),
    "passive by": ("The cake was eaten by a dog.", "ケーキが犬によって食べられた。"),
    "passive to by": ("The cake was given to Emma by a dog.",
                      "ケーキが犬によってエマにあげられた。"),
    "passive recipient": ("Emma was given the cake by a dog.",
                          "エマが犬によってケーキをあげられた。"),
    "passive of called": ("The cake was called.", "ケーキが電話された。"),
    "passive of brought": ("The cake was brought to Emma.", "ケーキがエマに持ってこられた。"),
    # modifiers
    "adjectives": ("Emma found the small red cup.", "エマが小さい赤いカップを見つけた。"),
    "PP": ("Emma found the cake on the table.", "エマがテーブルの上のケーキを見つけた。"),
    "stacked PPs reversed": ("Emma found the cake in a box beside the desk.",
                             "エマが机の横の箱の中のケーキを見つけた。"),
    "PP in subject": ("The dog in the house ran.", "家の中の犬が走った。"),
    "subject RC": ("The dog that ran found the cake.", "走った犬がケーキを見つけた。"),
    "object RC": ("Emma found the cake that the dog liked.",
                  "エマが犬が好きだったケーキを見つけた。"),
    "indirect object RC": ("Emma knew the dog that Liam gave the cake to.",
                           "エマがリアムがケーキをあげた犬を知っていた。"),
    "centre embedding": ("Emma found the cake that the dog that Liam saw ate.",
                         "エマがリアムが見た犬が食べたケーキを見つけた。"),
    "topicalisation": ("The cake on the table , Emma found.",
                       "テーブルの上のケーキは、エマが見つけた。"),
    "topicalised theme of a double object": ("The cake , Emma gave the dog.",
                                             "ケーキは、エマが犬にあげた。"),
    # complementisers
    "と": ("Emma said that the dog ran.", "エマが犬が走ったと言った。"),
    "ことに": ("Emma noticed that the dog ran.", "エマが犬が走ったことに気づいた。"),
    "ことを": ("Emma hoped that the dog ran.", "エマが犬が走ったことを願った。"),
    "CP recursion": ("Emma said that Liam thought that the dog ran.",
                     "エマがリアムが犬が走ったと思ったと言った。"),
    # infinitives
    "want: たかった": ("Emma wanted to find the cake.", "エマがケーキを見つけたかった。"),
    "want, present: たい": ("Emma wants to run.", "エマが走りたい。"),
    "try: ようとした": ("Emma tried to eat the cake.", "エマがケーキを食べようとした。"),
    "need: 必要があった": ("Emma needed to run.", "エマが走る必要があった。"),
    "hate: たくなかった": ("Emma hated to run.", "エマが走りたくなかった。"),
    "mean: つもりだった": ("Emma meant to give the dog a cake.",
                       "エマが犬にケーキをあげるつもりだった。"),
    "bring as infinitive: 持っていく": ("Emma wanted to bring the cake to Liam.",
                                   "エマがケーキをリアムに持っていきたかった。"),
    "infinitive with CP": ("Emma wanted to say that the dog ran.",
                           "エマが犬が走ったと言いたかった。"),
    # questions
    "wh subject": ("Who found the cake?", "誰がケーキを見つけたか？"),
    "wh passive subject": ("What was eaten?", "何が食べられたか？"),
    "wh object": ("What did Emma find?", "エマが何を見つけたか？"),
    "wh object of like, plain past": ("What did Emma like?", "エマが何が好きになったか？"),
    "wh indirect object": ("Who did Emma give the cake to?", "エマがケーキを誰にあげたか？"),
    "wh long movement": ("What did Emma think that the dog eat?",
                         "エマが犬が何を食べたと思ったか？"),
    # concatenation and primitives
    "concatenation": ("The dog ran the hero slept.", "犬が走り、ヒーローが眠った。"),
    "concatenation, three": ("Emma found the cake the dog knew Liam the hero wanted to run.",
                             "エマがケーキを見つけ、犬がリアムを知ってい、ヒーローが走りたかった。"),
    "primitive noun": ("dog", "犬"),
    "primitive verb": ("run", "走る"),
}


@pytest.mark.parametrize("rule", sorted(RULE_CASES))
def test_transduction_rule(rule):
    english, japanese = RULE_CASES[rule]
    assert translate(english) == japanese


def test_tokenisation_is_indifferent_to_spacing_and_initial_capital():
    assert translate("The dog found a cake .") == translate("the dog found a cake.")


# ----------------------------------------------------------------------------- errors
def test_unknown_word_is_named():
    with pytest.raises(TranslationError, match="unknown word 'zorblax'"):
        translate("The dog found a zorblax.")
    with pytest.raises(TranslationError, match="unknown word 'cake!'"):
        translate("The dog found a cake!")


def test_ungrammatical_order_names_the_position():
    with pytest.raises(TranslationError, match=r"at token 3 'the' \(expected .*'that'"):
        translate("The dog the cake found.")
    with pytest.raises(TranslationError, match="at the end of the sentence"):
        translate("The dog found")
    with pytest.raises(TranslationError, match="at token 4 'want'"):
        translate("Emma wanted to want to run.")


def test_translation_error_is_a_value_error():
    assert issubclass(TranslationError, ValueError)
    with pytest.raises(ValueError, match="empty sentence"):
        translate("   ")


def test_cli_keep_going_writes_empty_lines_and_counts():
    out, err = io.StringIO(), io.StringIO()
    lines = ["The dog ran.\n", "The dog zorbed.\n", "Who ran?\n", "Ran the dog.\n"]
    assert translate_lines(lines, out, err, keep_going=True) == 0
    assert out.getvalue().split("\n") == ["犬が走った。", "", "誰が走ったか？", "", ""]
    assert "2 of 4 line(s) could not be translated" in err.getvalue()


def test_cli_without_keep_going_stops_with_the_line_number(monkeypatch, capsys):
    from compsuite.data_prep.sget.translate import main

    monkeypatch.setattr("sys.stdin", io.StringIO("The dog ran.\nThe dog zorbed.\nWho ran?\n"))
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "犬が走った。\n"
    assert captured.err.startswith("line 2: unknown word 'zorbed'")
    assert "Traceback" not in captured.err


# ----------------------------------------------------------------------------- lexicon
@pytest.mark.parametrize("spec, past, cont, vol, passive", [
    ("見つける/v1", "見つけた", "見つけ", "見つけよう", "見つけられた"),
    ("知る/v5", "知った", "知り", "知ろう", "知られた"),
    ("書く/v5", "書いた", "書き", "書こう", "書かれた"),
    ("泳ぐ/v5", "泳いだ", "泳ぎ", "泳ごう", "泳がれた"),
    ("呼ぶ/v5", "呼んだ", "呼び", "呼ぼう", "呼ばれた"),
    ("言う/v5", "言った", "言い", "言おう", "言われた"),
    ("勉強する/vs", "勉強した", "勉強し", "勉強しよう", "勉強された"),
    ("持ってくる/vk", "持ってきた", "持ってき", "持ってこよう", "持ってこられた"),
    ("持っていく/v5k-s", "持っていった", "持っていき", "持っていこう", "持っていかれた"),
])
def test_japanese_inflection(spec, past, cont, vol, passive):
    p = JaPredicate.parse(spec)
    assert (p.past(), p.continuative(), p.volitional(), p.passive().past()) == \
        (past, cont, vol, passive)


def test_adjective_and_copula_inflection():
    assert [JaPredicate("たい", "adj").form(f) for f in ("nonpast", "past", "cont")] == \
        ["たい", "たかった", "たく"]
    assert [JaPredicate("つもりだ", "da").form(f) for f in ("nonpast", "past", "cont")] == \
        ["つもりだ", "つもりだった", "つもりで"]
    with pytest.raises(LexiconError):
        JaPredicate("たい", "adj").passive()
    with pytest.raises(LexiconError):
        JaPredicate("見る", "vs")


def test_lexicon_sizes_and_frames():
    sizes = lexicon.counts()
    # appendix B's vocabulary: 123 proper nouns, 423 common nouns, 178 verbs, 43 adjectives
    assert sizes == {"proper_nouns": 123, "common_nouns": 423, "verbs": 178,
                     "adjectives": 43}
    lx = lexicon.load()
    give, want, say = lx.verbs["give"], lx.verbs["want"], lx.verbs["say"]
    assert {"dat_to", "dat_do"} <= give.frames and want.inf.head.text == "たい"
    assert say.comp == "と" and lx.verbs["break"].frames == {"trans", "unacc"}
    assert lx.nouns["dog"].cls == "animate" and lx.nouns["cake"].cls == "inanimate"


def test_selectional_restrictions_and_switch():
    lx = lexicon.load()
    give, cake, dog = lx.verbs["give"], lx.nouns["cake"], lx.nouns["dog"]
    assert compatible(give, "subj", dog) and not compatible(give, "subj", cake)
    assert compatible(give, "obj", cake) and not compatible(give, "obj", dog)
    assert not compatible(give, "recipient", cake)
    assert compatible(give, "subj", cake, restrictions=False)


def test_malformed_lexicon_lines_are_named():
    with pytest.raises(LexiconError, match="x:1: unknown frame"):
        lexicon.parse_lines(["V\tgo\twent\tgoes\tgone\tfly\t行く/v5k-s"], origin="x")
    with pytest.raises(LexiconError, match="x:2: N 'cat' is listed twice"):
        lexicon.parse_lines(["N\tcat\t猫\tanimate", "N\tcat\t猫\tanimate"], origin="x")
    with pytest.raises(LexiconError, match="needs comp="):
        lexicon.parse_lines(["V\tsay\tsaid\tsays\tsaid\tcp\t言う/v5"])


# ----------------------------------------------------------------------------- grammar
def test_grammar_is_closed_and_pp_attaches_to_the_nearest_noun():
    grammar.check()
    tree = grammar.parse("Emma found the cake in a box on the desk .".split(), lexicon.load())
    assert all("PP" not in r.rhs for rules in grammar.GRAMMAR.values() for r in rules
               if r.lhs.startswith("VP"))
    # the object NP spans everything after the verb
    vp = tree.children[0].children[0].children[0].children[1]
    assert vp.rule.name == "trans" and vp.children[1].rule.name == "np_pp"


# ----------------------------------------------------------------------------- reference
def test_reproduces_the_released_development_pairs():
    path = reference_path("sget", "dev.txt")
    start = time.perf_counter()
    result = evaluate_on_file(path)
    seconds = time.perf_counter() - start
    print(f"\nSGET dev: {result['covered']}/{result['total']} covered "
          f"({result['coverage']:.2%}), {result['exact']} exact ({result['exact_match']:.2%} "
          f"of covered), {seconds:.1f} s")
    assert result["total"] == 5000
    assert result["coverage"] >= 0.95, result["failures"]
    assert result["exact_match"] >= 0.98, result["mismatches"]
