"""report.json is a documented, versioned format: it loads back into `Report` and satisfies the shipped JSON Schema."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from importlib.metadata import version
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

import investigator
from investigator.report import SCHEMA, Report, report_json_schema
from investigator.report_files import write_report

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "docs" / "report.schema.json"
REGENERATE = "python -m investigator.cli schema --out docs/report.schema.json"


def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SHIPPED.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module")
def written(reference_run, tmp_path_factory) -> tuple[Report, str]:
    """The reference run's report as built now, and the report.json written from it."""
    inv, result, _out = reference_run
    report = inv.report(result.run_id)
    out = tmp_path_factory.mktemp("report")
    write_report(report, out)
    return report, (out / "report.json").read_text(encoding="utf-8")


def test_the_shipped_schema_is_the_one_the_report_model_generates():
    assert json.loads(SHIPPED.read_text()) == report_json_schema(), f"the Report model changed: run `{REGENERATE}`"


def test_the_schema_command_prints_the_shipped_schema():
    out = subprocess.run([sys.executable, "-m", "investigator.cli", "schema"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == SHIPPED.read_text()


def test_the_schema_names_the_report_format_and_describes_its_fields():
    schema = report_json_schema()
    assert schema["$id"] == SCHEMA and schema["$schema"].endswith("/2020-12/schema")
    assert schema["properties"]["schema"]["const"] == SCHEMA
    assert {"generated_at", "tool_version", "claims", "evidence"} <= set(schema["required"])
    assert schema["properties"]["generated_at"]["description"]


def test_report_json_loads_back_into_an_equal_report(written):
    report, text = written
    loaded = Report.model_validate_json(text)
    assert loaded == report
    assert loaded.to_json() == text


def test_report_json_satisfies_the_shipped_schema(written):
    _report, text = written
    _validator().validate(json.loads(text))


def test_report_json_says_when_it_was_generated_and_by_which_version(written):
    report, text = written
    data = json.loads(text)
    assert data["schema"] == SCHEMA
    assert data["tool_version"] == investigator.__version__ == version("investigator")
    generated = datetime.fromisoformat(data["generated_at"])
    assert generated.utcoffset() == timedelta(0)
    assert timedelta(0) <= datetime.now(UTC) - generated < timedelta(hours=1)
    assert generated == report.generated_at


@pytest.mark.parametrize("change", ["another version", "no timestamp", "an unknown field", "a claim without verdict"])
def test_a_document_that_is_not_a_report_of_this_version_is_rejected_by_both(written, change):
    _report, text = written
    data = json.loads(text)
    if change == "another version":
        data["schema"] = "investigator/report@2"
    elif change == "no timestamp":
        del data["generated_at"]
    elif change == "an unknown field":
        data["verdicts"] = {}
    else:
        del data["claims"][0]["verdict"]
    with pytest.raises(jsonschema.ValidationError):
        _validator().validate(data)
    with pytest.raises(ValidationError):
        Report.model_validate(data)


@pytest.mark.parametrize("model", ["EvidenceView", "ValueChange", "ClaimView", "Report"])
def test_each_field_docstring_is_its_schema_description(model):
    """The docstring under a field is its description, as pydantic's own `use_attribute_docstrings`
    reads it (the oracle), and no field is described otherwise: they cannot drift apart."""
    from pydantic._internal._docs_extraction import extract_docstrings_from_cls

    import investigator.report_model as report_model

    cls = getattr(report_model, model)
    docstrings = extract_docstrings_from_cls(cls, use_inspect=True)
    schema = report_json_schema()
    properties = (schema if model == "Report" else schema["$defs"][model])["properties"]
    described = {name: properties[field.alias or name].get("description") for name, field in cls.model_fields.items()}
    assert docstrings and described == {name: docstrings.get(name) for name in cls.model_fields}


def test_importing_the_report_model_reads_no_source_file():
    """The descriptions are read from the source when a schema is generated, not at import (`show`
    imports the model and never generates a schema)."""
    code = ("import linecache, investigator.report_model as m; "
            "print(sorted(f for f in linecache.cache if f.endswith('.py')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
