"""CTranslate2 behind the translator protocol: a Transformer checkpoint of either toolkit,
converted once (cached beside it, by its checksum), gives the toolkit's own outputs
line for line in float32, greedy and with a beam; what it cannot decode as the toolkit
does is decoded by the toolkit, with a one-line notice."""
from pathlib import Path

import pytest

from compsuite.models import ctranslate2 as cb
from compsuite.foundation.errors import ConfigError, DataError, UserError
from compsuite.models.decoding import decoding
from compsuite.studies.base import Run, unit_decoding
from compsuite.toolkits import get_backend, load_translator

from conftest import TINY_ONMT

ctranslate2 = pytest.importorskip("ctranslate2")
GENERATION = {"beam": 1, "batch_size": 64}
FAST = {"engine": "ctranslate2"}


@pytest.fixture(scope="module")
def transformers(tiny_runs, tiny_data, tmp_path_factory):
    """{toolkit: (run_dir, train_info)} of a tiny Transformer per toolkit."""
    run = Run("tiny-onmt-transformer", "transformer", "onmt", False,
              config="onmt_configs/pcfgset/transformer.yaml",
              profiles={"tiny": {**TINY_ONMT, "heads": 2, "transformer_ff": 32,
                                 "warmup_steps": 4, "learning_rate": 1.0}})
    run_dir = tmp_path_factory.mktemp("onmt_transformer")
    info = get_backend("onmt").train(run, "tiny", tiny_data, run_dir, seed=1, show=False)
    return {"fairseq": tiny_runs["fairseq"][1:], "onmt": (run_dir, info)}


def sources(tiny_data) -> list[str]:
    return (tiny_data.raw / "test.src").read_text().splitlines()


@pytest.mark.parametrize("beam", [1, 5])
@pytest.mark.parametrize("toolkit", ["fairseq", "onmt"])
def test_ctranslate2_gives_the_toolkit_outputs(toolkit, beam, transformers, tiny_data,
                                               tmp_path):
    """float32: the toolkit's command (fairseq-generate / onmt_translate) and
    CTranslate2 give the same outputs line for line, in memory and as the study's
    prediction files (sources and references read back alike)."""
    run_dir, info = transformers[toolkit]
    backend = get_backend(toolkit)
    generation = {**GENERATION, "beam": beam}
    expected = backend.predict(info, tiny_data, "test", decoding(generation), tmp_path / "toolkit",
                               show=False)
    tr = load_translator(info["checkpoint"], tiny_data.folder("fairseq"), batch_size=64,
                         beam=beam, **FAST)
    decodes_fast = not (toolkit == "onmt" and beam > 1)   # OpenNMT-py's beam: the toolkit
    assert cb.fast(tr) == decodes_fast
    assert tr.translate(sources(tiny_data)) == expected.hypotheses
    (tmp_path / "fast").mkdir()
    got = backend.predict(info, tiny_data, "test", decoding({**generation, **FAST}),
                          tmp_path / "fast",
                          show=False)
    assert (".ct2." in got.path.name) == decodes_fast
    assert got.hypotheses == expected.hypotheses
    assert got.references == expected.references and got.sources == expected.sources


def test_the_length_cap_is_the_toolkits(transformers, tiny_data):
    """At a short cap, still the toolkit's outputs: greedy decoding stops there alike in
    both engines; a beam search that reaches it is decoded again by the toolkit (the
    engines end such a search differently)."""
    run_dir, info = transformers["fairseq"]
    srcs = sources(tiny_data)
    for beam in (1, 5):
        settings = dict(batch_size=64, beam=beam, max_length=3)
        expected = load_translator(info["checkpoint"], tiny_data.folder("fairseq"), **settings)
        tr = load_translator(info["checkpoint"], tiny_data.folder("fairseq"), **settings, **FAST)
        assert tr.translate(srcs) == expected.translate(srcs)
        assert all(len(h.split()) <= 3 for h in tr.translate(srcs))


