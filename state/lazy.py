"""One lazy-export helper (PEP 562) for every package's `__init__`: a name is imported from its
module on first use and kept, so importing one module of a package does not import the others."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any],
                 computed: Mapping[str, Callable[[], Any]] | None = None,
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: `exports` maps a name to the submodule that
    defines it; `computed` maps a name to a function giving its value (asked once); `namespace` is
    the package's `globals()`, where a name is kept once looked up."""
    made = dict(computed or {})

    def __getattr__(name: str) -> Any:
        if name in made:
            value = made[name]()
        elif name in exports:
            value = getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports) | set(made))

    return __getattr__, __dir__
