"""The encyclopaedic entity extractor: titles and capitalised names, matched by folded key."""

from __future__ import annotations

from tools.entities import EntityExtractor
from tools.graph.analyzer import ComposedAnalyzer, analyzer_digest, canonical
from tools.textentities import TextEntityExtractor, capitalised_runs, key

TITLES = ["Tekezé (river)", "Pál Gábor", "Forbidden Ground", "Dmitri Varfolomeyev (footballer, born 1978)",
          "Free Guy", "It"]
TEXTS = [
    "Tekezé\nThe Tekezé is a river of Ethiopia. It flows into the Atbarah River in Sudan.",
    "Pál Gábor\nPál Gábor was a Hungarian film director. He won a prize at the Berlin International Film "
    "Festival in 1979.",
    "Forbidden Ground\nForbidden Ground is a Hungarian film directed by Pál Gábor.",
    "Dmitri Varfolomeyev\nDmitri Varfolomeyev (born 15 March 1978 in Leningrad) is a Russian footballer.",
    "Free Guy\nFree Guy is a 2021 film. Born in Canada, its director says it was a free guy in the story.",
]


def extractor() -> TextEntityExtractor:
    return TextEntityExtractor.from_corpus(TITLES, TEXTS)


def test_a_key_folds_accents_case_and_the_disambiguator():
    assert key("Tekezé (river)") == key("TEKEZE") == "tekeze"
    assert key("Dmitri Varfolomeyev (footballer, born 1978)") == "dmitri varfolomeyev"
    assert key("Harvest: 3,000 Years") == "harvest 3 000 years"
    assert key("Łódź Straße") == "lodz strasse"


def test_titles_and_names_written_mid_sentence_are_entities_of_their_kind():
    ex = extractor()
    assert ex.kind_of("pal gabor") == "title" and ex.kind_of("berlin international film festival") == "name"
    assert ex.kind_of("leningrad") == "name" and ex.kind_of("atbarah river") == "name"
    # capitalised only because a sentence starts there: never an entity; stopword-only titles neither
    assert not {"he", "born", "it", "the"} & set(ex.kinds)


def test_a_passage_names_the_titles_it_mentions_with_a_capital():
    ex = extractor()
    assert ex.names(TEXTS[2]) == ["forbidden ground", "hungarian", "pal gabor"]
    # "free guy" in lower case is prose, not the film
    assert ex.names("He was a free guy in Ethiopia.") == ["ethiopia"]
    assert "tekeze" in ex.names("Its source is near the Tekeze gorge.")  # without the accent too


def test_a_title_cased_question_names_the_titles_whatever_their_case():
    ex = extractor()
    assert ex.names("Which Film Came First, Forbidden Ground Or Free Guy?") == ["forbidden ground", "free guy"]
    assert ex.names("Where did Dmitri Varfolomeyev (Footballer)'s team play?") == ["dmitri varfolomeyev"]
    assert ex.names("who directed forbidden ground?") == []  # lower case: prose, as in a passage


def test_capitalised_runs_join_connectors_and_drop_stopword_ends():
    runs = dict(capitalised_runs("She studied at the University of Oxford. The Hague is in the Netherlands. "
                                 "Born there, he left."))
    # (key, at the start of a sentence): "Hague" follows "The", so its capital is its own
    assert runs == {"university of oxford": False, "hague": False, "netherlands": False, "born": True}


def test_the_incident_extractor_and_the_text_extractor_compose():
    incident = EntityExtractor({"order-service": "service", "retry_timeout": "config_key"})
    both = ComposedAnalyzer(incident, extractor())
    text = "Pál Gábor paged order-service after retry_timeout changed."
    assert both.names(text) == ["order-service", "retry_timeout", "pal gabor"]
    assert both.kind_of("order-service") == "service" and both.kind_of("pal gabor") == "title"
    # the incident side knows its names in any key style (ORDER-SERVICE is order-service)
    assert both.names("did ORDER-SERVICE page Pal Gabor?") == ["order-service", "pal gabor"]
    assert canonical(both, "Pál Gábor") == "pal gabor" and canonical(incident, "order-service") == "order-service"
    assert analyzer_digest(both) != analyzer_digest(ComposedAnalyzer(incident))
    assert analyzer_digest(extractor()) == analyzer_digest(extractor())


