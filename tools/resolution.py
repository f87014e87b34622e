"""Entity resolution: the written variants of one name folded into one key (no model, no download).

An extractor finds names; the same thing is often written several ways, and each spelling
would become a node of its own, so a walk meant to cross from one passage to another through
it stops or spreads through a hub instead. ``alias_map`` looks at a whole vocabulary of keys
(lower-case words separated by single spaces, as ``tools.textentities.key`` makes them) and
returns ``variant -> canonical`` for the variants it can fold **unambiguously**; a variant
that could stand for two names is left alone. The rules, each general (nothing of any
corpus, the word lists are ordinary English):

* **honorifics and forms of address** dropped when a name of two or more words remains:
  ``sir walter scott`` -> ``walter scott`` (``king john`` stays: ``john`` could be anyone);
* **legal-form suffixes** dropped: ``acme widgets inc`` -> ``acme widgets``;
* **state forms**: ``republic of china``, ``state of texas``, ``new york state``,
  ``kingdom of sweden`` -> ``china``, ``texas``, ``new york``, ``sweden`` when those are keys;
* **partial names**: a name of two or more words that ends exactly one longer name (its
  last words) folds into it: ``strauss ii`` -> ``johann strauss ii``; a title (a key a
  passage is about) is a name of its own and never folded by this rule, nor is a name into
  a longer one whose other words are a name themselves (``italian east africa`` is two names
  run together) or end with a connector (``university of new york`` is not ``new york``);
* **acronyms**: an acronym the texts define (write in parentheses, ``(NASA)``) whose letters
  are the initials of exactly one name's words (connectors such as *of*, *and*, *the* may be
  skipped): ``nasa`` -> ``national aeronautics and space administration``;
* **titles without their article** (``bare_titles``, applied by the extractor before the rest): a
  title of three or more words starting with *the*, *a* or *an* is also named without it, unless
  another title or an existing key has that bare form;
* **abbreviated words**: a name equal to exactly one longer name but for words that are
  abbreviations of that name's words (same first letter, then consonants in order, shorter)
  or, inside a name, initials: ``order svc`` -> ``order service``, ``robert j bentley`` ->
  ``robert julian bentley``; a regnal numeral is never an initial (``adolf i`` is not ``adolf ii``).

Chains are followed to their end (``sir johann strauss ii`` -> ``johann strauss ii``) and a
rule never folds a key into itself or into a cycle.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping

HONORIFICS = frozenset("""
sir dame lord lady mr mrs ms miss dr doctor prof professor rev reverend fr father saint st
king queen prince princess emperor empress tsar czar sultan pope president general gen
colonel col captain capt admiral lieutenant sergeant senator governor judge justice
""".split())
LEGAL_FORMS = frozenset("inc incorporated ltd limited llc plc corp corporation co gmbh ag sa bv".split())
STATE_FORMS = frozenset("""
republic kingdom state commonwealth empire principality federation emirate sultanate duchy
province territory city county
""".split())
TRAILING_STATE_FORMS = frozenset({"state", "province"})
"""Forms that may follow the place (``new york state``); ``kansas city`` or ``wayne county`` are other places."""
STATE_ADJECTIVES = frozenset("""
people s peoples democratic federal socialist islamic united grand free soviet arab
""".split())
CONNECTORS = frozenset("of the and for de la del des di da du von van der den y e al el le in at on to".split())
ARTICLES = frozenset("the a an".split())
"""Leading articles a title may be written without (``Fox and the Hound``)."""
MIN_ACRONYM = 2
MAX_ACRONYM = 8


def _strip_honorifics(words: list[str]) -> list[str]:
    i = 0
    while i < len(words) - 1 and words[i] in HONORIFICS:
        i += 1
    return words[i:]


def _strip_legal(words: list[str]) -> list[str]:
    j = len(words)
    while j > 1 and words[j - 1] in LEGAL_FORMS:
        j -= 1
    return words[:j]


def state_core(words: list[str]) -> list[str] | None:
    """The place a state form names: ``republic of china`` -> ``china``, ``new york state`` -> ``new york``."""
    if "of" in words:
        i = words.index("of")
        head = words[:i]
        if head and head[-1] in STATE_FORMS and all(w in STATE_ADJECTIVES or w in STATE_FORMS for w in head) \
                and i + 1 < len(words):
            rest = words[i + 1:]
            return rest[1:] if rest[0] == "the" and len(rest) > 1 else rest
    if len(words) > 1 and words[-1] in TRAILING_STATE_FORMS:
        return words[:-1]
    return None


def initials(words: list[str]) -> set[str]:
    """The acronyms a name's words spell: every word's initial, or only the non-connectors'."""
    every = "".join(w[0] for w in words)
    content = "".join(w[0] for w in words if w not in CONNECTORS)
    return {a for a in (every, content) if len(a) >= MIN_ACRONYM}


