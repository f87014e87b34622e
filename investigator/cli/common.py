"""What the command modules share: the library object a command wraps, built only when it runs.

Imports only the standard library at module level; `investigator.config`, the workspace and the
runtime are imported inside `library`, so that `--help` and the store-only commands start at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def library(args: argparse.Namespace):  # noqa: ANN201 - an Investigator, or a Workspace for store-only commands
    """The library object a command wraps, imported only now so that `--help` starts at once.

    Commands marked `store_only` by the parser (runs, show, history, grant) get a bare `Workspace`: the
    store and checkpoints, without the embedding model, the indexes or the loop.
    """
    from investigator.config import Settings

    settings = Settings.from_env(args.home, args.store)  # a bad option or value fails before the heavy imports
    if getattr(args, "store_only", False):
        from investigator.workspace import Workspace

        return Workspace(settings)
    from graphs.deps import CrashPoint
    from investigator.runtime import Investigator

    # fault injection for crash tests: INVESTIGATOR_CRASH_AT=node:round kills the process there
    crash = CrashPoint.from_env(os.environ.get("INVESTIGATOR_CRASH_AT"))
    return Investigator(settings, crash=crash)


def workspace_factory(base):  # noqa: ANN001, ANN201 - fresh workspaces over the caller's indexes
    """A maker of fresh investigators in their own workspaces, sharing `base`'s indexes and embedder."""
    from investigator.config import Settings
    from investigator.runtime import Investigator

    index_root = base.settings.index_root or base.settings.workspace / "index"

    def make(ws: Path, log):  # noqa: ANN001, ANN202
        return Investigator(Settings(workspace=ws, index_root=index_root), embedder=base.embedder, progress=log)

    return make


def error(text: str) -> None:
    """One line on stderr, `error: …`; a stderr that is gone already is not a second failure."""
    try:
        print(f"error: {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
