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

**Resolution** (``from_corpus(resolve=True)``, the default): the variants of one name fold into
one key (``tools.resolution.alias_map``: honorifics, legal forms, state forms, partial names,
acronyms the texts define as ``Long Form (LF)``, abbreviated words), so ``Strauss II`` and
``Johann Strauss II`` are one node; a run that swallows a commoner name (a cast list's
``Harper Natalie Wood``) names that name too (``contained_names``). **Concepts**
(``concepts=True``, off: they cost recall, see ``tools/graph/NOTES.md``): titles the corpus
writes in lower case in a few texts, matched in lower case.
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
    """Titles and capitalised names of a corpus, matched by key (see the module docstring).

    ``aliases``: variant key -> canonical key (``tools.resolution.alias_map``); a text naming a
    variant names its canonical entity. ``concepts``: keys also matched when written in lower
    case (``bubonic plague``), chosen by ``concept_keys``."""

    def __init__(self, kinds: dict[str, str], aliases: dict[str, str] | None = None,
                 concepts: Iterable[str] = (), parts: dict[str, tuple[str, ...]] | None = None) -> None:
        self.kinds = dict(sorted((k, v) for k, v in kinds.items() if _is_entity_key(k)))
        self.aliases = {a: c for a, c in sorted((aliases or {}).items()) if a in self.kinds and c in self.kinds}
        self.parts = {k: tuple(self.aliases.get(p, p) for p in ps if p in self.kinds)
                      for k, ps in sorted((parts or {}).items()) if k in self.kinds}
        self.concepts = frozenset(c for c in concepts if c in self.kinds)
        by_first: dict[str, set[int]] = {}
        for k in self.kinds:
            words = k.split()
            by_first.setdefault(words[0], set()).add(len(words))
        self._lengths = {w: tuple(sorted(ls, reverse=True)) for w, ls in by_first.items()}

    @classmethod
    def from_corpus(cls, titles: Iterable[str], texts: Iterable[str], *, resolve: bool = True,
                    concepts: bool = False) -> "TextEntityExtractor":
        """Gazetteer of the titles plus the capitalised names the texts write mid-sentence;
        with ``resolve``, their variants folded and titles named without a leading article
        (``tools.resolution``); with ``concepts``, the
        titles the corpus writes in lower case (``concept_keys``) matched in lower case too."""
        texts = list(texts)
        kinds: dict[str, str] = {}
        inner: Counter[str] = Counter()
        written: Counter[str] = Counter()  # texts writing each name, anywhere
        initial: set[str] = set()
        for text in texts:
            runs = capitalised_runs(text)
            written.update({k for k, _ in runs})
            for k, at_start in runs:
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
        plain = cls(kinds)
        aliases: dict[str, str] = {}
        parts: dict[str, tuple[str, ...]] = {}
        if resolve:
            from tools.resolution import alias_map, bare_titles, contained_names

            bare = bare_titles(kinds)  # before the acronyms' long forms join the vocabulary
            kinds.update(dict.fromkeys(bare, "name"))
            defined = [d for text in texts for d in defined_acronyms(text)]
            for _acronym, long in defined:  # `National Aeronautics and Space Administration`: one name
                kinds.setdefault(long, "name")
            plain = cls(kinds)
            aliases = {**alias_map(plain.kinds, {a for a, _ in defined}, counts=written), **bare}
            parts = contained_names(plain.kinds, written, [k for k, v in plain.kinds.items() if v == "title"])
        found = concept_keys(plain, texts) if concepts else ()
        return cls(kinds, aliases, found, parts)

    def digest(self) -> str:
        """Changes whenever the vocabulary does (graph freshness checks use it)."""
        if not self.aliases and not self.concepts and not self.parts:
            return stable_id(sorted(self.kinds.items()))
        return stable_id(sorted(self.kinds.items()), sorted(self.aliases.items()), sorted(self.concepts),
                         sorted(self.parts.items()))

    def canonical(self, name: str) -> str | None:
        """The entity a title or name stands for, if it is one."""
        k = key(name)
        return self.aliases.get(k, k) if k in self.kinds else None

    def kind_of(self, name: str) -> str:
        return self.kinds.get(self.aliases.get(name, name), "name")

    def names(self, text: str) -> list[str]:
        """Entity keys ``text`` names (mentions starting with a capital or a digit, and concepts in
        any case), variants as their canonical key, in order."""
        out: dict[str, None] = {}
        for k, _proper in self.mentions(text):
            out.setdefault(self.aliases.get(k, k), None)
            for p in self.parts.get(k, ()):
                out.setdefault(p, None)
        return list(out)

    def mentions(self, text: str) -> list[tuple[str, bool]]:
        """(key, written as a proper name) for every mention, variants not folded; longest match
        first, no overlaps. A lower-case mention counts only for a concept."""
        words = word_spans(text)
        found: list[tuple[str, bool]] = []
        i = 0
        while i < len(words):
            w, orig = words[i][0], words[i][1]
            lengths = self._lengths.get(w)
            proper = is_capitalised(orig) or orig[:1].isdigit()
            if lengths and (proper or self.concepts):
                for n in lengths:
                    if i + n <= len(words):
                        k = " ".join(x[0] for x in words[i:i + n])
                        if k in self.kinds and (proper or k in self.concepts):
                            found.append((k, proper))
                            i += n
                            break
                else:
                    i += 1
                continue
            i += 1
        return found


