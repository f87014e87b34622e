"""Content that is not the shape its format has: where it is and what was expected, never what it holds.

A parser wraps the reading of one item (a pod, a Helm revision, a span) in `expecting(...)`; a value of
the wrong type inside (a list where labels are an object, a revision that is no number) then becomes a
`ContentError` naming the item's JSON path (or line) and the shape expected, which `tools.corpus` turns
into a CaseError (exit 2). The message never quotes the value: the principal may not be allowed to read it.

The container a format's records live in (`items`, `status.history`, `resourceSpans`, `Records` …) is
read through `listed`: absent or null, it holds nothing (an export with no entries); a list, its items;
any other shape is a ContentError naming it — never a file silently read as empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tools.formats.jsonspan import J

__all__ = ["ContentError", "bad_json", "expecting", "listed"]

# what Python raises when code meets a value of another shape than it reads (pydantic's
# ValidationError is a ValueError); a bug of ours with these types is still reported, as content
_SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError, OverflowError, RecursionError)


class ContentError(Exception):
    """An item of a source file that is not the shape its format has.

    Not a ValueError: a caller's fallback for values of another type (`except ValueError`) must not
    turn the path named here into a vaguer message."""

    def __init__(self, where: str, expected: str, pos: int) -> None:
        self.where, self.expected, self.pos = where, expected, pos
        super().__init__(f"{where}: {expected}")


def bad_json(pos: int) -> ContentError:
    """A JSON document that does not parse, at offset `pos` (the character there is not quoted)."""
    return ContentError("<document>", f"valid JSON (a syntax error at offset {pos})", pos)


@contextmanager
def expecting(where: str, expected: str, pos: int) -> Iterator[None]:
    """Turn a shape error raised while reading one item into a ContentError naming it."""
    try:
        yield
    except ContentError:
        raise
    except _SHAPE_ERRORS:
        raise ContentError(where, expected, pos) from None


def listed(node: J | None, where: str, expected: str) -> list[J]:
    """The items of the list a format reads its records from: none when it is absent or null, a
    ContentError naming `where` when it is there with another shape (a number, a text, an object)."""
    if node is None or (node.kind == "literal" and node.raw is None):
        return []
    if node.kind != "array":
        raise ContentError(where, expected, node.start)
    return node.items
