"""Deterministic entity extraction for encyclopaedic text (no model, no download).

The incident extractor (``tools.entities``) knows services and config keys; prose about
people, films and places names its entities differently: as capitalised phrases, and as
the titles of other passages. This extractor is built from a corpus:

* a **gazetteer of titles** (passage or document titles), with the disambiguator
  dropped: ``"Dmitri Varfolomeyev (footballer, born 1978)"`` is the entity
  ``dmitri varfolomeyev``;
* **names**: maximal runs of capitalised words in the corpus (``Berlin International Film
  Festival``, ``Leningrad``), joined by a few lower-case connectors (``of``, ``de``, ``von``);
  a run at the start of a sentence counts only if the corpus also writes it capitalised
  elsewhere, so ``He`` or ``Born`` never become entities.

Entity names are **keys**: accents folded (``Tekezé`` = ``Tekeze``), case folded, punctuation
made spaces, so a Title Cased question (``The House Of Pulcini``) names the passage titled
``The House of Pulcini``. A text (passage or question) names an entity when a key's words
occur in it starting with a capitalised word or a digit (longest match first, no
overlaps): ``free guy`` in lower-case prose is not the film. Matching questions in any case
was measured and dropped: lower-case phrases (``place of birth``) became noisy seeds and
cost 2Wiki 5 points of recall@2. Keys made only of stopwords, months and weekdays are never
entities.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from state import stable_id

_WORD = re.compile(r"\w+", re.UNICODE)
_PAREN_TAIL = re.compile(r"\s*\([^()]*\)\s*$")
_SENTENCE_GAP = re.compile(r"[.!?:;]\s*$|^\s*$|\n")
_SPECIAL = str.maketrans({"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "ß": "ss", "æ": "ae", "Æ": "AE", "œ": "oe",
                          "Œ": "OE", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "ı": "i"})
STOPWORDS = frozenset("""
a an and are as at be been but by for from had has have he her hers him his how i if in into is it its
me my no nor not of on or our she so than that the their them then there these they this those to was
we were what when where which who whom whose why will with would you your also after before during
about above against between both each few more most other over same some such under until up very
while did does do done can could should may might must shall being
""".split())
CALENDAR = frozenset("""january february march april may june july august september october november
december monday tuesday wednesday thursday friday saturday sunday""".split())
CONNECTORS = frozenset("of the de la del des di da du von van der den y e al el le".split())
MAX_WORDS = 8


@lru_cache(maxsize=1 << 16)
def _fold_word(word: str) -> str:
    return fold(word).replace("_", " ")


def fold(text: str) -> str:
    """Accents and case folded: ``Tekezé`` -> ``tekeze``, ``Straße`` -> ``strasse``."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_SPECIAL))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def key(name: str) -> str:
    """The entity key of a name or title: disambiguator dropped, folded, words only."""
    return " ".join(_WORD.findall(fold(_PAREN_TAIL.sub("", name)))).replace("_", " ").strip()


def word_spans(text: str) -> list[tuple[str, str, int, int]]:
    """(folded word, original word, start, end) for every word of ``text``."""
    return [(_fold_word(m.group(0)), m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


def is_capitalised(word: str) -> bool:
    """Whether a word starts with a capital letter (a candidate proper name)."""
    return word[:1].isupper()


def _is_entity_key(k: str) -> bool:
    parts = k.split()
    return bool(parts) and not all(p in STOPWORDS or p in CALENDAR or p.isdigit() for p in parts) \
        and len(k) > 1


def capitalised_runs(text: str) -> list[tuple[str, bool]]:
    """Maximal capitalised phrases of ``text`` as (key, starts a sentence).

    Words join a run when only spaces separate them; lower-case connectors may sit inside a
    run, never at its ends; stopwords at either end are dropped (``The Hague`` keeps
    ``hague``)."""
    words = word_spans(text)
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(words):
        w, orig, s, _e = words[i]
        if not is_capitalised(orig):
            i += 1
            continue
        initial = bool(_SENTENCE_GAP.search(text[max(0, s - 3):s])) or i == 0
        run = [i]
        j = i + 1
        while j < len(words) and text[words[j - 1][3]:words[j][2]] == " ":
            wj, oj = words[j][0], words[j][1]
            if is_capitalised(oj):
                run.append(j)
            elif wj in CONNECTORS and j + 1 < len(words) and is_capitalised(words[j + 1][1]) \
                    and text[words[j][3]:words[j + 1][2]] == " ":
                run.append(j)
            else:
                break
            j += 1
        parts = [words[k][0] for k in run]
        lead = 0
        while lead < len(parts) and parts[lead] in STOPWORDS:
            lead += 1
        while parts and parts[-1] in STOPWORDS | CONNECTORS:
            parts.pop()
        parts = parts[lead:]
        if parts and len(parts) <= MAX_WORDS:
            k = " ".join(parts)
            if _is_entity_key(k):
                out.append((k, initial and lead == 0))
        i = j
    return out


class TextEntityExtractor:
    """Titles and capitalised names of a corpus, matched by key (see the module docstring)."""

    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = dict(sorted((k, v) for k, v in kinds.items() if _is_entity_key(k)))
        self._lengths: dict[str, tuple[int, ...]] = {}
        by_first: dict[str, set[int]] = {}
        for k in self.kinds:
            parts = k.split()
            by_first.setdefault(parts[0], set()).add(len(parts))
        self._lengths = {w: tuple(sorted(ls, reverse=True)) for w, ls in by_first.items()}

    @classmethod
    def from_corpus(cls, titles: Iterable[str], texts: Iterable[str]) -> "TextEntityExtractor":
        """Gazetteer of the titles plus the capitalised names the texts write mid-sentence."""
        kinds: dict[str, str] = {}
        inner: Counter[str] = Counter()
        initial: set[str] = set()
        for text in texts:
            for k, at_start in capitalised_runs(text):
                if at_start:
                    initial.add(k)
                else:
                    inner[k] += 1
        for k in inner:
            kinds[k] = "name"
        for k in initial:  # sentence-initial only: a name only if it has more than one word
            if k not in kinds and " " in k:
                kinds[k] = "name"
        for t in titles:
            k = key(t)
            if k:
                kinds[k] = "title"
        return cls(kinds)

    def digest(self) -> str:
        """Changes whenever the vocabulary does (graph freshness checks use it)."""
        return stable_id(sorted(self.kinds.items()))

    def canonical(self, name: str) -> str | None:
        """The entity a title or name stands for, if it is one."""
        k = key(name)
        return k if k in self.kinds else None

    def kind_of(self, name: str) -> str:
        return self.kinds.get(name, "name")

    def names(self, text: str) -> list[str]:
        """Entity keys ``text`` names (mentions starting with a capital or a digit), in order."""
        words = word_spans(text)
        found: dict[str, None] = {}
        i = 0
        while i < len(words):
            w, orig = words[i][0], words[i][1]
            lengths = self._lengths.get(w)
            if lengths and (is_capitalised(orig) or orig[:1].isdigit()):
                for n in lengths:
                    if i + n <= len(words):
                        k = " ".join(x[0] for x in words[i:i + n])
                        if k in self.kinds:
                            found.setdefault(k, None)
                            i += n
                            break
                else:
                    i += 1
                continue
            i += 1
        return list(found)
