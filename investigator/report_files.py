"""Writing a report's files: report.json, report.md and report.html, each atomically."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING


from state.errors import ConfigError

if TYPE_CHECKING:  # `runs` imports this module: the access mask (numpy) comes with `show` only
    pass
from investigator.report_model import (
    Report,
)
from investigator.report_md import render_markdown


def check_out_folder(out: Path, option: str = "--out") -> None:
    """A folder the report can be written into, checked before a run starts (not after it finished):
    an existing folder that may be written, or one that can be created (its nearest existing parent is
    a folder that may be written). A file in the way, or a read-only place, is a ConfigError (exit 2)."""
    out = Path(out)
    if out.exists():
        if not out.is_dir():
            raise ConfigError(f"{option}: a folder to write the report into ({out} is a file)")
        if not _writable(out):
            raise ConfigError(f"{option}: a folder this process may write into ({out} is not writable)")
        return
    for parent in out.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"{option}: a folder that can be created ({parent} is a file)")
            if not _writable(parent):
                raise ConfigError(f"{option}: a folder that can be created ({parent} is not writable)")
            return


def _writable(folder: Path) -> bool:
    """Whether a file can be made in the folder: tried with an unnamed temporary file (nothing is left,
    and a read-only mount or a folder of another owner answers as it would for the report)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def write_report(r: Report, out: Path) -> list[Path]:
    """Write report.json, report.md and report.html atomically (a temp file renamed into place)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    from investigator.report_html import render_html  # the template engine loads only when a page is written

    written = []
    for name, text in (("report.json", r.to_json()), ("report.md", render_markdown(r)), ("report.html", render_html(r))):
        tmp = out / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out / name)
        written.append(out / name)
    return written
