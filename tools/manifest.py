"""A case's manifest (`sources.yaml`): which sources there are, and who may read each.

Kept apart from `tools.corpus` (which imports every format's parser) so that re-checking access
(`show`, `grant`, the access checks of a run) reads the manifest without them. Parsed on every
call: what is worth keeping is kept by the caller (`investigator.loading`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from state.casefiles import read_yaml, validation_to_case_error
from state.errors import CaseError
from state.limits import SOURCES
from state.sources import Manifest

__all__ = ["load_manifest"]

def load_manifest(case_dir: Path) -> Manifest:
    """The manifest as it is on disk now; a bad one is a CaseError."""
    path = (Path(case_dir) / "sources.yaml").resolve()
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise CaseError(str(path), "<document>", "a mapping with 'format' and 'sources'")
    listed = data.get("sources")
    if isinstance(listed, list) and len(listed) > (cap := SOURCES.value()):
        raise CaseError(str(path), "sources", f"{SOURCES.describe(cap)}; this one lists {len(listed)}")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise validation_to_case_error(path, exc) from None
