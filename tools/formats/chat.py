"""Chat exports as notes (`kind: note`, `format: chat`).

A Slack channel export (one JSON array of `{"type": "message", "user", "text", "ts"}` objects,
`ts` in epoch seconds), the same under `messages`, or a Microsoft Teams / Mattermost export
(`createdDateTime`/`create_at` with `body.content`/`message`). What people typed in a channel is
prose: the file is read whole as a note's body, and the front matter a Markdown note carries is
taken from the export itself — the document is the file, its version the content, its date the
last message.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from state.sources import FrontMatter
from tools.formats import jsonspan
from tools.formats.logs import parse_time
from tools.formats.records import as_json, first
from tools.formats.shape import ContentError, bad_json

FORMAT = "chat"
_TIME = ("ts", "createdDateTime", "create_at", "timestamp", "date", "time")
_TEXT = ("text", "message", "body.content", "content")
_KEYS = ("messages", "value", "posts", "history")
_EXPORT = ("a chat export as JSON: a list of message objects (Slack), or one under messages, value or posts (Teams, "
           "Mattermost)")
_MESSAGE = "a message object (ts or createdDateTime a time; text or body.content text; user or from)"


def _messages(data: Any) -> list[dict]:
    if isinstance(data, dict):
        data = next((data[k] for k in _KEYS if isinstance(data.get(k), list)), None)
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []


def _read(text: str) -> list[dict]:
    """The messages of an export the user named `chat`: refused when the JSON does not parse, when the list
    is of another shape (`"messages": 7`) or absent, or when an entry of it is no object."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad_json(exc.pos) from None
    key = ""
    if isinstance(data, dict):
        key = next((k for k in _KEYS if k in data), "")
        if not key:
            raise ContentError("<document>", _EXPORT, _at(text))
        data = data[key] if data[key] is not None else []
    if not isinstance(data, list):
        raise ContentError(key or "<document>", _EXPORT, _at(text, key))
    for n, m in enumerate(data):
        if not isinstance(m, dict):
            raise ContentError(f"{key}[{n}]", _MESSAGE, _at(text, key, n))
    return data


def _at(text: str, *path: str | int) -> int:
    """The offset of a value, for the line a message names (parsed again with offsets only then)."""
    try:
        node = jsonspan.parse(text)
    except jsonspan.JSONSpanError:  # deeper or longer than the offset parser goes: the top of the file
        return 0
    return (node.path(*[p for p in path if p != ""]) or node).start


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
    return _last(_messages(as_json(text)))


def _last(messages: list[dict]) -> datetime | None:
    stamps = [parse_time(first(m, *_TIME), None) for m in messages]
    got = [s for s in stamps if s is not None]
    return max(got) if got else None


def front_matter(text: str, doc_id: str, service: str, environment: str, revision: str) -> FrontMatter | None:
    """The front matter of a chat export (None when it holds no dated message); a ContentError when the
    file is no chat export (see `_read`)."""
    at = _last(_read(text))
    if at is None:
        return None
    return FrontMatter(doc_id=doc_id, title=f"chat export {doc_id}", version=revision[:12], service=service,
                       environment=environment, updated_at=at, status="current")
