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
