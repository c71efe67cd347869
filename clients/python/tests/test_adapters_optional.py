"""The framework adapters are optional: skillsvc imports without them, and
importing an adapter without its framework names the extra to install.
(This venv has neither framework; make test-python-adapters tests the
adapters with them.)"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize(("module", "extra"), [("skillsvc.openai_agents", "openai-agents"), ("skillsvc.adk", "adk")])
def test_adapter_without_its_framework(module: str, extra: str) -> None:
    with pytest.raises(ImportError, match=rf"pip install 'skillsvc\[{extra}\]'"):
        importlib.import_module(module)


def test_skillsvc_imports_no_framework() -> None:
    code = "import sys, skillsvc, skillsvc.tools, skillsvc.runner; print(sorted(m for m in sys.modules if m.split('.')[0] == 'agents' or m.startswith('google.adk')))"
    assert subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip() == "[]"
