"""The C scanner that is built is the one the loaders read (apart from test_accel.py,
which skips everything when no scanner is in use)."""

from __future__ import annotations

import importlib
import shutil
import sys
from types import ModuleType

import pytest

from mcptrace.loaders import accel


def test_a_compiler_gives_a_scanner_of_the_interface_the_loaders_read() -> None:
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler: the scanner is not built")
    built = importlib.import_module("mcptrace._scan")
    assert built.INTERFACE == accel.SCAN_INTERFACE, "rebuild: pip install -e ."
    assert accel._scan is built


def test_a_scanner_of_another_interface_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build left from an older checkout (columns the loaders no longer expect) falls
    back to the pure-Python path instead of failing at import."""
    stale = ModuleType("mcptrace._scan")
    stale.INTERFACE = accel.SCAN_INTERFACE - 1  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mcptrace._scan", stale)
    try:
        importlib.reload(accel)
        assert accel._scan is None
        assert not accel.available()
    finally:
        monkeypatch.undo()
        importlib.reload(accel)
    assert accel._scan is sys.modules.get("mcptrace._scan")
