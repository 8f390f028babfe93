"""Where the shared checkout (../shared beside the repository) is, and loading its scripts."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@cache
def load_script(path: Path) -> ModuleType:
    """Import a script as a module, once: a shared one (compare.py, ...) or one of the
    repository's scripts/ that a test drives."""
    spec = importlib.util.spec_from_file_location(f"shared_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module
