"""The service's settings: a small YAML file, environment variables, or both (the file wins).

    store: postgresql+psycopg://postgres@127.0.0.1:5432/investigator   # default: SQLite in home
    broker: amqp://guest:guest@127.0.0.1:5672//                          # default: SQLite in home
    home: .investigator
    sources:
      by: service                 # the alert label that picks a folder of material
      roots:
        payments: /srv/material/payments
      default: /srv/material/shared   # optional: for alerts no root matches
    group: sre-oncall             # the principal's group and every source's default group
    dedupe: fingerprint           # or `group`: one investigation per Alertmanager group key
    retrieval: basic
    task_time_limit: 1200         # seconds; the engine kills a job past it
    task_retries: 5               # redeliveries of a job that met a busy or failing run
    token: s3cret                 # optional: posting alerts needs `Authorization: Bearer s3cret`
    max_body_bytes: 1048576       # a webhook body larger than this is refused (413) while it is read
    broker_options: {}            # Celery broker_transport_options, e.g. {global_keyprefix: "inv:"} on Redis
    collect:                      # optional: fetch each alert's material live (`investigator collect`)
      prometheus: http://prometheus:9090
      git: /srv/gitops            # a GitOps repository folder, or a URL git can clone
      kubeconfig: /etc/investigator/kubeconfig   # optional
      profile: collect.yaml       # optional: PromQL and path templates (tools/collect/default.yaml)
      access: access.yaml         # optional: the access map (globs over prometheus/**, git/**, …)

Every problem is a ConfigError naming the file (or variable), the field and what was expected.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError

from investigator.config import Settings
from state import Frozen
from state.errors import ConfigError

ENV_PREFIX = "INVESTIGATOR_"


class SourceRoots(Frozen):
    by: str = "service"
    """The alert label whose value names the folder of material."""
    roots: dict[str, Path] = {}
    default: Path | None = None


class CollectSettings(Frozen):
    """Where the service fetches an alert's material live; with none, the folders of `sources` only."""

    prometheus: str | None = None
    """Prometheus base URL."""
    git: str | None = None
    """GitOps repository: a folder, or a URL git can clone."""
    kubeconfig: Path | None = None
    profile: Path | None = None
    """Collection profile (PromQL and path templates); default tools/collect/default.yaml."""
    access: Path | None = None
    """Access map for the collected sources (as `collect --access`)."""

    @property
    def configured(self) -> bool:
        return bool(self.prometheus or self.git or self.kubeconfig)


class ServiceSettings(Frozen):
    home: Path = Path(".investigator")
    store: str | None = None
    broker: str | None = None
    sources: SourceRoots = SourceRoots()
    group: str = "sre-oncall"
    dedupe: Literal["fingerprint", "group"] = "fingerprint"
    retrieval: Literal["basic", "graph"] = "basic"
    task_time_limit: float = 1200.0
    """Seconds; below RabbitMQ's consumer_timeout (30 min by default), which would close the channel first."""
    task_retries: int = 5
    lease_seconds: float = 60.0
    broker_options: dict[str, str | int | float | bool] = {}
    """Celery `broker_transport_options` (e.g. Redis's `visibility_timeout`, `global_keyprefix`)."""
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    """A webhook body larger than this is refused (413), counted while it is read (not after)."""
    collect: CollectSettings = CollectSettings()
    """Live collection for each alert (Prometheus, git, Kubernetes), on top of the folder of material."""
    token: str | None = None
    """When set, posting alerts needs `Authorization: Bearer <token>` (Alertmanager's
    `http_config.authorization`); reading runs and pages does not."""

    # derived ---------------------------------------------------------------
    def runtime(self) -> Settings:
        """The investigator's own settings (workspace, store, lease) for this service."""
        index_root = os.environ.get(ENV_PREFIX + "INDEX_ROOT")
        return Settings(workspace=self.home, store_url=self.store, lease_seconds=self.lease_seconds,
                        index_root=Path(index_root) if index_root else None)

    @property
    def store_url(self) -> str:
        return self.runtime().resolved_store_url

    @property
    def broker_url(self) -> str:
        """The configured broker, or a SQLite queue file in the home (the single-machine default)."""
        return self.broker or f"sqla+sqlite:///{(self.home / 'queue.db').resolve()}"

    @property
    def local_queue(self) -> bool:
        return self.broker_url.startswith("sqla+sqlite")

    @property
    def service_dir(self) -> Path:
        return self.home / "service"

    def root_for(self, labels: dict[str, str]) -> tuple[str, Path | None]:
        """(name, folder) of the material for an alert (no folder: collected live only); ConfigError when
        there is neither."""
        value = labels.get(self.sources.by, "")
        if value in self.sources.roots:
            return value, self.sources.roots[value]
        if self.sources.default is not None:
            return "default", self.sources.default
        if self.collect.configured:
            return "collected", None
        known = ", ".join(sorted(self.sources.roots)) or "none"
        raise ConfigError(f"alert label {self.sources.by}={value!r}: no source root for it "
                          f"(configured: {known}; set sources.roots.{value or '<value>'} or sources.default)")

    def check(self) -> "ServiceSettings":
        """Every configured folder exists (so a bad path fails at start, not on the first alert)."""
        named = [(f"sources.roots.{k}", v) for k, v in self.sources.roots.items()]
        if self.sources.default is not None:
            named.append(("sources.default", self.sources.default))
        if not named and not self.collect.configured:
            raise ConfigError("sources: expected at least one folder of material (or collect: prometheus/git) "
                              f"(sources.roots.<{self.sources.by}> or sources.default, "
                              f"or {ENV_PREFIX}SOURCE_ROOTS=name=/path,…)")
        for field, path in named:
            if not Path(path).is_dir():
                raise ConfigError(f"{field}: {path}: expected an existing folder of material")
        for field, file in (("collect.kubeconfig", self.collect.kubeconfig), ("collect.profile", self.collect.profile),
                            ("collect.access", self.collect.access)):
            if file is not None and not Path(file).is_file():
                raise ConfigError(f"{field}: {file}: expected an existing file")
        if self.collect.prometheus is not None and not self.collect.prometheus.startswith(("http://", "https://")):
            raise ConfigError(f"collect.prometheus: {self.collect.prometheus!r}: expected an http:// or https:// URL")
        for field, url in (("store", self.store), ("broker", self.broker)):
            if url is not None and "://" not in url:
                raise ConfigError(f"{field}: {url!r}: expected a URL (e.g. postgresql+psycopg://… or amqp://…)")
        return self