VOWELS = frozenset("aeiouy")
ROMAN = re.compile(r"[ivx]+")
"""A regnal or ordinal numeral (``ii``, ``xiv``): a different person, never an abbreviation."""


def is_abbreviation(short: str, word: str) -> bool:
    """``short`` abbreviates ``word``: shorter, same first letter, no vowel after it, its letters in
    order in ``word``, at least three letters (``svc`` service, ``intl`` international; not ``bay``
    battery, nor ``st``, which is saint or street)."""
    if not short.isalpha() or len(short) >= len(word) or short[0] != word[0] or len(short) < 3 \
            or ROMAN.fullmatch(short) or ROMAN.fullmatch(word):
        return False
    if any(c in VOWELS for c in short[1:]):
        return False
    it = iter(word)
    return all(c in it for c in short)


def _abbreviates(short: list[str], long: list[str]) -> bool:
    """Word by word equal or abbreviated; a single-letter initial only inside (``david a johnston``)."""
    return all(a == b or is_abbreviation(a, b)
               or (len(a) == 1 and 0 < i < len(short) - 1 and b[0] == a and not ROMAN.fullmatch(b) and a not in "iv")
               for i, (a, b) in enumerate(zip(short, long, strict=True)))


def _unique(candidates: Iterable[str]) -> str | None:
    found = set(candidates)
    return found.pop() if len(found) == 1 else None


def alias_map(keys: Mapping[str, str], acronyms: Iterable[str] = (), titles: Iterable[str] | None = None,
              counts: Mapping[str, int] | None = None) -> dict[str, str]:
    """``variant -> canonical`` over a vocabulary of keys (see the module docstring).

    ``keys``: key -> kind; ``acronyms``: keys written in capitals somewhere (``nasa``);
    ``titles``: keys a passage is about (default: the keys of kind ``title``), which the
    partial-name rule never folds; ``counts``: how many texts write each key. With counts, a
    partial name folds only into a name written at least as often as itself
    (``north dakota`` stays itself beside a rarer ``mountrail county north dakota``)."""
    vocab = set(keys)
    title_keys = set(titles) if titles is not None else {k for k, v in keys.items() if v == "title"}

    def established(long: str, short: str) -> bool:
        return counts is None or counts.get(long, 0) >= max(1, counts.get(short, 0))
    split = {k: k.split() for k in vocab}
    folds: dict[str, str] = {}

    def put(variant: str, target: str | None) -> None:
        if target and target != variant and target in vocab and variant not in folds:
            folds[variant] = target

    # forms of one name: honorific, legal form, state form (the bare name is canonical)
    for k, words in split.items():
        bare = _strip_legal(_strip_honorifics(words))
        if bare != words and len(bare) >= 2:  # `king oliver` is no `oliver`
            put(k, " ".join(bare))
        core = state_core(words)
        if core:
            put(k, " ".join(core))

    # partial names: the last words of exactly one longer name
    by_tail: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for k, words in split.items():
        for n in range(2, len(words)):
            by_tail[tuple(words[-n:])].add(k)
    for k, words in split.items():
        if k in folds or k in title_keys:
            continue
        tail = tuple(_strip_honorifics(words))
        if tail[0] in CONNECTORS:  # `king of poland` is an office, not a partial name
            continue
        if len(tail) >= 2:
            longer = {x for x in by_tail.get(tail, ()) if x != k and len(split[x]) > len(tail)
                      and split[x][-len(tail) - 1] not in CONNECTORS  # `university of new york` is no `new york`
                      and " ".join(split[x][:-len(tail)]) not in vocab  # two names run together: `italian east africa`
                      and "and" not in split[x]
                      and not (split[x][0] in HONORIFICS and x in folds)}
            target = _unique(longer)
            put(k, target if target and established(target, k) else None)

    # acronyms: the initials of exactly one longer name
    by_initials: dict[str, set[str]] = defaultdict(set)
    for k, words in split.items():
        if len(words) >= MIN_ACRONYM:
            for a in initials(words):
                by_initials[a].add(k)
    for a in set(acronyms):
        if a in vocab and a not in folds and " " not in a and MIN_ACRONYM <= len(a) <= MAX_ACRONYM:
            put(a, _unique(by_initials.get(a, ())))  # defined by the texts: no count needed

    # abbreviated words: equal to exactly one longer name but for abbreviations of its words
    by_shape: dict[tuple[str, ...], set[str]] = defaultdict(set)  # an abbreviation keeps each word's initial
    for k, words in split.items():
        by_shape[tuple(w[0] for w in words)].add(k)
    for k, words in split.items():
        if k in folds or len(words) < 2:
            continue
        matches = {x for x in by_shape[tuple(w[0] for w in words)] if x != k and _abbreviates(words, split[x])}
        put(k, _unique(matches))

    return {v: _follow(v, folds) for v in sorted(folds) if _follow(v, folds) != v}