def test_conversion_is_cached_and_redone_when_the_checkpoint_changes(transformers, tiny_data,
                                                                      tmp_path):
    import shutil

    import torch

    from compsuite.torch_compat import allow_toolkit_checkpoints

    run_dir, info = transformers["onmt"]
    ckpt = tmp_path / "model.pt"
    shutil.copy(info["checkpoint"], ckpt)
    first = load_translator(ckpt, **FAST)
    cache = tmp_path / "model.pt.ct2"
    bin_time = (cache / "model.bin").stat().st_mtime_ns
    outputs = first.translate(sources(tiny_data))
    again = load_translator(ckpt, **FAST)
    assert (cache / "model.bin").stat().st_mtime_ns == bin_time, "converted twice"
    assert again.translate(sources(tiny_data)) == outputs
    allow_toolkit_checkpoints()
    state = torch.load(ckpt, map_location="cpu")
    for key, weight in state["generator"].items():
        state["generator"][key] = weight * 0 if key.endswith("weight") else weight
    torch.save(state, ckpt)
    changed = load_translator(ckpt, **FAST)
    assert (cache / "model.bin").stat().st_mtime_ns != bin_time, "the cache was reused"
    assert changed.translate(sources(tiny_data)) == load_translator(ckpt).translate(
        sources(tiny_data))
    left = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock"))
    assert left == ["model.pt", "model.pt.ct2"], "a conversion's work folders were left"


def test_an_lstm_is_decoded_by_its_toolkit_with_one_notice(tiny_runs, tiny_data, capsys,
                                                            monkeypatch):
    from compsuite.toolkits.onmt.translator import OnmtTranslator

    monkeypatch.setattr(cb, "_NOTICES", set())
    run, run_dir, info = tiny_runs["onmt"]   # an LSTM
    capsys.readouterr()
    for _ in range(2):
        tr = load_translator(info["checkpoint"], batch_size=64, **FAST)
        assert isinstance(tr.wrapped, OnmtTranslator)   # in its counting wrapper
    err = [line for line in capsys.readouterr().err.splitlines() if "CTranslate2" in line]
    assert err == ["compsuite: CTranslate2 cannot decode an OpenNMT-py brnn/rnn model (it "
                   "converts Transformers only): decoding with onmt instead"]


def test_int8_is_asked_for_and_labelled(transformers, tiny_data):
    run_dir, info = transformers["fairseq"]
    tr = load_translator(info["checkpoint"], tiny_data.folder("fairseq"), batch_size=64,
                         engine="ctranslate2", compute_type="int8")
    assert "compute:int8" in tr.signature and tr.name.startswith("ctranslate2-int8:")
    assert len(tr.translate(sources(tiny_data))) == len(sources(tiny_data))
    assert cb.prediction_tag(decoding({"engine": "ctranslate2", "compute_type": "int8"})
                             ) == "ct2-int8"
    default = load_translator(info["checkpoint"], tiny_data.folder("fairseq"), **FAST)
    assert "compute:float32|device:cpu" in default.signature


@pytest.mark.parametrize("generation, key", [
    ({"engine": "ctranslate3"}, "generation.engine"),
    ({"compute_type": "int8"}, "add engine: ctranslate2"),
    ({"engine": "ctranslate2", "compute_type": "float16"}, "not available on cpu"),
    ({"engine": "ctranslate2", "device": "tpu"}, "generation.device"),
])
def test_engine_settings_are_checked(generation, key):
    from compsuite.models.decoding import decoding

    with pytest.raises(ConfigError, match=key):
        decoding(generation)


def test_a_gpu_is_configured_with_float16(transformers, tiny_data, monkeypatch):
    """device: cuda with float16 reaches CTranslate2 as asked (a stand-in for its
    Translator: no GPU here); without a GPU the error says so."""
    run_dir, info = transformers["onmt"]
    cuda = {"engine": "ctranslate2", "device": "cuda", "compute_type": "float16"}
    with pytest.raises(UserError, match="finds no CUDA device"):
        load_translator(info["checkpoint"], **cuda)
    seen = {}

    class Translator:
        def __init__(self, folder, **kwargs):
            seen.update(kwargs, folder=folder)

    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 1)
    monkeypatch.setattr(ctranslate2, "Translator", Translator)
    tr = load_translator(info["checkpoint"], **cuda)
    assert seen["device"] == "cuda" and seen["compute_type"] == "float16"
    assert Path(seen["folder"]).name.endswith(".ct2")
    assert "compute:float16|device:cuda" in tr.signature