def _env() -> dict[str, Any]:
    """Settings from INVESTIGATOR_* variables (the same names as the YAML keys)."""
    e = os.environ
    out: dict[str, Any] = {}
    for key, var in (("home", "HOME"), ("store", "STORE_URL"), ("broker", "BROKER_URL"), ("group", "GROUP"),
                     ("dedupe", "DEDUPE"), ("retrieval", "RETRIEVAL"), ("task_time_limit", "TASK_TIME_LIMIT"),
                     ("task_retries", "TASK_RETRIES"), ("lease_seconds", "LEASE_SECONDS"),
                     ("token", "SERVICE_TOKEN"), ("max_body_bytes", "MAX_BODY_BYTES")):
        if e.get(ENV_PREFIX + var):
            out[key] = e[ENV_PREFIX + var]
    sources: dict[str, Any] = {}
    if e.get(ENV_PREFIX + "SOURCE_LABEL"):
        sources["by"] = e[ENV_PREFIX + "SOURCE_LABEL"]
    if e.get(ENV_PREFIX + "SOURCE_DEFAULT"):
        sources["default"] = e[ENV_PREFIX + "SOURCE_DEFAULT"]
    if e.get(ENV_PREFIX + "SOURCE_ROOTS"):
        roots = {}
        for item in e[ENV_PREFIX + "SOURCE_ROOTS"].split(","):
            name, sep, path = item.partition("=")
            if not sep or not name.strip() or not path.strip():
                raise ConfigError(f"{ENV_PREFIX}SOURCE_ROOTS: {item!r}: expected name=/path/to/folder[,name=/path…]")
            roots[name.strip()] = path.strip()
        sources["roots"] = roots
    if sources:
        out["sources"] = sources
    collect = {key: e[ENV_PREFIX + var] for key, var in (("prometheus", "PROMETHEUS_URL"), ("git", "GIT_REPO"),
                                                        ("kubeconfig", "KUBECONFIG"), ("profile", "COLLECT_PROFILE"))
               if e.get(ENV_PREFIX + var)}
    if collect:
        out["collect"] = collect
    return out


def load_settings(path: Path | None = None, **overrides: Any) -> ServiceSettings:
    """Environment, then the YAML file over it, then explicit overrides (command-line options)."""
    data = _env()
    where = f"{ENV_PREFIX}* environment"
    if path is not None:
        where = str(path)
        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: <file>: a service settings file (YAML) that exists") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{path}: expected a mapping of settings (home, store, broker, sources, …)")
        base_dir = Path(path).resolve().parent
        loaded = dict(loaded or {})
        src = dict(loaded.get("sources") or {}) if isinstance(loaded.get("sources"), dict) else loaded.get("sources")
        if isinstance(src, dict):  # relative folders are relative to the settings file
            if isinstance(src.get("roots"), dict):
                src["roots"] = {k: base_dir / str(v) for k, v in src["roots"].items()}
            if src.get("default"):
                src["default"] = base_dir / str(src["default"])
            loaded["sources"] = {**data.get("sources", {}), **src}
        col = loaded.get("collect")
        if isinstance(col, dict):  # relative files (and a repository folder) are relative to the settings file
            col = {**data.get("collect", {}), **col}
            for key in ("kubeconfig", "profile", "access"):
                if col.get(key):
                    col[key] = base_dir / str(col[key])
            if col.get("git") and "://" not in str(col["git"]) and not str(col["git"]).startswith("git@"):
                col["git"] = str(base_dir / str(col["git"]))
            loaded["collect"] = col
        data.update(loaded)
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return ServiceSettings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "<settings>"
        raise ConfigError(f"{where}: {field}: {err['msg']}") from None