def bare_titles(keys: Mapping[str, str]) -> dict[str, str]:
    """``bare -> title`` for the titles (keys of kind ``title``) of three or more words that start
    with an article, named without it: ``fox and the hound`` -> ``the fox and the hound``. Only
    when no other title has the same bare form and the bare form is no key already: a name the
    texts write themselves may be another thing (``golden calf``, an award, is not the film)."""
    found: dict[str, set[str]] = defaultdict(set)
    for k, kind in keys.items():
        words = k.split()
        if kind == "title" and len(words) >= 3 and words[0] in ARTICLES:
            found[" ".join(words[1:])].add(k)
    return {bare: next(iter(full)) for bare, full in found.items() if len(full) == 1 and bare not in keys}


def _follow(key: str, folds: Mapping[str, str]) -> str:
    seen = {key}
    cur = key
    while cur in folds:
        nxt = folds[cur]
        if nxt in seen:  # a cycle: stay where it closed
            return key
        seen.add(nxt)
        cur = nxt
    return cur


def contained_names(keys: Iterable[str], counts: Mapping[str, int],
                    titles: Iterable[str] = ()) -> dict[str, tuple[str, ...]]:
    """Names that run two names together, and the names they contain.

    A capitalised run can swallow a name next to it (a cast list's ``Harper Natalie Wood``,
    a school written with its town). A key of three or more words that begins or ends with a
    key of two or more words the texts write more often than the whole also names that key
    (the longest such head and tail). A title is one name and keeps it; a part never starts or
    ends at a connector (``university of texas at austin`` contains no ``austin``)."""
    vocab = set(keys)
    title_keys = set(titles)
    out: dict[str, tuple[str, ...]] = {}
    for k in sorted(vocab - title_keys):
        words = k.split()
        if len(words) < 3:
            continue
        own = counts.get(k, 0)
        found: list[str] = []
        for part in (*(words[:i] for i in range(len(words) - 1, 1, -1)),  # heads, longest first
                     *(words[i:] for i in range(1, len(words) - 1))):  # tails, longest first
            if part[0] in CONNECTORS or part[-1] in CONNECTORS:
                continue
            rest = words[len(part):] if part == words[:len(part)] else words[:len(words) - len(part)]
            if rest[0] in CONNECTORS or rest[-1] in CONNECTORS:
                continue
            p = " ".join(part)
            if p in vocab and counts.get(p, 0) > own:
                found.append(p)
                is_head = part == words[:len(part)]
                if is_head and any(f != p and k.startswith(f + " ") for f in found[:-1]):
                    found.pop()
                elif not is_head and any(f != p and k.endswith(" " + f) for f in found[:-1]):
                    found.pop()
        if found:
            out[k] = tuple(dict.fromkeys(found))
    return out
