"""The toolkits' noise kept off the terminal when a toolkit runs in-process
(compsuite/toolkit_noise.py): each message it filters is dropped, anything else kept."""
import logging
import sys
import warnings
from contextlib import contextmanager

import pytest

from compsuite import toolkit_noise as noise

PIN = ("'pin_memory' argument is set as true but no accelerator is found, then device "
       "pinned memory won't be used.")
#: (category, message, module) as the toolkits and torch emitted them on this machine
NOISE = [
    (UserWarning, PIN, "torch.utils.data.dataloader"),
    (FutureWarning, "`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                    "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
     "onmt.modules.sparse_activations"),
    (FutureWarning, "`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                    "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
     "onmt.modules.sru"),
    (UserWarning, "dropout option adds dropout after all but last recurrent layer, so non-zero "
                  "dropout expects num_layers greater than 1, but got dropout=0.3 and "
                  "num_layers=1", "torch.nn.modules.rnn"),
]
#: close to the noise, but not it: kept
KEPT = [
    (UserWarning, "this DataLoader will create 4 worker processes", "torch.utils.data.dataloader"),
    (UserWarning, PIN, "compsuite.eval.somewhere"),          # the message from elsewhere
    (RuntimeWarning, PIN, "torch.utils.data.dataloader"),    # another category
    (FutureWarning, "`torch.cuda.amp.GradScaler(args...)` is deprecated.", "onmt.utils.optimizers"),
    (RuntimeWarning, "overflow encountered in exp", "numpy"),
]


def emitted(cases) -> list[str]:
    """The messages of ``cases`` that get through with the filters installed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("always")
        noise.filter_warnings()
        for category, message, module in cases:
            warnings.warn_explicit(message, category, module.replace(".", "/") + ".py", 1,
                                   module=module)
    return [str(w.message) for w in caught]


def test_the_noise_is_dropped_and_other_warnings_kept():
    assert emitted(NOISE) == []
    assert emitted(KEPT) == [m for _, m, _ in KEPT]


def test_the_filters_are_added_once():
    with warnings.catch_warnings():
        noise.filter_warnings()
        n = len(warnings.filters)
        noise.filter_warnings()
        assert len(warnings.filters) == n


def test_torchs_own_pin_memory_warning_is_dropped():
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    if getattr(torch, "accelerator", None) is None or torch.accelerator.is_available():
        pytest.skip("torch warns about pin_memory only without an accelerator")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        list(DataLoader([1, 2], pin_memory=True))
    assert any("pin_memory" in str(w.message) for w in caught)      # the warning is real
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        noise.filter_warnings()
        list(DataLoader([1, 2], pin_memory=True))
    assert not any("pin_memory" in str(w.message) for w in caught)


NOISY_TOOLKIT = """\
import logging
logging.basicConfig(level=logging.DEBUG)     # what fairseq's import does
logging.getLogger(__name__ + ".tasks").info("Please install tensorboardX")
"""


@pytest.fixture
def noisy_modules(monkeypatch, tmp_path):
    """Two importable modules whose import configures the root logger."""
    for name in ("noisy_toolkit", "noisy_control"):
        (tmp_path / f"{name}.py").write_text(NOISY_TOOLKIT)
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in ("noisy_toolkit", "noisy_control"):
        sys.modules.pop(name, None)


@contextmanager
def bare_root():
    """The root logger with no handlers and its default level, as in the command line
    (pytest's own handlers set aside in the same list, and restored)."""
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    root.handlers.clear()
    root.setLevel(logging.WARNING)
    try:
        yield root
    finally:
        root.handlers[:] = saved
        root.setLevel(level)


def test_a_toolkit_import_leaves_the_root_logger_alone(noisy_modules, capsys):
    with bare_root() as root:
        import noisy_control  # noqa: F401  (the control: a plain import configures the root)

        assert root.handlers and root.level == logging.DEBUG
        assert "tensorboardX" in capsys.readouterr().err
    with bare_root() as root:
        noise.import_toolkit("noisy_toolkit")
        assert root.handlers == [] and root.level == logging.WARNING
        logging.getLogger("some.library").info("an info record")
        logging.getLogger("some.library").warning("a warning")
        logging.getLogger("some.library").error("an error")
    err = capsys.readouterr().err
    assert "tensorboardX" not in err and "an info record" not in err
    assert "a warning" in err and "an error" in err


def test_a_toolkit_logger_keeps_its_warnings_and_errors(capsys):
    logger = logging.getLogger("noisy_toolkit_logger")
    try:
        noise.quiet_loggers(logger.name)
        # what OpenNMT-py's inference engine does with its logger on every model loaded
        logger.setLevel(logging.INFO)
        logger.handlers = [logging.StreamHandler()]
        logger.info("Loading checkpoint from model_step_12.pt")
        logger.warning("a warning")
        logger.error("an error")
        err = capsys.readouterr().err
        assert "Loading checkpoint" not in err
        assert "a warning" in err and "an error" in err
    finally:
        logger.handlers, logger.filters = [], []
        logger.setLevel(logging.NOTSET)
