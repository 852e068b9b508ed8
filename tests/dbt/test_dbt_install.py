"""`dbt --version` and `dbt init` see the pyhudi plugin when the distribution is installed as a wheel.

dbt-core finds plugins for `--version` and `init` by globbing `<dir>/*/__version__.py` under the directories of
`importlib.util.find_spec("dbt.adapters")` (dbt/version.py, `_get_adapter_plugin_names`): that is only the
site-packages folder where dbt-core itself sits. A wheel install puts `dbt/adapters/pyhudi` there; an editable
install (`pip install -e .`) leaves it in the source tree, which dbt-core does not look at (dbt-core #8504, closed
as won't fix), so from an editable install neither command lists pyhudi although `dbt run` works.

The test builds the wheel and installs it, with dbt-core and dbt-adapters (the owners of `dbt/` and
`dbt/adapters/`), into a fresh virtualenv whose other dependencies come from this one (a `.pth` line), then runs
the real `dbt --version` and `dbt init`. It needs the package registry for the two dbt wheels, so it runs with
PYHUDI_LONG_TESTS=1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(os.environ.get("PYHUDI_LONG_TESTS") != "1",
                                reason="installs wheels from the package registry: PYHUDI_LONG_TESTS=1")


def _run(*args, **kw) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)
    assert done.returncode == 0, f"{' '.join(map(str, args))}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A virtualenv with dbt-core, dbt-adapters and the pyhudi wheel in its own site-packages."""
    root = tmp_path_factory.mktemp("install")
    source, wheels = root / "source", root / "wheels"   # a copy: pip builds in the source tree (egg-info, build/)
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "tests", "integration", "target", "logs", "build", "*.egg-info", "__pycache__"))
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source))
    venv = root / "venv"
    _run(sys.executable, "-m", "venv", str(venv))
    python = venv / "bin" / "python"
    site = Path(_run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    # Everything else (pyspark, pyarrow, ...) from this environment, after the new site-packages.
    (site / "zz_parent_env.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    pins = [f"dbt-core=={metadata.version('dbt-core')}", f"dbt-adapters=={metadata.version('dbt-adapters')}"]
    _run(str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", *pins, *map(str, wheels.glob("dbt_pyhudi-*.whl")))
    return venv


def test_dbt_version_lists_pyhudi(installed):
    out = _run(str(installed / "bin" / "dbt"), "--version", cwd=installed)
    plugins = out.split("Plugins:", 1)[-1]
    assert f"pyhudi: {metadata.version('dbt-pyhudi')}" in plugins, out


def test_dbt_init_offers_the_profile_template(installed, tmp_path):
    """`dbt init` lists pyhudi among the adapters and writes a profile from dbt/include/pyhudi/profile_template.yml
    (answers: the adapter's number, then the template's prompts)."""
    env = {**os.environ, "DBT_PROFILES_DIR": str(tmp_path / "profiles"), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    probe = subprocess.run([str(installed / "bin" / "dbt"), "init", "probe"], input="", capture_output=True,
                           text=True, cwd=tmp_path, env=env, timeout=300)
    listing = probe.stdout + probe.stderr
    choice = next((line.split("]")[0].strip(" [") for line in listing.splitlines() if "] pyhudi" in line), None)
    assert choice, f"dbt init does not offer pyhudi:\n{listing}"
    answers = f"{choice}\nanalytics\nlocal[2]\n\n1\n"
    _run(str(installed / "bin" / "dbt"), "init", "shop", input=answers, cwd=tmp_path, env=env)
    profile = (tmp_path / "profiles" / "profiles.yml").read_text()
    assert "type: pyhudi" in profile and "schema: analytics" in profile and "local[2]" in profile, profile
    assert (tmp_path / "shop" / "dbt_project.yml").exists()
