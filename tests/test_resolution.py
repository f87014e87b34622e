"""Entity resolution: which written variants fold into one key, and which are left alone."""

from __future__ import annotations

from tools.resolution import alias_map, contained_names, initials, is_abbreviation, state_core


def vocab(*names: str, titles: tuple[str, ...] = ()) -> dict[str, str]:
    return {**{n: "name" for n in names}, **{t: "title" for t in titles}}


def test_a_partial_name_that_ends_exactly_one_full_name_folds_into_it():
    assert alias_map(vocab("johann strauss ii", "strauss ii", "vienna")) == {"strauss ii": "johann strauss ii"}


def test_an_ambiguous_partial_name_is_not_folded():
    assert alias_map(vocab("strauss ii", "johann strauss ii", "eduard strauss ii")) == {}


def test_a_one_word_partial_name_is_never_folded():
    assert alias_map(vocab("strauss", "johann strauss")) == {}


def test_a_title_is_a_name_of_its_own_and_not_a_partial_name():
    assert alias_map(vocab("johann strauss ii", titles=("strauss ii",))) == {}


def test_a_name_after_a_connector_is_another_entity_not_a_partial_name():
    assert alias_map(vocab("new york", "university of new york")) == {}


def test_two_names_run_together_do_not_absorb_the_second():
    # `italian` is a name by itself, so `italian east africa` is not the full form of `east africa`
    assert alias_map(vocab("east africa", "italian", "italian east africa")) == {}


def test_with_counts_a_partial_name_folds_only_into_a_name_written_at_least_as_often():
    names = vocab("north dakota", "van hook township north dakota")
    assert alias_map(names, counts={"north dakota": 40, "van hook township north dakota": 1}) == {}
    assert alias_map(names, counts={"north dakota": 1, "van hook township north dakota": 1}) == {
        "north dakota": "van hook township north dakota"}


def test_an_honorific_is_dropped_when_a_full_name_remains():
    assert alias_map(vocab("sir walter scott", "walter scott")) == {"sir walter scott": "walter scott"}
    assert alias_map(vocab("president barack obama", "barack obama"))["president barack obama"] == "barack obama"


def test_an_honorific_before_a_single_word_is_left_alone():
    assert alias_map(vocab("king john", "john", "elton john")) == {}


def test_a_legal_form_suffix_is_dropped():
    assert alias_map(vocab("acme widgets inc", "acme widgets")) == {"acme widgets inc": "acme widgets"}


def test_a_state_form_folds_into_the_place_it_names():
    names = vocab("republic of china", "china", "state of new york", "new york", "new york state",
                  "kingdom of the netherlands", "netherlands", "people s republic of china")
    assert alias_map(names) == {"republic of china": "china", "state of new york": "new york",
                                "new york state": "new york", "kingdom of the netherlands": "netherlands",
                                "people s republic of china": "china"}


def test_a_city_or_county_named_after_a_place_is_another_place():
    assert state_core(["kansas", "city"]) is None and state_core(["wayne", "county"]) is None
    assert alias_map(vocab("kansas city", "kansas", "wayne county", "wayne")) == {}


def test_an_acronym_folds_into_the_name_it_abbreviates_when_unambiguous():
    names = vocab("nasa", "national aeronautics and space administration", "un", "united nations")
    assert alias_map(names, acronyms={"nasa", "un"}) == {
        "nasa": "national aeronautics and space administration", "un": "united nations"}


def test_an_acronym_the_texts_never_define_is_not_folded():
    assert alias_map(vocab("nasa", "national aeronautics and space administration")) == {}


def test_an_ambiguous_acronym_is_not_folded():
    names = vocab("un", "united nations", "university of nebraska")
    assert initials(["university", "of", "nebraska"]) == {"uon", "un"}
    assert alias_map(names, acronyms={"un"}) == {}


def test_an_abbreviated_service_name_folds_into_the_full_one():
    # incident material: `order-svc` and `order-service` written as keys
    assert alias_map(vocab("order svc", "order service", "payment service")) == {"order svc": "order service"}


def test_abbreviations_keep_the_first_letter_and_drop_vowels_only():
    assert is_abbreviation("svc", "service") and is_abbreviation("intl", "international")
    assert not is_abbreviation("bay", "battery") and not is_abbreviation("st", "saint")
    assert not is_abbreviation("svc", "svc")


def test_a_middle_initial_folds_into_the_spelled_out_name():
    assert alias_map(vocab("robert j bentley", "robert julian bentley")) == {"robert j bentley": "robert julian bentley"}


def test_a_regnal_numeral_is_never_an_initial():
    assert alias_map(vocab("adolf i prince of lippe", "adolf ii prince of lippe")) == {}


def test_folds_follow_chains_to_the_end():
    names = vocab("sir johann strauss ii", "johann strauss ii", "strauss ii")
    assert alias_map(names) == {"sir johann strauss ii": "johann strauss ii", "strauss ii": "johann strauss ii"}


def test_a_run_that_swallows_a_more_common_name_also_names_it():
    keys = ["harper natalie wood", "natalie wood", "oklahoma city ballet", "oklahoma city"]
    counts = {"harper natalie wood": 1, "natalie wood": 3, "oklahoma city ballet": 1, "oklahoma city": 5}
    assert contained_names(keys, counts) == {"harper natalie wood": ("natalie wood",),
                                             "oklahoma city ballet": ("oklahoma city",)}


def test_a_title_and_a_connector_bounded_part_contain_nothing():
    keys = ["university of texas at austin", "university of texas", "texas at austin", "harper natalie wood",
            "natalie wood"]
    counts = dict.fromkeys(keys, 1) | {"university of texas": 9, "texas at austin": 9, "natalie wood": 9}
    assert contained_names(keys, counts, titles=["harper natalie wood"]) == {}
