"""Published documentation stays in step with the code that it describes."""

from __future__ import annotations

import importlib.util
import re

from factories import ROOT, SAMPLES

import mcptrace
from mcptrace.schema import TABLES, tables_markdown


def test_tables_doc_is_generated_from_schema() -> None:
    published = (ROOT / "docs" / "tables.md").read_text()
    assert published == tables_markdown(), "run: python -m mcptrace.schema > docs/tables.md"


def test_every_column_has_a_doc_line() -> None:
    for table in TABLES:
        names = [c.name for c in table]
        assert len(names) == len(set(names)), table.name
        for col in table:
            assert col.doc and "\n" not in col.doc, (table.name, col.name)


def test_generated_samples_are_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location(
        "make_samples", ROOT / "scripts" / "make_sample_traces.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path, lines in module.outputs().items():
        assert path.read_bytes() == b"\n".join(lines) + b"\n", (
            f"{path}: run scripts/make_sample_traces.py"
        )


def test_readme_names_every_format_and_sample_readme_every_sample() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in mcptrace.FORMATS:
        assert f"`{name}`" in readme, name
    sample_readme = (SAMPLES / "README.md").read_text()
    for path in SAMPLES.rglob("*"):
        if path.is_file() and path.name != "README.md":
            rel = path.relative_to(SAMPLES).as_posix()
            assert re.search(re.escape(rel), sample_readme), (
                f"{rel} is not described in sample_traces/README.md"
            )
