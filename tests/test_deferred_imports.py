"""The startup hook defers the three libraries that fairseq and OpenNMT-py import at
their top only to call later (compsuite/_startup_hook.py): a toolkit command starts
without them, and the toolkit's functions that use them give the library's own results."""
import json
import os
import subprocess
import sys

PROGRAM = r"""
import json, sys
import numpy as np
import fairseq_cli.train, fairseq_cli.generate, fairseq_cli.preprocess
import onmt.bin.train, onmt.bin.translate, onmt.bin.build_vocab
loaded = {name: name in sys.modules for name in ("sklearn", "sklearn.metrics", "scipy.stats", "spacy")}
import fairseq.criterions.sentence_prediction as sp
import fairseq.tasks.audio_classification as ac
import onmt.transforms.terminology as term
preds, labels = np.array([1, 0, 1, 1, 0, 1]), np.array([1, 0, 0, 1, 1, 1])
x, y = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.5, 2.8, 4.5])
got = [sp.acc_and_f1(preds, labels)["f1"], sp.matthews_corrcoef(preds, labels),
       sp.pearson_and_spearman(x, y)["pearson"], sp.pearson_and_spearman(x, y)["spearmanr"]]
import scipy.stats, sklearn.metrics, spacy
want = [sklearn.metrics.f1_score(labels, preds), sklearn.metrics.matthews_corrcoef(labels, preds),
        scipy.stats.pearsonr(x, y)[0], scipy.stats.spearmanr(x, y)[0]]
print(json.dumps({"loaded": loaded, "got": [float(v) for v in got], "want": [float(v) for v in want],
                  "same_roc": ac.sklearn_metrics.roc_curve is sklearn.metrics.roc_curve,
                  "same_load": term.spacy.load is spacy.load,
                  "real": type(sys.modules["sklearn"]).__name__ == "module"}))
"""


def _run(**env) -> dict:
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                         env={**os.environ, **env}, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_toolkits_start_without_the_deferred_libraries_and_use_the_real_ones():
    seen = _run()
    assert not any(seen["loaded"].values()), seen["loaded"]
    assert seen["got"] == seen["want"]
    assert seen["same_roc"] and seen["same_load"] and seen["real"]


def test_switched_off_the_libraries_load_with_the_toolkit():
    seen = _run(COMPSUITE_NO_DEFERRED_IMPORTS="1")
    assert all(seen["loaded"].values()), seen["loaded"]
    assert seen["got"] == seen["want"]
