"""`investigator`: a thin command line over the library API (one command, one call).

`main` is the console entry point (`investigator.cli:main`); `python -m investigator.cli` runs it too.
Nothing heavy is imported until a command runs, so `--help` and the store-only commands start at once.

Modules, each importing only those listed above it:

```
common       library(args): the Investigator (or, for store-only commands, the Workspace) a command wraps
cases        validate, init, collect, generate, index, delete
investigate  run, resume, work, and the progress line of each node update
records      runs, show, history, grant, schema
scoring      eval, compare, bench retrieval
service      serve, worker, and the types of their --host and --port
parsing      parser(): every command and option, naming the handlers above
entry        main(): parse, run, and one line and an exit code for every failure
```
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# after the environment defaults above, which the libraries read when they are imported
from investigator.cli.entry import main
from investigator.cli.investigate import update_line
from investigator.cli.parsing import parser

__all__ = ["main", "parser", "update_line"]
