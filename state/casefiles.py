"""Reading the files of a case folder strictly: a regular UTF-8 file no larger than its limit, strict
YAML (a repeated key, a runaway alias or a syntax error names the line), and a validation problem
as file / dotted field / expectation. Every problem is a `CaseError`; a source's content is never
quoted back (the principal may not be allowed to read it).
"""

from __future__ import annotations

import stat
from datetime import timedelta
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ValidationError

from state import yamlio
from state._base import Frozen
from state.errors import CaseError
from state.limits import YAML_BYTES, Limit

__all__ = ["parse_yaml", "read_text_file", "read_yaml", "validation_to_case_error"]


def read_text_file(path: Path, limit: Limit, *, shown: str | None = None, field: str = "<file>") -> str:
    """A regular UTF-8 file's text, read no further than the limit; every problem is a CaseError.

    The size is checked before reading (and the read stops one byte past the limit, should the
    file grow meanwhile); a directory, a pipe or a device is refused (a pipe would block)."""
    path, where = Path(path), shown or str(path)
    cap = limit.value()
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise CaseError(where, field, "a file, not a directory")
        if not stat.S_ISREG(st.st_mode):
            raise CaseError(where, field, "a regular file (not a pipe, socket or device)")
        if st.st_size > cap:
            raise CaseError(where, "<file>", f"{limit.describe(cap)}; this one has {st.st_size} bytes")
        with path.open("rb") as fh:
            data = fh.read(cap + 1)
        if len(data) > cap:
            raise CaseError(where, "<file>", f"{limit.describe(cap)}; this one grew past it while read")
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise CaseError(where, "<file>", "UTF-8 text (this file is UTF-16: convert it, e.g. iconv -f UTF-16 -t UTF-8)")
        # a UTF-8 byte order mark is dropped; newlines as text mode reads them (citation offsets depend on this)
        return data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except FileNotFoundError:
        raise CaseError(where, field, "the file to exist") from None
    except UnicodeDecodeError as exc:
        raise CaseError(where, "<file>", f"UTF-8 text (byte {exc.start} is not; convert it, e.g. iconv -t UTF-8)") from None
    except PermissionError:
        raise CaseError(where, "<file>", "a file the runtime may read (permission denied)") from None
    except OSError as exc:  # a dangling link, a loop of links, a name too long...
        raise CaseError(where, field, f"a readable regular file ({exc.strerror or type(exc).__name__})") from None


def read_yaml(path: Path, *, limit: Limit = YAML_BYTES, quote: bool = True) -> object:
    """Parse one YAML file strictly; a syntax error or a duplicate key is a CaseError naming the line."""
    return parse_yaml(read_text_file(path, limit), str(path), quote=quote)


def parse_yaml(text: str, where: str, *, quote: bool = True, documents: Literal["one", "all"] = "one") -> object:
    """Strict YAML: a syntax error, a repeated key or a runaway alias is a CaseError naming the line.

    `quote=False` for a source's content: the message then names the line and what was expected
    but quotes nothing of the text (the principal may not be allowed to read it).
    `documents="all"`: a stream of `---`-separated documents, returned as a list."""
    try:
        return yamlio.loads(text) if documents == "one" else yamlio.loads_all(text)
    except yamlio.DuplicateKey as exc:
        got = f" (got {exc.key!r} twice)" if quote and len(repr(exc.key)) <= 80 else ""
        raise CaseError(where, f"line {exc.line}", f"each key once in a mapping{got}") from None
    except yamlio.TooComplex as exc:
        raise CaseError(where, f"line {exc.line}", exc.problem) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f"line {mark.line + 1}" if mark else "<document>"
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise CaseError(where, loc, f"valid YAML ({problem})" if quote else "valid YAML (a syntax error here)") from None


def validation_to_case_error(path: Path | str, exc: ValidationError, *, content_of: type[Frozen] | None = None
                             ) -> CaseError:
    """The first validation problem as file / dotted field / expectation.

    `content_of=Model` when the data is a source's content (front matter, a record, a sidecar):
    the value is never quoted, and a key that is not one of the model's fields is shown as
    `<key>` (a key is content too)."""
    err = exc.errors()[0]
    parts = [str(p) for p in err["loc"]]
    if content_of is not None:
        known = _field_names(content_of)
        parts = [p if p.isdigit() or p in known else "<key>" for p in parts]
    loc = ".".join(parts) or "<document>"
    msg = err["msg"].removeprefix("Value error, ")
    got = err.get("input")
    if content_of is not None or isinstance(got, (dict, list, tuple)) or len(repr(got)) > 80:
        return CaseError(str(path), loc, msg)
    shown = f"{int(got.total_seconds())}s" if isinstance(got, timedelta) else repr(got)
    return CaseError(str(path), loc, f"{msg} (got {shown})")


def _field_names(model: type[BaseModel], seen: set[type] | None = None) -> frozenset[str]:
    """Every field name and alias of a model and of the models its fields hold."""
    seen = seen if seen is not None else set()
    if model in seen:
        return frozenset()
    seen.add(model)
    names: set[str] = set()
    for name, info in model.model_fields.items():
        names |= {name} | ({info.alias} if info.alias else set())
        stack = [info.annotation]
        while stack:
            tp = stack.pop()
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                names |= _field_names(tp, seen)
            stack.extend(get_args(tp))
    return frozenset(names)