def test_run_refuses_a_gpu_it_lacks_before_any_work(tmp_path, monkeypatch):
    """``compsuite run --engine ctranslate2 --device cuda`` where CTranslate2 finds no
    CUDA device stops before the data or any training, naming the option; a program of
    the user's, which CTranslate2 never decodes, is not refused for it."""
    from compsuite.cli import _runner, build_parser, cmd_run

    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 0)
    folders = ["--runs-root", str(tmp_path / "runs"), "--data-root", str(tmp_path / "DATA"),
               "--results-root", str(tmp_path / "results")]
    p = build_parser()
    a = p.parse_args(["run", "pcfgset", "--profile", "tiny", "--engine", "ctranslate2",
                      "--device", "cuda", "--quiet", *folders])
    with pytest.raises(UserError) as e:
        cmd_run(a)
    assert str(e.value) == ("--device cuda, but CTranslate2 finds no CUDA device on this "
                            "machine; use --device cpu (with --compute-type float32 or int8) "
                            "or --device auto")
    assert not (tmp_path / "DATA").exists() and not (tmp_path / "runs").exists()
    a = p.parse_args(["run", "pcfgset", "--profile", "tiny", "--engine", "ctranslate2",
                      "--device", "cuda", "--model-cmd", "cat", *folders])
    runner = _runner(a)
    runner.check_devices(runner.plan(runs=a.runs))


def test_commands_take_the_engine():
    """An eval command's --engine options reach the translator; a precision without the
    engine is refused, naming the option."""
    import argparse

    from compsuite.commands import engine_arguments, engine_settings

    p = argparse.ArgumentParser()
    engine_arguments(p)
    a = p.parse_args(["--engine", "ctranslate2", "--compute-type", "int8"])
    assert engine_settings(a) == {"engine": "ctranslate2", "compute_type": "int8"}
    with pytest.raises(ConfigError, match="^--compute-type and --device are CTranslate2's "
                                          "options; add --engine ctranslate2 "):
        engine_settings(p.parse_args(["--compute-type", "int8"]))


def test_a_profile_asks_for_the_engine(tmp_path):
    """A profile's generation chooses the engine (what the studies' tests load with);
    a wrong setting is refused when the study file is read, naming the profile."""
    from compsuite.registry import load_study

    from test_registry import _PCFG

    f = tmp_path / "pcfgset.yaml"
    f.write_text(_PCFG % ", generation: {engine: ctranslate2, compute_type: int8}")
    assert load_study(f).profile("p").generation.engine == "ctranslate2"
    f.write_text(_PCFG % ", generation: {engine: ctranslate2, compute_type: float16}")
    with pytest.raises(ConfigError, match=r"profiles\.p\.generation\.compute_type: 'float16'"):
        load_study(f)


def test_sget_selection_is_the_same_with_either_engine(transformers, tiny_data, tmp_path):
    """SGET's checkpoint selection (every checkpoint's development translations, through
    the backend's predictions) scores and picks alike with the toolkit and CTranslate2."""
    import shutil

    from compsuite.eval.sget.selection import select_checkpoint

    run_dir, info = transformers["onmt"]
    backend = get_backend("onmt")
    assert len(backend.checkpoints(run_dir)) == 2
    picked = {}
    for name, extra in (("toolkit", {}), ("fast", FAST)):
        copy = tmp_path / name
        shutil.copytree(run_dir, copy)
        picked[name] = select_checkpoint(backend, copy, tiny_data,
                                         decoding({**GENERATION, **extra}),
                                         tiny_data.raw / "valid.tgt")
        preds = sorted(p.name for p in (copy / "selection").rglob("pred-valid*.txt"))
        assert preds == (["pred-valid.ct2.txt"] * 2 if extra else ["pred-valid.txt"] * 2)
    for key in ("by_step", "best_step", "best_score"):
        assert picked["fast"][key] == picked["toolkit"][key]


