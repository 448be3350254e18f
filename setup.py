"""compsuite: compositional-generalisation evaluations of your own models: trained with
fairseq, OpenNMT-py or Hugging Face, a program of yours, or answer files.

The checkout's fixed folders are installed under one ``compsuite`` namespace, so
nothing named ``eval`` or ``data_prep`` lands at the top of site-packages:

    compsuite/        -> compsuite            (CLI, registry, pipelines)
    data_prep/        -> compsuite.data_prep  (generators and toolkit writers)
    eval/             -> compsuite.eval       (readers, metrics, reports)

``fairseq_plugins/`` is *not* an installed package: fairseq imports it itself from
``--user-dir fairseq_plugins`` as the top-level module ``fairseq_plugins`` (importing
it a second time under another name would register every plugin twice).  It is
shipped as package data so ``compsuite paths`` can print its location.
"""
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent


def packages_under(folder: str, prefix: str) -> dict[str, str]:
    out = {}
    for init in sorted((ROOT / folder).rglob("__init__.py")):
        rel = init.parent.relative_to(ROOT)
        parts = rel.parts[1:]
        out[".".join((prefix,) + parts)] = str(rel)
    return out


package_dir = {"compsuite": "compsuite"}
package_dir.update(packages_under("data_prep", "compsuite.data_prep"))
package_dir.update(packages_under("eval", "compsuite.eval"))
package_dir.update({k: v for k, v in packages_under("compsuite", "compsuite").items()})

setup(
    name="compsuite",
    version="0.2.0",
    description="Compositional-generalisation evaluations (PCFG SET, SGET, CTL++, "
    "paradox of compositionality, NLI compositionality-sensitivity) for fairseq, OpenNMT-py and "
    "Hugging Face models, programs and answer files",
    python_requires=">=3.11",
    package_dir=package_dir,
    packages=sorted(package_dir),
    # experiments, each study's paper_numbers.yaml and data tables (lexicons, idioms)
    package_data={"compsuite": ["experiments/*.yaml"],
                  **{pkg: ["*.yaml", "*.tsv"] for pkg in package_dir if pkg != "compsuite"}},
    include_package_data=True,
    # Exact versions live in constraints.txt; scripts/setup_env.sh installs them.
    install_requires=["pyyaml", "tqdm", "sacrebleu", "matplotlib", "numpy"],
    entry_points={"console_scripts": ["compsuite = compsuite.cli:main"]},
)
