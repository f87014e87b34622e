"""Changes and config snapshots from a GitOps repository (`git` as a subprocess).

A file belongs to a service by the profile's path templates (`apps/{service}/**` …); a file
whose path names another environment than the alert's (`values-staging.yaml`) is left out.
Every commit in the lookback that touches a service's files becomes a change record of the
`ledger` format (tools/formats/ledgers.py): id `<service>@git-<12 hex>`, type `deployment`
(a GitOps commit is what the controller deploys; its versions are commit ids, as Argo CD's),
the committer time as its start, its author, full commit id and message, the keys its
structured files changed (`config_changes`) and its diff. The service's structured files,
merged into one mapping, are written as config snapshots at the version before the first such
commit and after each one (`version` = the 12-hex commit id the runtime joins to the change),
and at the window's end for a service with no commit in the lookback (its relations).
"""

from __future__ import annotations

import functools

import fnmatch
import hashlib
import json
import re
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from state.collection import Fetched
from tools.collect.profile import GitProfile
from tools.collect.urls import public_url

__all__ = ["GitFailed", "GitRepo", "Commit", "collect_git", "service_of_path"]

SHORT = 12


class GitFailed(Exception):
    """git could not do what was asked (not a repository, clone refused, unknown revision)."""


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    at: datetime
    subject: str
    files: tuple[str, ...] = ()

    @property
    def short(self) -> str:
        return self.sha[:SHORT]