@pytest.mark.parametrize("engine", [{}, FAST])
def test_some_lines_decode_as_the_whole_split_does(engine, transformers, tiny_data, tmp_path):
    """A sample of a split (``predict_lines``, the translator in memory: what SGET's
    selection scores on a sample) gives the lines the split's prediction gives, with
    either engine; kept and read back."""
    run_dir, info = transformers["onmt"]
    backend = get_backend("onmt")
    whole = backend.predict(info, tiny_data, "test", decoding({**GENERATION, **engine}), tmp_path,
                            show=False).hypotheses
    lines = [len(whole) - 1, 0, 3, 7]
    out = tmp_path / "sample" / "pred-test.sample4.txt"
    got = backend.predict_lines(info, tiny_data, "test", lines, decoding({**GENERATION, **engine}),
                                out)
    assert got == [whole[i] for i in lines]
    assert out.read_text().splitlines() == got
    with pytest.raises(DataError, match=r"test\.src: \d+ lines, no line"):
        backend.predict_lines(info, tiny_data, "test", [10 ** 6], decoding(GENERATION),
                              tmp_path / "x")


def test_run_takes_the_engine_over_the_profile():
    """``compsuite run --engine ctranslate2`` decodes every unit of the profile with it
    (the units' generation; recorded in each result's provenance); a precision without
    the engine is refused before any work."""
    from compsuite.cli import _runner, build_parser

    p = build_parser()
    a = p.parse_args(["run", "pcfgset", "--profile", "tiny", "--engine", "ctranslate2",
                      "--compute-type", "int8"])
    runner = _runner(a)
    settings = unit_decoding(runner.profile, runner.study.run("transformer-fairseq"),
                             runner.decoding)
    assert (settings.engine, settings.compute_type) == ("ctranslate2", "int8")
    assert "engine" not in unit_decoding(runner.profile, runner.study.run("transformer-fairseq")
                                         ).given
    with pytest.raises(ConfigError, match="^--compute-type and --device are CTranslate2's "
                                          "options; add --engine ctranslate2 "):
        _runner(p.parse_args(["run", "pcfgset", "--profile", "tiny", "--device", "cuda"]))


def test_device_auto_is_the_gpu_where_there_is_one(transformers, monkeypatch):
    """``device: auto`` decodes on the CPU here (float32, the toolkit's outputs) and on a
    CUDA device where CTranslate2 finds one (a stand-in for its Translator); a precision
    the device found lacks is refused when the model is loaded, saying what was found."""
    run_dir, info = transformers["onmt"]
    auto = {"engine": "ctranslate2", "device": "auto"}
    assert "compute:float32|device:cpu" in load_translator(info["checkpoint"], **auto).signature
    with pytest.raises(UserError, match="float16 is not available on cpu .*no CUDA device"):
        load_translator(info["checkpoint"], **auto, compute_type="float16")
    from compsuite.models.ctranslate2 import check_device
    from compsuite.models.decoding import Decoding

    with pytest.raises(UserError, match="^--compute-type float16 is not available on cpu"):
        check_device(Decoding(engine="ctranslate2", device="auto", compute_type="float16"),
                     option=True)   # given on the command line: named as the option
    seen = {}

    class Translator:
        def __init__(self, folder, **kwargs):
            seen.update(kwargs)

    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 1)
    monkeypatch.setattr(ctranslate2, "Translator", Translator)
    tr = load_translator(info["checkpoint"], **auto)
    assert seen["device"] == "cuda" and seen["compute_type"] == "float32"
    assert "compute:float32|device:cuda" in tr.signature


#: the shipped profiles that decode with CTranslate2 by default, and the Transformer runs
#: it decodes there (the others fall back to their toolkit)
FAST_BY_DEFAULT = {("pcfgset", "quick"): {"transformer-fairseq"},
                   ("pcfgset", "paper"): {"transformer-fairseq"},
                   ("paradox", "quick"): {"transformer-fairseq"},
                   ("paradox", "paper"): {"transformer-fairseq"}}


