"""Loading a case folder: the case, its profile, its parsed sources, validation.

`load_case_folder` builds the `LoadedCase` a run or an index build passes down (the manifest,
the profile and the sources read once); access checks ask `investigator.manifests` instead.

Light on purpose: `validate` and `init` use it without the loop, the indexes or LangGraph.
"""

from __future__ import annotations

from pathlib import Path

from state.case import Case, check_vocabulary, load_case
from state.errors import CaseError
from state.progress import Progress
from state.sources import Manifest
from tools.corpus import ParseContext, SourceDoc, load_all_sources
from tools.loaded import LoadedCase
from tools.manifest import load_manifest
from tools.profile import load_profile

__all__ = ["check_collection", "load_case_and_all_sources", "load_case_and_sources", "load_case_folder",
           "parse_context", "validate_case"]


def parse_context(case: Case, case_dir: Path) -> ParseContext:
    where = str(Path(case_dir) / "case.yaml")
    profile = load_profile(case.profile, where=where)
    check_vocabulary(case, profile, where)
    return ParseContext(profile=profile, year=case.window.start.year)


def load_case_and_sources(case_dir: Path) -> tuple[Case, list[SourceDoc], ParseContext]:
    """The case, its profile and its parsed sources; every problem is a CaseError."""
    case, docs, ctx = load_case_and_all_sources(case_dir)
    return case, [d for d in docs if d.set_aside is None], ctx


def load_case_and_all_sources(case_dir: Path) -> tuple[Case, list[SourceDoc], ParseContext]:
    """The same, with the untrusted sources left out (`set_aside`) still in the list."""
    case, ctx, _manifest, docs = _read(Path(case_dir))
    return case, docs, ctx


def _read(case_dir: Path) -> tuple[Case, ParseContext, Manifest, list[SourceDoc]]:
    """The case, its parse context, its manifest and every source parsed (the left-out ones too)."""
    case = load_case(case_dir)
    ctx = parse_context(case, case_dir)
    manifest = load_manifest(case_dir)
    return case, ctx, manifest, load_all_sources(case_dir, manifest, ctx)


def load_case_folder(case_dir: Path, progress: Progress) -> LoadedCase:
    """The case loaded once for a run or a build: the sources it reads, and the untrusted ones left
    out (each named on `progress`); every problem is a CaseError."""
    case_dir = Path(case_dir)
    case, ctx, manifest, docs = _read(case_dir)
    aside = tuple(d for d in docs if d.set_aside is not None)
    for d in aside:
        progress(f"left out untrusted source {d.id} ({d.entry.path}): {d.set_aside}")
    return LoadedCase(case=case, case_dir=case_dir, manifest=manifest, ctx=ctx,
                      docs=tuple(d for d in docs if d.set_aside is None), aside=aside)


def validate_case(case_dir: Path) -> Case:
    """Validate `case.yaml`, the profile, the manifest, every source file and, when there are,
    `collection.yaml` and `expected.yaml`; raises CaseError."""
    case = load_case_and_sources(case_dir)[0]
    check_collection(Path(case_dir))
    check_expected(Path(case_dir))
    return case


def check_expected(case_dir: Path) -> None:
    """`expected.yaml`, the gold answers `eval` scores against, when present, is the documented format
    (case-format.md): a gold the runtime can never match is refused before any run."""
    from state.expected import load_expected

    load_expected(case_dir)


def check_collection(case_dir: Path) -> None:
    """`collection.yaml` (written by `collect`), when present, is the documented format (case-format.md §11)."""
    from pydantic import ValidationError

    import yaml

    from state import yamlio
    from state.casefiles import read_text_file
    from state.collection import Collection
    from state.limits import YAML_BYTES

    path = case_dir / "collection.yaml"
    if not path.exists():
        return
    try:
        data = yamlio.loads(read_text_file(path, YAML_BYTES))
    except (ValueError, yaml.YAMLError):
        raise CaseError(str(path), "<document>", "valid YAML (investigator/collection@1)") from None
    try:
        Collection.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise CaseError(str(path), ".".join(str(x) for x in err["loc"]) or "<document>",
                        err["msg"].removeprefix("Value error, ")) from None
