"""Spellings that sound the same to a Dutch speaker (issue 40), checked as a person would check
them, on the real sample: a word that sounds like a registered one finds it, also at the start
of a word and while it is still being typed; a word typed as the register has it comes first."""

from __future__ import annotations

import pytest

from engine import _core
from engine._reference import sound_key as twin_sound_key
from engine._reference import sound_start as twin_sound_start
from engine.explain import explain


def lines(index, q, limit=5):
    return [h.lines[0] + ", " + h.lines[1] for h in index.suggest(q, limit=limit)]


@pytest.mark.parametrize(("q", "want"), [
    ("agterweg 2 groningen", "Achterweg 2, 9725 BN Groningen"),          # ch written g
    ("ofstraat 5 groningen", "Hofstraat 5-1, 9712 JA Groningen"),        # an h left out
    ("kristiaan sterckstraat 2 maastricht", "Christiaan Sterckstraat 2,"),  # ch written k
    ("kornelis jolstraat 1 den haag", "Cornelis Jolstraat 1,"),          # c written k
    ("christiaan huigensweg 5 den bosch", "Christiaan Huygensweg 5,"),   # uy written ui
    ("dorpstraat 10 rosmalen", "Dorpsstraat 10,"),                       # ss written s
    ("haagse bluf 12 den haag", "Haagsche Bluf 12,"),                    # sch written s
    ("friese vlaak 2 makkum", "Friesche Vlaak 2,"),
])
def test_a_word_that_sounds_like_the_street_finds_it(sample_index, q, want):
    assert lines(sample_index, q)[0].startswith(want)


@pytest.mark.parametrize(("q", "want"), [
    ("agterw 2 gron", "Achterweg 2,"),        # still being typed, the sound at its start
    ("ofstr 5 groningen", "Hofstraat 5-1,"),
    ("kristiaan sterckstr 2", "Christiaan Sterckstraat 2,"),
])
def test_a_sound_alike_still_being_typed(sample_index, q, want):
    assert lines(sample_index, q)[0].startswith(want)


def test_a_word_typed_as_registered_comes_before_one_that_sounds_like_it(sample_index):
    """`bosstraat` is a registered word (Cornelis Bosstraat, Rosmalen): it answers before the
    Boschstraat it sounds like (Maastricht), which only a place that has no Bosstraat brings up."""
    assert lines(sample_index, "bosstraat 5")[0].startswith("Cornelis Bosstraat 5,")
    assert lines(sample_index, "boschstraat 5")[0].startswith("Boschstraat 5,")
    assert lines(sample_index, "bosstraat 5 maastricht")[0] == "Boschstraat 5, 6211 AS Maastricht"


def test_a_sound_alike_ranks_below_the_words_as_typed(sample_index):
    """Scored together (a slip in the place makes the query need more than the words as
    typed), the street typed as registered comes before the one that sounds like it."""
    assert lines(sample_index, "dorpsstraat 10 rosmalenn")[0].startswith("Dorpsstraat 10,")
    got = _core._search_scored(sample_index, "dorpsstraat 10 rosmalenn", 5, None, None)
    assert got[1] == "slip"


def test_a_sound_alike_that_leaves_a_word_untyped_competes_with_the_slips(sample_index):
    """`reestraat` sounds like Van Reesstraat, whose Van was not typed: more than a slip costs,
    so the slips are looked for too, and Reepstraat 12, one slip away, comes first. An h
    before a consonant is heard: `hreestraat` is a slip from Herestraat, no sound-alike."""
    assert lines(sample_index, "reestraat 12")[0].startswith("Reepstraat 12,")
    assert lines(sample_index, "hreestraat 12")[0].startswith("Herestraat 12,")


def test_explain_reads_a_sound_alike_as_a_slip(sample_index):
    hit = sample_index.suggest("agterweg 2 groningen", limit=1)[0]
    kinds = [(m.typed, m.kind, m.field) for m in explain(sample_index, "agterweg 2 groningen", hit)]
    assert kinds == [("agterweg", "slip", "street"), ("2", "exact", "number"), ("groningen", "exact", "locality")]


@pytest.mark.parametrize(("a", "b"), [
    ("achterweg", "agterweg"), ("christiaan", "kristiaan"), ("hofstraat", "ofstraat"),
    ("dorpsstraat", "dorpstraat"), ("mollenweg", "molenweg"), ("philips", "filips"),
    ("hofstad", "hofstat"), ("stadt", "stad"), ("raadhuisplein", "raathuisplein"),
    ("keizer", "kyzer"), ("paus", "pous"), ("piet", "pit"), ("bosch", "bos"), ("haagsche", "haagse"),
    ("ceintuur", "seintuur"), ("cornelis", "kornelis"), ("dyck", "dyk"), ("maes", "maas"),
    ("huygens", "huigens"), ("leyden", "leiden"), ("alexander", "aleksander"), ("thorbecke", "torbecke"),
    ("raaigras", "raaichras"), ("tigrisdreef", "tichrisdreef"),   # ch inside a word, before r too
])
def test_words_that_sound_alike_have_one_key(a, b):
    """The rules of words.SOUND_RULES, in the engine and in its twin (written otherwise), on
    folded words (ij is y)."""
    assert _core.sound_key(a) == _core.sound_key(b) == twin_sound_key(a) == twin_sound_key(b)


@pytest.mark.parametrize(("a", "b"), [
    ("molenweg", "moolenweg"), ("hendrik", "hentrik"), ("straat", "strat"), ("kerk", "gerk"),
    ("dreef", "treef"), ("hreestraat", "reestraat"),
])
def test_words_that_sound_otherwise_have_another_key(a, b):
    """Long and short vowels, d before r (Hendrik), k and g, d at the start, an h before a
    consonant (heard) stay apart."""
    assert _core.sound_key(a) != _core.sound_key(b)
    assert twin_sound_key(a) != twin_sound_key(b)


def test_the_key_of_a_word_still_being_typed_starts_the_key_of_the_word():
    """A last letter that may begin a longer rule (c of ch, e of ei, d of dt) is left out, and
    no rule for the end of a word is applied: the key starts the key of every word it starts."""
    for word in ("achterweg", "christiaan", "keizerstraat", "hofstadplein", "raadhuisplein", "boschstraat"):
        for n in range(1, len(word)):
            start = _core.sound_key(word[:n], whole=False)
            assert _core.sound_key(word).startswith(start), (word[:n], start)
            assert twin_sound_key(word[:n], whole=False) == start


@pytest.mark.parametrize(("typed", "word"), [
    ("marnikss", "marniksstraat"),   # a consonant after the same one is written once
    ("kiss", "kiesstraat"),
    ("jansenss", "janssensstraat"),
    ("visseri", "vissery"),          # an i typed last may begin ij, folded y (Visserij)
    ("getti", "gety"),
    ("raaichr", "raaigras"),         # ch inside a word is g, also before r
])
def test_the_key_of_a_word_still_being_typed_goes_on_as_the_key_of_the_word(typed, word):
    """Issue 40's typing misses: the key of the word still being typed starts the key of the
    registered word, and the letters it says may come next admit the letter that does."""
    key = _core.sound_key(word)
    for start, follow in (_core.sound_start(typed), twin_sound_start(typed)):
        assert key.startswith(start), (typed, start, key)
        assert not follow or key[len(start)] in follow, (typed, start, follow, key)

