"""Score the engine on a query set generated at run time from random addresses of the register.

The public eval set is one sample of how people type; this makes others like it (a fresh seed,
a fresh set) so that the engine is judged on addresses and slips it was never tuned on.

    python benchmarks/synthetic_quality.py INDEX_DIR [--source CSV] [--seed N] [--n 1500]
                                           [--engine-root TREE] [--forms a,b,...]

`--engine-root`: search with the engine built in place in another source tree (the queries are
still made by this one), to measure a form on the engine before a change.

Forms: street number place; place street number; postcode number; number first; the street's
words cut to two thirds and the place to 4 letters; `straat` written `str`; a postcode glued
to the number; a whole pasted line with postcode; street, number and postcode; place first
with a comma, in capitals; the letter and addition as separate words; `ij` typed `y`; the
street's words written together (`VanSpeijkstraat`); `straat`, `weg`, `laan`... written apart
(`Van Speijk straat`); `nr.` before the number; `nr`, `no.`, `nummer`... before the number with
no place; one slip of a key in a street word of 6+
letters; one slip in the place name; two slips in a street word of 9+ letters; a slip in a
street word still being typed (cut two letters short) with the place cut to 4 letters; `ij`
and `ei` swapped in the street; a slip in the postcode typed after the street and number; the
postcode's four digits (and its first letter) still being typed after the street and number;
a letter or addition the house does not have (`12-h`, `12 bis`, `12a` for a plain 12); one
ei, ij, au or ou written the other way (`kijzerstraat`), in the street, in the street still
being typed (`kijzerst 192 utre`) and in the place (`alphen aan den rein`).
Issue 40's forms: the street written as a Dutch speaker who hears it may write it, one sound
spelt otherwise (`agterweg`, `kristiaan`, `ofstraat`, `dorpstraat`, `mollenweg`:
`sound_alike`; the same still being typed, the place cut to 4 letters: `sound_alike_typing`),
and the street and number with the former municipality of an address whose municipality has
merged since (`Hoofdstraat 1 Nuth`: `former_municipality`, from a sample of its own of the
addresses the source names one for).
With `--messy`, the forms of issue 14 too: the whole address glued (`stationsstraat5bergenopzoom`),
the street glued to the number, a place of several words glued, a note in brackets, an
addressee line first, the country in other languages, words for a floor after the number; and
streets that do not exist (`Zorplimstraat 12, Utrecht`), where any answer is wrong.
A hit counts when its postcode, number, letter and addition equal the address's.
"""

from __future__ import annotations

import argparse
import collections
import random
import re
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(REPO))

from benchlib import hit_key, postcode_text  # noqa: E402

import engine  # noqa: E402
from engine.ingest.source import read_source  # noqa: E402
from engine.normalize import fold  # noqa: E402