_ACRONYM = re.compile(r"\(([A-Z][A-Z0-9]{1,7})\)")
"""An acronym defined where it is introduced: a word in capitals in parentheses, ``(NASA)``."""


def defined_acronyms(text: str) -> list[tuple[str, str]]:
    """(acronym key, long form key) for every ``Long Form (LF)`` of ``text``: the fewest words
    before the parenthesis, starting with a capital, whose initials spell the acronym (connectors
    such as *and* and *of* may be skipped)."""
    from tools.resolution import initials

    out: list[tuple[str, str]] = []
    for m in _ACRONYM.finditer(text):
        acronym = _fold_word(m.group(1))
        before = word_spans(text[max(0, m.start() - 200):m.start()])
        for n in range(2, min(len(before), len(acronym) + 4) + 1):
            words = before[-n:]
            if is_capitalised(words[0][1]) and acronym in initials([w for w, *_ in words]):
                out.append((acronym, " ".join(w for w, *_ in words)))
                break
    return out
CONCEPT_MIN_SUPPORT = 2
"""A concept must be written in lower case in at least this many texts: it then bridges them."""
CONCEPT_MAX_SHARE = 0.01
CONCEPT_MAX_SUPPORT = 10
"""... and in at most this many texts or this share of them, whichever is more (a commoner word is
a hub, not a bridge)."""


def concept_keys(ex: TextEntityExtractor, texts: list[str]) -> list[str]:
    """Titles the corpus writes in lower case mid-sentence in more texts than it capitalises them
    there, in at least ``CONCEPT_MIN_SUPPORT`` texts and at most ``CONCEPT_MAX_SUPPORT`` (or
    ``CONCEPT_MAX_SHARE`` of them):
    the lower-case concepts (``bubonic plague``) a passage and a question share without a capital."""
    titles = [k for k, v in ex.kinds.items() if v == "title"]
    probe = TextEntityExtractor({k: "title" for k in titles}, concepts=titles)
    lower: Counter[str] = Counter()
    upper: Counter[str] = Counter()
    for text in texts:
        body = text.split("\n", 1)[-1]
        seen_lower: set[str] = set()
        seen_upper: set[str] = set()
        for k, proper in probe.mentions(body):
            (seen_upper if proper else seen_lower).add(k)
        lower.update(seen_lower)
        upper.update(seen_upper)
    cap = max(CONCEPT_MAX_SUPPORT, int(CONCEPT_MAX_SHARE * len(texts)))
    return sorted(k for k, n in lower.items() if CONCEPT_MIN_SUPPORT <= n <= cap and n > upper[k])
