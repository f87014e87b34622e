"""One form for a configuration key written in any style (docs/deciding.md §1, `config_key`).

`pool_size`, `poolSize`, `pool-size`, `POOL_SIZE` and `db.pool.size` compare equal through
`canon_key`; the entity registry (`tools.entities`) and the rule book both use it.
"""

from __future__ import annotations

import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = re.compile(r"[_\-.\s/:]+")


def canon_key(key: str) -> str:
    """One form for a key in any style: `poolSize`, `POOL-SIZE`, `pool.size` → `pool_size`."""
    words = [w for part in _SPLIT.split(key.strip().strip("`'\"")) for w in _CAMEL.split(part) if w]
    return "_".join(w.lower() for w in words)
