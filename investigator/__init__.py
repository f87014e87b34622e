"""Investigator: agentic multi-hop investigation of incident alerts (the composition root).

The public API, imported lazily (PEP 562) so that `import investigator` and the CLI's light
commands start without the model, the indexes or the loop:

* `Investigator`: validate, index, run, resume, grant and report (`investigator.runtime`);
* `Workspace`: a workspace's runs, reports and checkpoint history from the store alone;
* `Settings`: where the store, checkpoints and indexes live;
* `validate_case`, `RunResult`;
* `Report`, `build_report`, `write_report`, `render_markdown`, `report_json_schema`
  (report.json's model and JSON Schema);
* `generate`: seeded synthetic cases with their gold answers.

`__version__` is the installed package's version (looked up on first use).
"""

from __future__ import annotations

from state.lazy import lazy_exports

_EXPORTS = {
    "Investigator": "runtime",
    "RunResult": "runtime",
    "validate_case": "runtime",
    "Workspace": "workspace",
    "Settings": "config",
    "Report": "report_model",
    "build_report": "report",
    "write_report": "report_files",
    "render_markdown": "report_md",
    "report_json_schema": "report_model",
    "generate": "generator",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # ~35 ms: only when asked

    try:
        return version("investigator")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals(), computed={"__version__": _version})
