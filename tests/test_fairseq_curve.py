"""scripts/fairseq_curve.py: fairseq-train's validation lines as one table."""
import subprocess
import sys

from compsuite.foundation.checkout import ROOT

LOG = """2026-11-27 04:57:28 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 2.997 | accuracy 22.5 | wps 0 | bsz 40 | num_updates 6
2026-11-27 04:57:28 | INFO | test1 | epoch 001 | valid on 'test1' subset | loss 2.991 | accuracy 12.5 | bsz 40 | num_updates 6
2026-11-27 04:57:29 | INFO | train_inner | epoch 001:  3 / 5 loss=3.0, accuracy=12.0, num_updates=9
2026-11-27 04:57:30 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 2.9 | accuracy 30.25 | bsz 40 | num_updates 12
"""


def test_curve_table(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text(LOG)
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "fairseq_curve.py"), str(run),
                          "--names", "A", "--subsets", "valid,test1"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "| updates | A valid | A test1 |"
    assert out[2] == "| 6 | 22.5 | 12.5 |" and out[3] == "| 12 | 30.2 | – |"
    bad = subprocess.run([sys.executable, str(ROOT / "scripts" / "fairseq_curve.py"),
                          str(tmp_path / "none")], capture_output=True, text=True)
    assert bad.returncode != 0 and "no log at" in bad.stderr
