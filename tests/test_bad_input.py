"""Bad bytes and the silent cases (issue 24, point 3), through the command line: invalid
UTF-8 in any reader, prediction files for pairs that are not in the set, zero or
negative sizes, empty inputs, a checkpoint that does not fit the data, a file that is
not a checkpoint, and a study file whose module cannot be found.  Each is one line
``compsuite: error: ...`` (exit 1), or argparse's error for an option (exit 2)."""
import gzip
import io
import json
import shutil
import sys
from pathlib import Path

import pytest

from compsuite.cli import main
from compsuite.foundation.errors import DataError
from compsuite.foundation.io import iter_text

LATIN1 = "a b\ncafé x\n".encode("latin-1")        # é is 0xe9, line 2, byte 7
SJIS = "猫がいる\n".encode("shift_jis")              # 0x94 0x4c ..., line 1, byte 0


def cli(capsys, *args) -> tuple[int, str]:
    """The exit code and the stderr of ``compsuite ARGS`` run in this process."""
    try:
        rc = main([str(a) for a in args])
    except SystemExit as e:   # argparse
        rc = e.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err


@pytest.fixture(scope="module")
def nli_data(tmp_path_factory):
    """The NLI study's tiny dataset (seconds), for `compsuite eval nli score`."""
    from compsuite.registry import get_study

    study = get_study("nli")
    root = tmp_path_factory.mktemp("nli") / "DATA"
    return study.prepare("synthetic", 1, study.profile("tiny"), root, show=False).root


# ----------------------------------------------------------------------------- 1 bad bytes
def utf8_cases(tmp: Path, nli_root: Path):
    """(command line, bad file, line, byte offset, byte) per reader of a user's file."""
    (tmp / "latin1.txt").write_bytes(LATIN1)
    (tmp / "ref.txt").write_text("a b\ncafe x\n")
    (tmp / "sjis.ja").write_bytes(SJIS)
    (tmp / "sget").mkdir()
    (tmp / "sget" / "gen.txt").write_text("the cat is here\t猫がいる\tpp\n")
    (tmp / "tests").mkdir()
    (tmp / "tests" / "np_vp.en").write_text("a b .\nc d .\n")
    (tmp / "tests" / "np_vp.tsv").write_text("data\ttemplate\titem\tcondition\tinputs\n")
    return {
        "eval accuracy": (["eval", "accuracy", "--hyp", tmp / "latin1.txt", "--ref",
                           tmp / "ref.txt"], tmp / "latin1.txt", 2, 7, "0xe9"),
        "eval sget score": (["eval", "sget", "score", "--data", tmp / "sget", "--hyps",
                             tmp / "sjis.ja", "--no-partial"], tmp / "sjis.ja", 1, 0, "0x94"),
        "eval paradox score": (["eval", "paradox", "score", "--tests", tmp / "tests", "--test",
                                "np_vp", "--hyps", tmp / "latin1.txt"], tmp / "latin1.txt",
                               2, 7, "0xe9"),
        "eval nli score": (["eval", "nli", "score", "--data", nli_root, "--predictions",
                            tmp / "latin1.txt"], tmp / "latin1.txt", 2, 7, "0xe9"),
        "data nli adversaries": (["data", "nli", "adversaries", "--input", tmp / "latin1.txt",
                                  "--out", tmp / "adv"], tmp / "latin1.txt", 2, 7, "0xe9"),
        "data pcfgset interpret": (["data", "pcfgset", "interpret", "--input",
                                    tmp / "latin1.txt"], tmp / "latin1.txt", 2, 7, "0xe9"),
    }


@pytest.mark.parametrize("command", ["eval accuracy", "eval sget score", "eval paradox score",
                                     "eval nli score", "data nli adversaries",
                                     "data pcfgset interpret"])
def test_invalid_utf8_names_file_line_and_byte_offset(command, tmp_path, nli_data, capsys):
    args, path, line, offset, byte = utf8_cases(tmp_path, nli_data)[command]
    rc, err = cli(capsys, *args)
    assert rc == 1
    assert err.splitlines()[-1].startswith(
        f"compsuite: error: {path}: line {line} (byte offset {offset}): not valid UTF-8 "
        f"(byte {byte}: "), err


