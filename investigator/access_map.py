"""The access map `investigator init --access MAP` takes: who investigates, and who may read what.

```yaml
principal:
  id: oncall-analyst
  groups: [sre, prod-access]
  may_request_access: false      # optional, default false
access:                          # first matching glob wins; paths relative to --sources
  - {glob: "security/*", groups: [secops]}
  - {glob: "**", groups: [sre]}
default_groups: [sre]            # optional: files no glob matches (default: init's --group)
```

Globs are shell-style over the file's path relative to the sources folder (`*` does not cross
`/`, `**` does; a glob without `/` also matches the file name in any folder).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from pydantic import Field, ValidationError

from state import Frozen, yamlio
from state.casefiles import read_text_file
from state.errors import CaseError
from state.limits import YAML_BYTES



class MapPrincipal(Frozen):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
    """Who investigates (the case's principal)."""
    groups: tuple[str, ...] = Field(min_length=1)
    """The groups the principal holds."""
    may_request_access: bool = False
    """Denied and needed: pause and ask (true) or stop (false)."""


class AccessRule(Frozen):
    glob: str = Field(min_length=1)
    """A shell-style path glob relative to the sources folder."""
    groups: tuple[str, ...] = Field(min_length=1)
    """The groups allowed to read the files it matches."""


class AccessMap(Frozen):
    principal: MapPrincipal | None = None
    """The investigating principal; init's default when absent."""
    access: tuple[AccessRule, ...] = ()
    """Rules in order; the first whose glob matches a file gives its groups."""
    default_groups: tuple[str, ...] | None = None
    """Groups of a file no rule matches (default: init's `--group`)."""

    def groups_for(self, rel: str, default: tuple[str, ...]) -> tuple[str, ...]:
        for rule in self.access:
            if glob_matches(rel, rule.glob):
                return rule.groups
        return self.default_groups or default


def _glob_re(glob: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
            continue
        if glob.startswith("**", i):
            out, i = out + ".*", i + 2
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c))
        i += 1
    return re.compile(out + r"\Z")


def glob_matches(rel: str, glob: str) -> bool:
    """`rel` (a POSIX path relative to the sources folder) matches `glob`."""
    rel, glob = rel.lstrip("./"), glob.strip().removeprefix("./").removeprefix("sources/")
    if _glob_re(glob).match(rel):
        return True
    return "/" not in glob and bool(_glob_re(glob).match(PurePosixPath(rel).name))


def read_access_map(path: Path) -> AccessMap:
    """An access map from YAML; a bad one is a CaseError naming the file, the field and what was expected."""
    text = read_text_file(Path(path), YAML_BYTES)
    try:
        data = yamlio.loads(text)
    except (ValueError, yaml.YAMLError):
        raise CaseError(str(path), "<document>", "valid YAML (an access map: principal, access)") from None
    if not isinstance(data, dict):
        raise CaseError(str(path), "<document>", "a mapping with `principal` and `access` (a list of {glob, groups})")
    try:
        return AccessMap.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "<document>"
        raise CaseError(str(path), field, _expected(err)) from None


def _expected(err: Any) -> str:
    kind = err.get("type", "")
    if kind == "missing":
        return "a value (required)"
    if kind == "extra_forbidden":
        return "a known field (principal, access, default_groups; glob, groups; id, groups, may_request_access)"
    return str(err.get("msg", "a valid value"))
