"""The retrieval interface both document tools implement."""

from __future__ import annotations

from typing import Protocol

from state import Frozen
from state.evidence import Hit
from tools.access import AccessSnapshot


class SearchQuery(Frozen):
    text: str
    environment: str
    """Hard filter: chunks of this environment or of `*`."""
    kinds: tuple[str, ...] = ()
    """Hard filter on source kinds; empty means every text kind."""
    seeds: tuple[str, ...] = ()
    """Entity names the query starts from (the graph tool walks from them)."""
    exclude: tuple[str, ...] = ()
    """Chunk ids already read: not returned again."""
    k: int = 5


class RetrievalTool(Protocol):
    name: str

    def search(self, query: SearchQuery, access: AccessSnapshot) -> list[Hit]:
        """Ranked hits among chunks the principal may read (filtered before ranking)."""
        ...