def test_invalid_utf8_in_gzip_on_stdin_and_in_a_study_file(tmp_path, monkeypatch, capsys):
    from compsuite.foundation.errors import ConfigError
    from compsuite.registry import load_study

    gz = tmp_path / "corpus.en.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(b"ok\n" * 3 + LATIN1)
    with pytest.raises(DataError, match=r"corpus\.en\.gz: line 5 \(byte offset 16 of the "
                                        r"uncompressed text\): not valid UTF-8 \(byte 0xe9: "
                                        r"invalid continuation byte\)"):
        list(iter_text(gz))
    stdin = io.TextIOWrapper(io.BytesIO(b"copy A1 B1\nreverse caf\xe9 B1\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    rc, err = cli(capsys, "data", "pcfgset", "interpret")
    assert rc == 1 and err.splitlines()[-1].startswith(
        "compsuite: error: <stdin>: line 2 (byte offset 22): not valid UTF-8 (byte 0xe9: ")
    (tmp_path / "mine.yaml").write_bytes(b"study: mine\ntitle: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"mine\.yaml: line 2 \(byte offset 22\): not valid "
                                          r"UTF-8 \(byte 0xe9"):
        load_study(tmp_path / "mine.yaml")


# ----------------------------------------------------------------------------- 2 unknown ids
def test_a_prediction_for_a_pair_not_in_the_set_names_file_and_line(tmp_path, nli_data,
                                                                     capsys):
    ids = (nli_data / "raw" / "test.pairid").read_text().split()
    preds = tmp_path / "preds.tsv"
    preds.write_text("".join(f"{i}\te\n" for i in ids[:5]) + "not-a-pair\tn\n"
                     + "".join(f"{i}\te\n" for i in ids[5:]))
    rc, err = cli(capsys, "eval", "nli", "score", "--data", nli_data, "--predictions", preds)
    assert rc == 1
    assert err.strip() == (f"compsuite: error: {preds}:6: pair 'not-a-pair' is not among the "
                           f"{len(ids)} pairs scored (1 of {len(ids) + 1} predictions are for "
                           "unknown pair ids: predictions of another set?)")


# ----------------------------------------------------------------------------- 3 sizes
SIZES = [
    ("data pcfgset generate --out X --n-pairs 0", "--n-pairs", "a positive integer", "0"),
    ("data pcfgset generate --out X --test overgeneralisation --exception-rate -0.1",
     "--exception-rate", "a positive number", "-0.1"),
    ("data ctlpp generate --variant A --out X --n-train 0", "--n-train", "a positive integer", "0"),
    ("data ctlpp generate --variant A --out X --n-test -1", "--n-test", "a positive integer", "-1"),
    ("data ctlpp generate --variant A --out X --max-length 0", "--max-length",
     "a positive integer", "0"),
    ("data ctlpp generate --variant S --out X --shared-functions -2", "--shared-functions",
     "an integer of 0 or more", "-2"),
    ("data nli synthetic --seed 1 --out X --dev 0", "--dev", "a positive integer", "0"),
    ("data paradox generate --seed 1 --out X --per-template 0", "--per-template",
     "a positive integer", "0"),
    ("data paradox tests --seed 1 --out X --n 0", "--n", "a positive integer", "0"),
    ("data paradox corpus --seed 1 --out X --train -5", "--train", "a positive integer", "-5"),
    ("data paradox natural --en E --nl N --out X --max-lines 0", "--max-lines",
     "a positive integer", "0"),
    ("data paradox opus --en E --nl N --flores F --out X --small-pairs 0", "--small-pairs",
     "a positive integer", "0"),
    ("data sget prepare --from-released D --out X --ja-vocab 0", "--ja-vocab",
     "a positive integer", "0"),
    ("eval sget score --data D --hyps H --batch-size 0", "--batch-size", "a positive integer",
     "0"),
    ("eval paradox score --tests T --test np_vp --hyps H --beam 0", "--beam",
     "a positive integer", "0"),
    ("eval pcfgset embeddings --checkpoint C --batch-size -1", "--batch-size",
     "a positive integer", "-1"),
]


@pytest.mark.parametrize("command, option, what, value", SIZES)
def test_zero_or_negative_sizes_are_errors(command, option, what, value, capsys):
    rc, err = cli(capsys, *command.split())
    assert rc == 2
    assert err.splitlines()[-1].endswith(f"error: argument {option}: expected {what}, "
                                         f"not {value}")


def test_zero_sizes_are_errors_in_the_library_too():
    from compsuite.data_prep.ctlpp import CTLConfig
    from compsuite.data_prep.pcfgset.dataset import write_corpus
    from compsuite.foundation.errors import ConfigError

    with pytest.raises(ConfigError, match="n_pairs must be a positive integer, not 0"):
        write_corpus(Path("unused"), "small", n_pairs=0)
    with pytest.raises(ConfigError, match="n_test must be a positive integer, not 0"):
        CTLConfig(variant="A", n_test=0)


# ----------------------------------------------------------------------------- 4 empty input
def test_an_empty_input_is_an_error(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    rc, err = cli(capsys, "data", "nli", "adversaries", "--input", empty, "--out",
                  tmp_path / "adv")
    assert rc == 1
    assert err.strip() == (f"compsuite: error: {empty}: file is empty (expected SNLI / "
                           "MultiNLI pairs, one JSON object a line)")
    assert not (tmp_path / "adv" / "manifest.json").exists()
    rc, err = cli(capsys, "data", "pcfgset", "interpret", "--input", empty)
    assert rc == 1 and err.strip() == f"compsuite: error: {empty}: file is empty"
    rc, err = cli(capsys, "data", "paradox", "natural", "--en", empty, "--nl", empty, "--out",
                  tmp_path / "natural")
    assert rc == 1 and err.strip() == f"compsuite: error: {empty} and {empty}: the files are empty"


# ----------------------------------------------------------------------------- 5 misfit checkpoint
def test_a_checkpoint_that_does_not_fit_the_data_names_both(tiny_runs, tiny_data, tmp_path,
                                                            capsys):
    _, _, info = tiny_runs["fairseq"]
    theirs, other = Path(tiny_data.folder("fairseq")), tmp_path / "other-bin"
    other.mkdir()
    for f in theirs.iterdir():   # the same splits, three more source words
        (other / f.name).symlink_to(f) if f.suffix in (".bin", ".idx") else shutil.copy(f, other)
    with open(other / "dict.src.txt", "a") as fh:
        fh.write("zz1 1\nzz2 1\nzz3 1\n")
    rows = len((theirs / "dict.src.txt").read_text().splitlines()) + 4   # + fairseq's specials
    rc, err = cli(capsys, "eval", "pcfgset", "embeddings", "--checkpoint", info["checkpoint"],
                  "--data", other)
    assert rc == 1
    assert err.splitlines()[-1] == (
        f"compsuite: error: checkpoint {info['checkpoint']} does not fit the data folder "
        f"{other}: the dictionary sizes differ (encoder.embed_tokens.weight: {rows}x16 in the "
        f"checkpoint, {rows + 3}x16 with the data's dictionaries); use the fairseq-bin folder "
        "the checkpoint was trained on")


# ----------------------------------------------------------------------------- 6 not a checkpoint
def test_not_a_checkpoint_says_what_was_expected(tmp_path, capsys):
    import fractions

    import torch

    (tmp_path / "notes.txt").write_text("my notes\n")
    torch.save({"x": fractions.Fraction(1, 3)}, tmp_path / "foreign.pt")
    for name, why in [("notes.txt", "torch cannot read it: not a file torch wrote, or a "
                                    "truncated one"),
                      ("foreign.pt", "it holds a fractions.Fraction, which no toolkit "
                                     "checkpoint holds")]:
        rc, err = cli(capsys, "eval", "pcfgset", "embeddings", "--checkpoint", tmp_path / name,
                      "--data", tmp_path)
        assert rc == 1
        assert err.strip() == (f"compsuite: error: {tmp_path / name}: not a checkpoint ({why}); "
                               "expected a fairseq or OpenNMT-py checkpoint, the .pt file "
                               "training writes (e.g. checkpoints/checkpoint_best.pt)")
        assert "weights_only" not in err


# ----------------------------------------------------------------------------- 7 study module
def test_a_study_file_names_its_module_or_the_error_says_how(tmp_path, monkeypatch, capsys):
    import os

    import yaml

    from compsuite.registry import EXPERIMENTS_DIR, load_study

    shutil.copy(EXPERIMENTS_DIR / "_base.yaml", tmp_path / "_base.yaml")
    raw = yaml.safe_load((EXPERIMENTS_DIR / "ctlpp.yaml").read_text(encoding="utf-8"))
    assert raw["module"] == "compsuite.studies.ctlpp"
    raw["study"] = "myctl"       # a copy under another name keeps its module
    (tmp_path / "myctl.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert load_study(tmp_path / "myctl.yaml").name == "myctl"
    del raw["module"]            # without it, the error says which key to add
    (tmp_path / "myctl.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    monkeypatch.setenv("COMPSUITE_EXPERIMENTS",
                       os.pathsep.join([str(tmp_path), os.environ.get("COMPSUITE_EXPERIMENTS",
                                                                      "")]))
    rc, err = cli(capsys, "list")
    assert rc == 1
    assert err.strip() == (
        f"compsuite: error: {tmp_path / 'myctl.yaml'}: study module 'compsuite.studies.myctl' "
        "not found; a study file names its module with 'module:' (without it, "
        "compsuite.studies.<study> is used): add 'module: <the module that exports STUDY>' "
        "to myctl.yaml")