RESOLVE_TITLES = ["Johann Strauss II", "Republic of China", "Blue Danube", "Bubonic plague", "Rats"]
RESOLVE_TEXTS = [
    "Johann Strauss II\nJohann Strauss II was an Austrian composer. He wrote The Blue Danube.",
    "The Blue Danube\nThe Blue Danube is a waltz by Strauss II, first played in Vienna.",
    "Republic of China\nThe Republic of China was founded in 1912. The National Aeronautics and Space "
    "Administration (NASA) later flew over it; in China the waltz was played.",
    "Bubonic plague\nBubonic plague is spread by fleas. Outbreaks of bubonic plague reached Vienna.",
    "Rats\nRats carry fleas, and with them bubonic plague. NASA sent rats to space.",
    "Vienna\nIn Vienna, a harbour clerk wrote of bubonic plague, the Vienna Blue Danube and Johann Strauss II.",
]


def test_a_variant_names_its_canonical_entity_everywhere():
    ex = TextEntityExtractor.from_corpus(RESOLVE_TITLES, RESOLVE_TEXTS)
    assert ex.aliases["strauss ii"] == "johann strauss ii" and ex.aliases["republic of china"] == "china"
    assert ex.names(RESOLVE_TEXTS[1]) == ["blue danube", "johann strauss ii", "vienna"]
    assert ex.names("Who founded the Republic of China?") == ["china"]
    assert ex.names("What did NASA send?") == ["national aeronautics and space administration"]
    # a subject label resolves too: the passage titled "Republic of China" is about `china`
    assert ex.canonical("Republic of China") == "china" and ex.kind_of("strauss ii") == "title"


def test_without_resolution_every_spelling_is_its_own_entity():
    ex = TextEntityExtractor.from_corpus(RESOLVE_TITLES, RESOLVE_TEXTS, resolve=False)
    assert ex.aliases == {} and ex.names(RESOLVE_TEXTS[1]) == ["blue danube", "strauss ii", "vienna"]
    assert analyzer_digest(ex) != analyzer_digest(TextEntityExtractor.from_corpus(RESOLVE_TITLES, RESOLVE_TEXTS))


def test_a_run_swallowing_a_commoner_name_names_it_too():
    ex = TextEntityExtractor.from_corpus(RESOLVE_TITLES, RESOLVE_TEXTS)
    # `Vienna Blue Danube` is written once; `Blue Danube` in three texts
    assert ex.parts == {"vienna blue danube": ("blue danube",)}
    assert ex.names("the Vienna Blue Danube") == ["vienna blue danube", "blue danube"]


def test_lower_case_concepts_are_titles_the_corpus_writes_in_lower_case_in_several_texts():
    ex = TextEntityExtractor.from_corpus(RESOLVE_TITLES, RESOLVE_TEXTS, concepts=True)
    assert ex.concepts == {"bubonic plague"}  # `rats` is written in lower case nowhere but its title
    assert ex.names("what spreads bubonic plague?") == ["bubonic plague"]
    assert TextEntityExtractor.from_corpus(RESOLVE_TITLES, RESOLVE_TEXTS).names("what spreads bubonic plague?") == []


def test_a_title_written_without_its_leading_article_names_the_title():
    ex = TextEntityExtractor.from_corpus(
        ["The Fox and the Hound", "The King's Speech", "Kurt Russell"],
        ["The Fox and the Hound\nThe Fox and the Hound is a 1981 film with Kurt Russell.",
         "The King's Speech\nThe King's Speech is a 2010 film.",
         "Kurt Russell\nKurt Russell voiced Copper in Fox and the Hound."])
    assert ex.names("Who plays Copper in Fox and the Hound?") == ["copper", "the fox and the hound"]
    assert ex.names("In the King's Speech, who played the king?") == ["the king s speech"]
    assert ex.names("Kurt Russell voiced Copper in Fox and the Hound.")[-1] == "the fox and the hound"


def test_a_bare_title_shared_by_two_titles_or_a_title_of_its_own_is_left_alone():
    ex = TextEntityExtractor.from_corpus(["The Road Home", "A Road Home", "The Last Picture", "Last Picture"],
                                         ["x", "y", "z", "w"])
    assert "road home" not in ex.aliases and ex.canonical("last picture") == "last picture"
    # and a short title keeps its article: `Who` is no name of `The Who`
    assert "who" not in TextEntityExtractor.from_corpus(["The Who"], ["The Who\nThe Who is a band."]).kinds


def test_a_bare_title_the_texts_write_as_a_name_of_their_own_stays_that_name():
    ex = TextEntityExtractor.from_corpus(
        ["The Golden Calf (1930 film)", "Bygones (film)"],
        ["The Golden Calf\nThe Golden Calf is a 1930 film.",
         "Bygones\nBygones won the Golden Calf for best film at the festival."])
    assert ex.names("Bygones won the Golden Calf for best film.") == ["bygones", "golden calf"]
