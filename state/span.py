"""An exact span of one source text: the unit of every citation."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from state._base import Frozen, content_hash


class Span(Frozen):
    """`text[start:end] == quote` for the source version it was read from."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    quote: str
    content_hash: str = ""
    """`sha256(quote)[:16]`; filled in when omitted, checked when given."""

    @model_validator(mode="before")
    @classmethod
    def _hash(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("quote") is not None:
            expected = content_hash(data["quote"])
            if not data.get("content_hash"):
                data = {**data, "content_hash": expected}
            elif data["content_hash"] != expected:
                raise ValueError("content_hash does not match sha256(quote)[:16]")
        return data

    @model_validator(mode="after")
    def _length(self) -> "Span":
        if self.end - self.start != len(self.quote):
            raise ValueError("end - start must equal len(quote)")
        return self

    @classmethod
    def of(cls, text: str, start: int, end: int) -> "Span":
        return cls(start=start, end=end, quote=text[start:end])
