"""Chat exports as notes (`kind: note`, `format: chat`).

A Slack channel export (one JSON array of `{"type": "message", "user", "text", "ts"}` objects,
`ts` in epoch seconds), the same under `messages`, or a Microsoft Teams / Mattermost export
(`createdDateTime`/`create_at` with `body.content`/`message`). What people typed in a channel is
prose: the file is read whole as a note's body, and the front matter a Markdown note carries is
taken from the export itself — the document is the file, its version the content, its date the
last message.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from state.sources import FrontMatter
from tools.formats.logs import parse_time
from tools.formats.records import as_json, first

FORMAT = "chat"
_TIME = ("ts", "createdDateTime", "create_at", "timestamp", "date", "time")
_TEXT = ("text", "message", "body.content", "content")


def _messages(data: Any) -> list[dict]:
    if isinstance(data, dict):
        data = next((data[k] for k in ("messages", "value", "posts", "history") if isinstance(data.get(k), list)), None)
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []


def detect(text: str) -> bool:
    """A chat export: most entries are messages with a time and a text."""
    if not text.lstrip().startswith(("[", "{")):
        return False
    msgs = _messages(as_json(text))
    chatty = [m for m in msgs if first(m, *_TIME) is not None and first(m, *_TEXT) is not None
              and (m.get("type") in ("message", None) or "user" in m or "from" in m)]
    return bool(msgs) and len(chatty) * 2 > len(msgs) and any("user" in m or "from" in m or "username" in m
                                                                 for m in chatty)


def last_message_at(text: str) -> datetime | None:
    stamps = [parse_time(first(m, *_TIME), None) for m in _messages(as_json(text))]
    got = [s for s in stamps if s is not None]
    return max(got) if got else None


def front_matter(text: str, doc_id: str, service: str, environment: str, revision: str) -> FrontMatter | None:
    """The front matter of a chat export (None when it holds no dated message)."""
    at = last_message_at(text)
    if at is None:
        return None
    return FrontMatter(doc_id=doc_id, title=f"chat export {doc_id}", version=revision[:12], service=service,
                       environment=environment, updated_at=at, status="current")