class GitRepo:
    """A local repository (a path, or a URL cloned into `workdir`)."""

    def __init__(self, source: str, workdir: Path | None = None, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self.source = public_url(source)
        """The repository as written into the case (a URL without its credentials)."""
        path = Path(source).expanduser()
        if path.is_dir():
            self.path = path.resolve()
        elif re.match(r"^([a-z+]+://|git@|file:)", source) and workdir is not None:
            self.path = workdir / "repo"
            self._run(["git", "clone", "--quiet", "--no-checkout", source, str(self.path)], cwd=workdir)
        else:
            raise GitFailed(f"{source}: a git repository folder or a URL git can clone")
        self.git("rev-parse", "--git-dir")

    def _run(self, args: list[str], cwd: Path) -> str:
        try:
            done = subprocess.run(args, cwd=cwd, capture_output=True, timeout=self.timeout,
                                  env={"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "PATH": "/usr/bin:/bin:/usr/local/bin"})
        except subprocess.TimeoutExpired:
            raise GitFailed(f"git {args[1]} took longer than {self.timeout:g}s") from None
        except OSError as exc:
            raise GitFailed(f"git could not be run ({type(exc).__name__})") from None
        if done.returncode != 0:
            line = done.stderr.decode("utf-8", "replace").strip().splitlines()
            said = line[-1] if line else f"exit {done.returncode}"
            raise GitFailed(f"git {args[1]}: {' '.join(public_url(w) for w in said.split())}")
        return done.stdout.decode("utf-8", "replace")

    def git(self, *args: str) -> str:
        return self._run(["git", *args], cwd=self.path)

    def show(self, sha: str, path: str) -> str | None:
        try:
            return self.git("show", f"{sha}:{path}")
        except GitFailed:
            return None  # the file did not exist at that commit

    def head_at(self, when: datetime) -> str | None:
        """The last commit of HEAD's history committed at or before `when`."""
        out = self.git("rev-list", "-1", f"--before={when.isoformat()}", "HEAD").strip()
        return out or None

    def files_at(self, sha: str) -> list[str]:
        return [f for f in self.git("ls-tree", "-r", "--name-only", sha).splitlines() if f]

    def commits(self, since: datetime, until: datetime) -> list[Commit]:
        """Commits of HEAD's history committed in [since, until], oldest first, with the files each
        touched (a merge: against its first parent)."""
        fmt = "%H%x1f%P%x1f%an%x1f%ae%x1f%cI%x1f%s%x1e"
        raw = self.git("log", f"--since={since.isoformat()}", f"--until={until.isoformat()}",
                       f"--format={fmt}", "HEAD")
        out = []
        for rec in raw.split("\x1e"):
            parts = rec.strip("\n").split("\x1f")
            if len(parts) != 6:
                continue
            sha, parents, author, email, at, subject = parts
            when = datetime.fromisoformat(at)
            if not since <= when <= until:
                continue
            ps = tuple(parents.split())
            files = self.git("diff-tree", "--no-commit-id", "-r", "--name-only", "--root", sha) if not ps else \
                self.git("diff", "--name-only", ps[0], sha)
            out.append(Commit(sha=sha, parents=ps, author=author, email=email, at=when, subject=subject,
                              files=tuple(f for f in files.splitlines() if f)))
        return sorted(out, key=lambda c: c.at)

    def last_touching(self, sha: str, paths: list[str]) -> Commit | None:
        """The last commit at or before `sha` that touched any of `paths`."""
        if not paths:
            return None
        fmt = "%H%x1f%P%x1f%an%x1f%ae%x1f%cI%x1f%s"
        raw = self.git("log", "-1", f"--format={fmt}", sha, "--", *paths).strip()
        if not raw:
            return None
        sha_, parents, author, email, at, subject = raw.split("\x1f", 5)
        return Commit(sha=sha_, parents=tuple(parents.split()), author=author, email=email,
                      at=datetime.fromisoformat(at), subject=subject)

    def patch(self, commit: Commit, paths: list[str]) -> str:
        base = commit.parents[0] if commit.parents else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # the empty tree
        return self.git("diff", "--no-color", base, commit.sha, "--", *paths)


def _template_re(template: str, environment: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(template):
        if template.startswith("{service}", i):
            out, i = out + r"(?P<service>[A-Za-z0-9][A-Za-z0-9._-]*)", i + len("{service}")
        elif template.startswith("{environment}", i):
            out, i = out + re.escape(environment), i + len("{environment}")
        elif template.startswith("**", i):
            out, i = out + ".*", i + 2
        elif template[i] == "*":
            out, i = out + "[^/]*", i + 1
        else:
            out, i = out + re.escape(template[i]), i + 1
    return re.compile(out + r"\Z")


def service_of_path(path: str, templates: tuple[str, ...], environment: str, environments: list[str]) -> str | None:
    """The service a repository file belongs to (the first template that matches), or None; a path
    naming another environment than the alert's belongs to none."""
    words = set(re.split(r"[/._-]+", path.lower()))
    other = {e.lower() for e in environments} - {environment.lower()}
    if words & other and environment.lower() not in words:
        return None
    for t in templates:
        if m := _template_re(t, environment).match(path):
            name = m.group("service")
            if name.lower() in {e.lower() for e in environments}:
                continue
            return name
    return None


def _flatten(value: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list):
        return {prefix: json.dumps(value, sort_keys=True, default=str)} if prefix else {}
    return {prefix: "" if value is None else str(value)} if prefix else {}


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def _parse_structured(text: str) -> dict | None:
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return None
    merged: dict = {}
    for d in docs:
        if not isinstance(d, dict):
            return None
        merged = _merge(merged, d)
    return merged


@dataclass
class ServiceFiles:
    service: str
    files: list[str] = field(default_factory=list)


def _config_files(files: list[str], globs: str) -> list[str]:
    pats = globs.split()
    return sorted(f for f in files if any(fnmatch.fnmatch(Path(f).name, p) for p in pats))


def _snapshot(repo: GitRepo, sha: str, files: list[str]) -> tuple[dict, list[str]]:
    """The service's structured files at `sha`, merged in path order (Helm merges values the same way)."""
    merged: dict = {}
    used = []
    for f in files:
        text = repo.show(sha, f)
        parsed = _parse_structured(text) if text is not None else None
        if parsed is not None:
            merged = _merge(merged, parsed)
            used.append(f)
    return merged, used


def _now() -> datetime:
    return datetime.now(timezone.utc)


class _BlockDumper(yaml.SafeDumper):
    """Multi-line text (a diff) as a `|` block, so the ledger reads like the patch it holds."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_BlockDumper.add_representer(str, _text)


@dataclass
class GitResult:
    fetched: list[tuple[Fetched, str | None]] = field(default_factory=list)
    """What was written (and failed), each with its file relative to the folder."""
    inventory: list[dict] = field(default_factory=list)
    """Inventory entries (path, kind, format, service, environment, captured_at, version)."""
    services: list[str] = field(default_factory=list)
    """The services collected for, the alert's first."""


def related_services(repo: GitRepo, sha: str, by_service: dict[str, list[str]], start: str, depth: int,
                     profile: GitProfile) -> list[str]:
    """The alert's service and those its configuration names (a URL, host or `host:port` value equal
    to another service's name), up to `depth` hops."""
    found, frontier = [start], [start]
    for _ in range(depth):
        nxt = []
        for s in frontier:
            settings = _flatten(_snapshot(repo, sha, _config_files(by_service.get(s, []), profile.config_files))[0])
            words = {w.lower() for v in settings.values() for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9_-]*", v)}
            for other in sorted(by_service):
                if other not in found and other.lower() in words:
                    found.append(other)
                    nxt.append(other)
        frontier = nxt
    return found


def collect_git(repo: GitRepo, profile: GitProfile, *, service: str, environment: str, environments: list[str],
                since: datetime, until: datetime, folder: Path, rel_root: str = "git") -> GitResult:
    """Write the change ledger and config snapshots of the alert's service and the services it relates."""
    res = GitResult()
    end_sha = repo.head_at(until)
    if end_sha is None:
        raise GitFailed(f"no commit at or before {until.isoformat()} in {repo.source}")
    @functools.cache
    def owner(path: str) -> str | None:  # asked again for every commit and snapshot: matched once a path
        return service_of_path(path, profile.paths, environment, environments)

    by_service: dict[str, list[str]] = {}
    for f in repo.files_at(end_sha):
        if (s := owner(f)) is not None:
            by_service.setdefault(s, []).append(f)
    res.services = related_services(repo, end_sha, by_service, service, profile.related_depth, profile)
    commits = repo.commits(since, until)
    records: list[dict] = []
    used_commits: list[str] = []
    for svc in res.services:
        mine = [c for c in commits if any(owner(f) == svc for f in c.files)]
        files_end = by_service.get(svc, [])

        def owned(sha: str, svc: str = svc) -> list[str]:
            return [f for f in _config_files(repo.files_at(sha), profile.config_files) if owner(f) == svc]

        snaps: list[tuple[str, datetime, dict, list[str]]] = []  # (version, captured_at, settings, files)
        if mine:
            first = mine[0]
            before = repo.last_touching(first.parents[0], files_end) if first.parents else None
            if before is not None:
                data, used = _snapshot(repo, before.sha, owned(before.sha))
                snaps.append((before.short, before.at, data, used))
            prev = before
            for c in mine:
                touched = [f for f in c.files if owner(f) == svc]
                after, used = _snapshot(repo, c.sha, owned(c.sha))
                was = _flatten(snaps[-1][2]) if snaps else {}
                now = _flatten(after)
                diff = [{"key": k, "from": was.get(k), "to": now.get(k)} for k in sorted(set(was) | set(now))
                        if was.get(k) != now.get(k)]
                patch = repo.patch(c, touched)
                if len(patch.encode()) > profile.max_diff_bytes:
                    patch = patch.encode()[: profile.max_diff_bytes].decode("utf-8", "ignore") + \
                        f"\n[diff cut at {profile.max_diff_bytes} bytes]\n"
                records.append({
                    "id": f"{svc}@git-{c.short}", "type": "deployment", "service": svc, "environment": environment,
                    "started_at": c.at.isoformat(), "version_from": prev.short if prev else None,
                    "version_to": c.short,
                    "summary": f"git commit {c.sha} by {c.author}: {c.subject}",
                    "commit": c.sha, "author": f"{c.author} <{c.email}>", "repository": repo.source,
                    "paths": touched, "config_changes": diff, "diff": patch})
                used_commits.append(c.sha)
                snaps.append((c.short, c.at, after, used))
                prev = c
        else:
            last = repo.last_touching(end_sha, files_end)
            if last is not None:
                data, used = _snapshot(repo, last.sha, _config_files(files_end, profile.config_files))
                snaps.append((last.short, last.at, data, used))
        for version, at, data, used in snaps:
            if not data:
                continue
            rel = f"{rel_root}/config/{svc}.{environment}.{version}.yaml"
            body = (f"# {svc} configuration at commit {version} ({', '.join(used)}), written by "
                    f"`investigator collect`\n" + yaml.safe_dump(data, sort_keys=True, allow_unicode=True)).encode()
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(body)
            res.fetched.append((Fetched(collector="git", what=f"configuration of {svc} at {version}", status="ok",
                                        path=rel, fetched_at=_now(), sha256=hashlib.sha256(body).hexdigest(),
                                        server=repo.source, commits=(version,), service=svc), rel))
            res.inventory.append({"path": rel, "kind": "config", "format": "yaml", "service": svc,
                                  "environment": environment, "captured_at": at.isoformat(), "version": version})
    what = f"commits touching {', '.join(res.services)} between {since.isoformat()} and {until.isoformat()}"
    if not records:
        res.fetched.append((Fetched(collector="git", what=what, status="empty", fetched_at=_now(), server=repo.source,
                                    start=since, end=until), None))
        return res
    rel = f"{rel_root}/changes.{environment}.yaml"
    body = ("# Commits of the GitOps repository, written by `investigator collect` (a change ledger)\n"
            + yaml.dump({"repository": repo.source, "changes": records}, Dumper=_BlockDumper, sort_keys=False,
                        allow_unicode=True, width=120)).encode()
    (folder / rel).parent.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_bytes(body)
    res.fetched.append((Fetched(collector="git", what=what, status="ok", path=rel, fetched_at=_now(),
                                sha256=hashlib.sha256(body).hexdigest(), server=repo.source, start=since, end=until,
                                commits=tuple(used_commits)), rel))
    res.inventory.append({"path": rel, "kind": "change", "format": "ledger", "environment": environment})
    return res