def _slip(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    return rng.choice([
        word[:i] + word[i + 1:],                     # deletion
        word[:i] + letter + word[i:],                # insertion
        word[:i] + letter + word[i + 1:],            # substitution
        word[:i] + word[i + 1] + word[i] + word[i + 2:],  # transposition
    ])


NOTES = ["achterom", "bellen a.u.b.", "2e bel", "niet bellen", "achterdeur", "bij de buren", "na 17u"]
ADDRESSEES = ["t.a.v. J. Jansen", "t.a.v. mevr. De Vries", "Fam. Bakker", "attn. P. Visser", "A. de Boer"]
FLOORS = ["2 hoog", "hs", "bg", "boven", "III", "1e etage", "3hg"]
COUNTRIES = ["Netherlands", "The Netherlands", "Holland", "Niederlande", "Pays-Bas", "Nederland", "NL"]
SYLLABLES = ["zor", "quen", "plim", "vax", "drub", "kwel", "tir", "moz", "snaf", "gol", "brix", "yte"]


def messy_forms(street: str, number: str, place: str, postcode: str, plain: bool,
                rng: random.Random) -> dict[str, str]:
    """The forms of issue 14 for one address: spaces missing, words around the address."""
    forms = {
        # a whole address glued: "stationsstraat5bergenopzoom"
        "glued_all": re.sub(r"[\s-]", "", f"{street}{number}{place}").lower(),
        # the street and number glued, the place apart: "kerkstraat12 alphen aan den rijn"
        "glued_street_number": f"{street.replace(' ', '')}{number} {place}".lower(),
        "note_in_brackets": f"{street} {number}, {place} ({rng.choice(NOTES)})",
        "addressee_first": f"{rng.choice(ADDRESSEES)}, {street} {number}, {place}",
        "country_after": f"{street} {number}, {postcode} {place}, {rng.choice(COUNTRIES)}",
    }
    if " " in place:
        # a place of several words glued: "kerkstraat 12 alphenaandenrijn"
        forms["glued_place"] = f"{street} {number} {place.replace(' ', '').replace('-', '')}".lower()
    if plain:
        # words people add to a number that the register does not hold as an addition
        forms["floor_words"] = f"{street} {number} {rng.choice(FLOORS)} {place}"
    return forms


def _respelt_once(text: str, rng: random.Random) -> tuple[str, int] | None:
    """text with one ei, ij, au or ou, at random, written the other way (one sound, two
    spellings: `Keizerstraat` as `Kijzerstraat`), and where; None when it has none."""
    spots = [(m.start(), m.group()) for m in re.finditer("ij|ei|au|ou", text)]
    if not spots:
        return None
    i, sound = rng.choice(spots)
    other = {"ij": "ei", "ei": "ij", "au": "ou", "ou": "au"}[sound]
    return text[:i] + other + text[i + 2:], i


# How a Dutch speaker may spell a sound otherwise (issue 40): (where, as what), the letters of
# `where` at a position (lookbehind/lookahead allowed) written as `what`. ei/ij and au/ou have
# forms of their own (`_respelt_once`).
SOUND_SLIPS = [
    (r"(?<!s)ch(?!r)", "g"),           # Achterweg: agterweg
    (r"(?<=[aeiou])g(?=[^g]|$)", "ch"),  # Berg: berch
    (r"(?<!s)chr", "kr"),               # Christiaan: kristiaan
    (r"c(?=[aoulr])", "k"),             # Cornelis: kornelis
    (r"k(?=[aou])", "c"),               # Karel: carel
    (r"ph", "f"),                       # Philips: filips
    (r"f", "ph"),                       # Filips: philips
    (r"\bh(?=[aeiou])", ""),            # Hofstraat: ofstraat
    (r"\b(?=[aeiou])", "h"),            # Oude: houde
    (r"(?<=[tg])h", ""),                # Thorbecke: torbecke
    (r"t(?=[aeiou])", "th"),            # Torenstraat: thorenstraat
    (r"ie", "i"),                       # Margriet: margrit
    (r"sch(?=e?\b)", "s"),              # Bosch: bos, Haagsche: haagse
    (r"d\b", "t"),                      # Hofstad: hofstat
    (r"d\b", "dt"),                     # Hofstad: hofstadt
    (r"dt\b", "d"),                     # Stadt: stad
    (r"d(?=h)", "t"),                   # Raadhuisplein: raathuisplein
    (r"([bdfgklmnprst])\1", r"\1"),     # Dorpsstraat: dorpstraat, Mollenweg: molenweg
    (r"(?<=[aeiou])([lmnprt])(?=[aeiou])", r"\1\1"),  # Molenweg: mollenweg
    (r"ae", "aa"),                      # Maes: maas
    (r"uy", "ui"),                      # Huygens: huigens
    (r"x", "ks"),                       # Alexander: aleksander
]


def _sound_alike(text: str, rng: random.Random, avoid: set[str]) -> tuple[str, int] | None:
    """text (lower case) with one of its sounds spelt otherwise (SOUND_SLIPS, a spot at random),
    and where; None when it has none that gives a text not in `avoid` (another street of the
    place, which the person would then have typed)."""
    # in a word of 4+ letters: not in an initial ("F. Zernikestraat") or a short word ("'t")
    words = [(w.start(), w.end()) for w in re.finditer(r"[^\W\d_]{4,}", text)]
    spots = [(m, what) for where, what in SOUND_SLIPS for m in re.finditer(where, text)
             if any(a <= m.start() and m.end() <= b for a, b in words)]
    rng.shuffle(spots)
    for m, what in spots:
        out = text[:m.start()] + m.expand(what) + text[m.end():]
        if out != text and fold(out) not in avoid:
            return out, m.start()
    return None


def wrong_street(t, rng: random.Random) -> str:
    """A street that no place has, with a real number and place: "Zorplimstraat 12, Utrecht"
    (a person who typed it must not be answered with another street)."""
    streets = {s.lower() for s in t.streets}
    while True:
        name = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
        street = name.capitalize() + rng.choice(["straat", "weg", "laan", "plein"])
        if street.lower() not in streets and not any(s.startswith(name) for s in streets):
            break
    return f"{street} {rng.randint(1, 150)}, {t.localities[rng.randrange(len(t.localities))]}"


def synthetic_queries(t, seed: int, n: int, *, messy: bool = False):
    """Yield (target, {form: query}) for n random addresses of the register t (engine.ingest.source
    `read_source`); the same seed gives the same queries. With ``messy``, also the forms of
    issue 14 (`messy_forms`), from a stream of their own: the other forms stay as they were."""
    messy_rng = random.Random(seed + 4)
    rng = random.Random(seed)
    pc_rng = random.Random(seed + 1)   # its own stream: the other forms stay as they were
    add_rng = random.Random(seed + 2)  # ... and this one's
    marker_rng = random.Random(seed + 3)
    sound_rng = random.Random(seed + 6)
    alike_rng = random.Random(seed + 8)   # issue 40's forms: streams of their own
    former_rng = random.Random(seed + 9)
    streets_of = _streets_by_place(t)
    for r in rng.sample(range(len(t.number)), n):
        street, place = t.streets[t.street[r]], t.localities[t.locality[r]]
        letter = chr(t.letter[r]) if t.letter[r] else ""
        addition = t.additions[t.addition[r]]
        number = f"{t.number[r]}{letter}" + (f"-{addition}" if addition else "")
        postcode = postcode_text(t.postcode[r])
        target = (postcode, int(t.number[r]), letter.upper(), addition.upper())
        forms = {
            "street_number_place": f"{street} {number} {place}".lower(),
            "place_street_number": f"{place} {street} {number}",
            "postcode_number": f"{postcode} {number}",
            "number_first": f"{number} {street} {place}",
            "partial_words": " ".join(w[: max(3, len(w) * 2 // 3)] for w in street.split()) + f" {number} {place[:4]}",
            "abbreviated": re.sub(r"straat\b", "str", street) + f" {number} {place}",
            "glued_postcode": f"{postcode.lower()}{number.replace('-', ' ')}",
            "full_line": f"{street} {number}, {postcode[:4]} {postcode[4:]} {place}",
            "street_number_postcode": f"{street} {number} {postcode}",
            "place_comma_street": f"{place}, {street} {number}".upper(),
            "spaced_addition": f"{street} {t.number[r]} {letter} {addition} {place}",
            "ij_as_y": f"{street} {number} {place}".lower().replace("ij", "y"),
            "joined_words": f"{street.replace(' ', '')} {number} {place}",
            "split_word": re.sub(r"(straat|weg|laan|plein|singel|gracht|dijk|kade|hof|park|pad)\b", r" \1", street)
            + f" {number} {place}",
            "number_marker": f"{street} nr. {number} {place}",
        }
        long_words = [w for w in street.split() if len(w) >= 6 and w.isalpha()]
        if long_words:
            w = rng.choice(long_words)
            forms["street_slip"] = f"{street.replace(w, _slip(w, rng), 1)} {number} {place}"
        if len(place) >= 6 and place.isalpha():
            forms["place_slip"] = f"{street} {number} {_slip(place, rng)}"
        nine = [w for w in street.split() if len(w) >= 9 and w.isalpha()]
        if nine:
            w = rng.choice(nine)
            forms["street_two_slips"] = f"{street.replace(w, _slip(_slip(w, rng), rng), 1)} {number} {place}"
        if long_words:
            # a slip in a word still being typed
            w = rng.choice(long_words)
            forms["partial_slip"] = f"{street.replace(w, _slip(w, rng)[: max(5, len(w) - 2)], 1)} {number} {place[:4]}"
        # ij and ei mixed up (one sound, two spellings)
        low = street.lower()
        if "ij" in low or "ei" in low:
            forms["ei_ij_mixed"] = (low.replace("ij", "\0").replace("ei", "ij").replace("\0", "ei")
                                    + f" {number} {place}")
        # a slip in the postcode typed after the street and number: a letter replaced, or
        # two digits swapped
        i = pc_rng.randrange(6)
        if i < 4 and postcode[i] != postcode[i + 1 if i < 3 else i - 1]:
            j = i + 1 if i < 3 else i - 1
            a, b = sorted((i, j))
            bad = postcode[:a] + postcode[b] + postcode[a] + postcode[b + 1:]
        else:
            bad = postcode[:4] + "".join(c if k != i - 4 else pc_rng.choice(
                [x for x in "ABCDEFGHJKLMNPRSTVWXZ" if x != c]) for k, c in enumerate(postcode[4:]))
        if bad != postcode:
            forms["postcode_slip"] = f"{street} {number} {bad}"
        # a letter or addition the house does not have (the register's house has none)
        if not letter and not addition:
            extra = add_rng.choice(["a", "b", "h", "hs", "1", "2", "bis", "zw", "rd"])
            sep = add_rng.choice(["-", " "] if extra.isdigit() else ["", "-", " "])
            forms["wrong_addition"] = f"{street} {number}{sep}{extra} {place}".lower()
        # a word that says a number follows, as people write it, and no place ("kerkstraat no. 5")
        marker = marker_rng.choice(["nr", "nr.", "no", "no.", "nummer", "num"])
        forms["number_marker_open"] = f"{street} {marker} {number}"
        # the postcode still being typed after the street and number
        forms["postcode_typing"] = f"{street} {number} {postcode[:4]}"
        forms["postcode_typing_letter"] = f"{street} {number} {postcode[:4]} {postcode[4]}".lower()
        # one sound written the other way (ei for ij, ou for au, and back): in the street, in
        # the street still being typed (cut after it) with the place cut to 4 letters, in the place
        respelt = _respelt_once(street.lower(), sound_rng)
        if respelt:
            text, i = respelt
            forms["sound_street"] = f"{text} {number} {place}".lower()
            forms["sound_typing"] = f"{text[:max(i + 3, len(text) * 2 // 3)]} {number} {place[:4]}".lower()
        respelt = _respelt_once(place.lower(), sound_rng)
        if respelt:
            forms["sound_place"] = f"{street} {number} {respelt[0]}".lower()
        # issue 40: one sound spelt otherwise in the street, as typed and still being typed
        alike = _sound_alike(street.lower(), alike_rng, streets_of.get(int(t.locality[r]), set()))
        if alike:
            text, i = alike
            forms["sound_alike"] = f"{text} {number} {place}".lower()
            forms["sound_alike_typing"] = f"{text[:max(i + 3, len(text) * 2 // 3)]} {number} {place[:4]}".lower()
        if messy:
            forms.update(messy_forms(street, number, place, postcode, not letter and not addition, messy_rng))
        yield target, forms
    # issue 40: the municipality an address had before a merger (the source's gemeente_bron)
    formers = _former_rows(t)
    for r in former_rng.sample(formers, min(len(formers), n // 5)):
        target, (street, number, _place) = _target(t, r)
        yield target, {"former_municipality": f"{street} {number} {t.former_municipalities[t.former_municipality[r]]}"}


def _target(t, r: int) -> tuple[tuple[str, int, str, str], tuple[str, str, str]]:
    """What a hit must equal for row r (postcode, number, letter, addition), and its street,
    number as typed (`12a-3`) and place."""
    letter = chr(t.letter[r]) if t.letter[r] else ""
    addition = t.additions[t.addition[r]]
    number = f"{t.number[r]}{letter}" + (f"-{addition}" if addition else "")
    return ((postcode_text(t.postcode[r]), int(t.number[r]), letter.upper(), addition.upper()),
            (t.streets[t.street[r]], number, t.localities[t.locality[r]]))


def _former_rows(t) -> list[int]:
    """The rows whose source names a municipality (gemeente_bron) other than theirs now."""
    had = np.flatnonzero(t.former_municipality > 0)
    now = np.asarray(t.municipalities, dtype=object)[t.municipality[had]]
    then = np.asarray(t.former_municipalities, dtype=object)[t.former_municipality[had]]
    return had[now != then].tolist()


def _streets_by_place(t) -> dict[int, set[str]]:
    """locality id -> the folded names of its streets."""
    pairs = np.unique(np.stack([t.locality, t.street], axis=1), axis=0)
    out: dict[int, set[str]] = {}
    for loc, st in pairs.tolist():
        out.setdefault(loc, set()).add(fold(t.streets[st]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("index")
    ap.add_argument("--source", default=str(REPO.parent / "shared" / "data" / "nl-addresses.csv.zst"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=1500)
    ap.add_argument("--show", type=int, default=3, help="misses to print per form")
    ap.add_argument("--messy", action="store_true",
                    help="add the forms of issue 14 (spaces missing, notes, addressee, country, floor "
                    "words) and streets that do not exist, which must find no other street")
    ap.add_argument("--engine-root", help="search with the engine built in place in this source tree")
    ap.add_argument("--forms", help="only these forms, comma-separated")
    args = ap.parse_args()
    if args.engine_root:
        import tempfile

        from ab_kinds import load_engine
        tmp = tempfile.TemporaryDirectory(prefix="synthetic-")
        sys.path.insert(0, tmp.name)
        index = load_engine(Path(args.engine_root).resolve(), "engine_under_test", Path(tmp.name)).AddressIndex.open(
            args.index)
    else:
        index = engine.AddressIndex.open(args.index)
    wanted = set(args.forms.split(",")) if args.forms else None
    t = read_source(args.source, progress=False)
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for target, forms in synthetic_queries(t, args.seed, args.n, messy=args.messy):
        for form, q in forms.items():
            if wanted is not None and form not in wanted:
                continue
            hits = [h.to_dict() for h in index.suggest(q, limit=5)]
            keys = [hit_key(h) for h in hits]
            n = counts[form]
            n["n"] += 1
            n["s1"] += bool(keys) and keys[0] == target
            n["s5"] += target in keys
            if target not in keys and n["shown"] < args.show:
                n["shown"] += 1
                print(f"miss {form:20} {q!r} -> {[h['lines'][0] + ', ' + h['lines'][1] for h in hits[:2]]}"
                      f" (wanted {' '.join(str(x) for x in target if x)})")
    print(f"{'form':22} {'n':>5} {'s@1':>6} {'s@5':>6}   (seed {args.seed})")
    for form, n in counts.items():
        print(f"{form:22} {n['n']:5d} {n['s1'] / n['n']:6.3f} {n['s5'] / n['n']:6.3f}")
    if args.messy:
        # a street that does not exist: any answer names another street (the rule of issue 14:
        # a hit matches every street word typed, within the allowed slips)
        wrong_rng = random.Random(args.seed + 5)
        answered = shown = 0
        for _ in range(args.n // 5):
            q = wrong_street(t, wrong_rng)
            hits = index.suggest(q, limit=5)
            answered += bool(hits)
            if hits and shown < args.show:
                shown += 1
                print(f"wrong street answered {q!r} -> {hits[0].street} {hits[0].number}, {hits[0].locality}")
        print(f"{'wrong_street (answered)':22} {args.n // 5:5d} {answered / (args.n // 5):6.3f}   (lower is better)")


if __name__ == "__main__":
    main()