def test_shipped_profiles_decode_transformers_with_ctranslate2_where_it_is_exact():
    """Every quick and paper profile whose Transformer runs CTranslate2 decodes as their
    toolkit does uses it by default on the run's device (float32); where it cannot
    (OpenNMT-py's beam search: SGET's paper profile, PCFG SET's paper OpenNMT-py runs),
    or did not give every output of the toolkit (SGET's quick Transformer: 56 of 15,200
    gen lines, docs/fast_decoding.md), the toolkit decodes; tiny profiles keep the
    toolkit."""
    from types import SimpleNamespace

    from compsuite.registry import load_study

    data = SimpleNamespace(folder=lambda name: Path("fairseq-bin"))   # not read
    for study in ("pcfgset", "paradox", "sget", "ctlpp", "nli"):
        st = load_study(Path("compsuite/experiments") / f"{study}.yaml")
        for profile in ("paper", "quick", "tiny"):
            settings = st.profile(profile).generation
            expected = FAST_BY_DEFAULT.get((study, profile), set())
            assert settings.fast == bool(expected), (study, profile)
            if not settings.fast:
                continue
            assert settings.device == "auto" and settings.compute_type is None
            decoded = set()
            for name in st.profile(profile).runs:
                run = st.run(name)
                conversion = get_backend(run.toolkit).conversion(data)
                if (run.architecture == "transformer" and conversion is not None
                        and conversion.why_not_decoding(settings.beam) is None):
                    decoded.add(name)
            assert decoded == expected, (study, profile)
    sget_paper = load_study(Path("compsuite/experiments/sget.yaml")).profile("paper")
    assert get_backend("onmt").conversion(None).why_not_decoding(
        sget_paper.generation.beam) is not None


def test_engine_toolkit_turns_the_profile_default_off():
    """``compsuite run --engine toolkit`` over a profile that decodes with CTranslate2:
    the toolkit decodes, and CTranslate2's own settings go with it."""
    from compsuite.cli import _runner, build_parser

    p = build_parser()
    quick = _runner(p.parse_args(["run", "paradox", "--profile", "quick"]))
    run = quick.study.run("transformer-fairseq")
    on = unit_decoding(quick.profile, run, quick.decoding)
    assert on.engine == "ctranslate2" and on.device == "auto"
    off = _runner(p.parse_args(["run", "paradox", "--profile", "quick", "--engine", "toolkit"]))
    assert off.decoding == {"engine": "toolkit"}
    assert unit_decoding(off.profile, run, off.decoding).given == {
        "beam": 5, "batch_size": 128, "max_length": 200, "engine": "toolkit"}
    with pytest.raises(ConfigError, match="^--compute-type and --device are CTranslate2's "
                                          "options; add --engine ctranslate2 "):
        _runner(p.parse_args(["run", "paradox", "--profile", "quick", "--engine", "toolkit",
                              "--device", "cpu"]))


def test_a_precision_alone_goes_over_a_profile_that_decodes_with_ctranslate2():
    """``--compute-type int8`` without ``--engine`` on a profile whose generation says
    ``engine: ctranslate2`` is that engine in int8; on a profile without it, or over a
    run outside the profile's (``--runs``), it is refused naming the options."""
    from compsuite.cli import _runner, build_parser

    p = build_parser()
    quick = _runner(p.parse_args(["run", "paradox", "--profile", "quick", "--compute-type",
                                  "int8"]))
    on = unit_decoding(quick.profile, quick.study.run("transformer-fairseq"), quick.decoding)
    assert (on.engine, on.compute_type, on.device) == ("ctranslate2", "int8", "auto")
    with pytest.raises(ConfigError, match="^--compute-type and --device are CTranslate2's "):
        _runner(p.parse_args(["run", "paradox", "--profile", "tiny", "--compute-type", "int8"]))
    tiny = _runner(p.parse_args(["run", "paradox", "--profile", "tiny"]))
    tiny.decoding = {"compute_type": "int8"}   # what --compute-type gives
    with pytest.raises(ConfigError, match="^--compute-type and --device are CTranslate2's "):
        tiny.plan(runs=["marian-hf"])   # not one of the profile's runs
