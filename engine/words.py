"""The word tables of query understanding: words a person types around an address that name
no part of it. The compiled core (engine/_core.pyx) reads them once at import, into C arrays
(`_init_regions`); the Python twin reads them here.
"""

# words that may end a pasted address line without naming any address: the country, a
# province or its abbreviation ("hengelo ov"); dropped only when the query finds nothing. The
# country may also open it ("nederland, groningen, ...")
COUNTRY_WORDS = ("nederland", "netherlands", "the", "holland", "nl", "nld",
                 # ... in the languages of the people who write to Dutch addresses most
                 "niederlande", "pays", "bas", "netherland", "nederlanden", "olanda", "holanda",
                 "paesi", "bassi", "paises", "bajos", "niderlandy", "holandia")
REGION_WORDS = COUNTRY_WORDS + ("noord", "zuid", "brabant", "gelderland", "overijssel", "friesland", "fryslan",
                "drenthe", "flevoland", "zeeland", "limburg", "ov", "gld", "gl", "nh", "zh", "nb", "lb", "li",
                "zl", "ze", "fl", "fr", "dr", "gn", "gr", "ut",
                # a part of town after the place ("amsterdam centrum", "utrecht oost")
                "centrum", "oost", "west", "zuidoost", "zuidwest", "noordoost", "noordwest",
                "binnenstad", "stad")
# the province each of them names (two words name Noord- and Zuid-Holland: _typed_province)
REGION_PROVINCE = {"friesland": "Friesland", "fryslan": "Friesland", "fr": "Friesland",
                   "groningen": "Groningen", "gn": "Groningen", "gr": "Groningen",
                   "drenthe": "Drenthe", "dr": "Drenthe", "overijssel": "Overijssel", "ov": "Overijssel",
                   "flevoland": "Flevoland", "fl": "Flevoland", "gelderland": "Gelderland",
                   "gld": "Gelderland", "gl": "Gelderland", "utrecht": "Utrecht", "ut": "Utrecht",
                   "nh": "Noord-Holland", "zh": "Zuid-Holland", "zeeland": "Zeeland", "zl": "Zeeland",
                   "ze": "Zeeland", "brabant": "Noord-Brabant", "nb": "Noord-Brabant",
                   "limburg": "Limburg", "lb": "Limburg", "li": "Limburg"}
# words that only say a house number follows ("kerkstraat nr 12"): between another word and the
# number read as that at once (_parse); elsewhere dropped only when the query finds nothing
# ("Nummer" is also a street)
NUMBER_WORDS = ("nr", "no", "nummer", "huisnummer", "hnr", "number", "num")
# words that say which floor or part of a house, typed after its number ("damrak 1 3 hoog",
# "1 huis", "2 boven", "7 III": the third floor, a whole word of the register as in Willem III
# straat, so never left out as a word that matches nothing; "II" and "IV" are short enough to
# be read as an addition): left out with the letters and additions the house may not have
FLOOR_WORDS = ("hoog", "huis", "hs", "boven", "beneden", "bg", "bis", "etage", "verdieping",
               "verd", "vd", "bel", "sous", "souterrain", "zolder", "achter", "voor", "links",
               "rechts", "app", "appartement", "kamer", "unit", "achterhuis", "voorhuis",
               "bovenhuis", "benedenhuis", "bovenwoning", "benedenwoning", "iii", "floor", "ground")
# words of a form that label what follows ("adres: ...", "gemeente amsterdam", "postcode
# 1017 gl"); dropped, wherever they stand, only when the query finds nothing
LABEL_WORDS = ("adres", "address", "postcode", "pc", "gemeente", "gem", "woonplaats", "plaats",
               "straatnaam", "toevoeging", "toev")
# how a street name ends ("...straat", "...weg"; folded, "dijk" is "dyk"): a typed word of that
# form that matches nothing is the street the person means, and a retry never leaves it out
# (issue 14: "Teststraat 999, Amsterdam" is no Prinsengracht 999)
STREET_SUFFIXES = ("straat", "str", "weg", "laan", "plein", "gracht", "kade", "singel", "dyk",
                   "pad", "steeg", "hof", "dreef", "markt", "baan", "wal", "plantsoen",
                   "boulevard", "allee", "kanaal", "wetering", "vaart", "haven", "park", "veld",
                   "straatje", "pleintje", "hoven", "erf", "oord", "dam", "lei", "sloot", "burg")
# the punctuation that says how a pasted address is laid out: a note in brackets ("(achterom)",
# "[2e bel]"), and the breaks between its lines or fields. The query folds them to "(", ")" and
# ","; a query that finds nothing as typed is read again without its notes, then also without
# the lines that are no part of the address (ADDRESSEE_WORDS)
NOTE_OPEN = "([{"
NOTE_CLOSE = ")]}"
LINE_BREAKS = ",;|\n\r"
# what opens a line naming whom a letter is for ("t.a.v. J. Jansen", "Fam. Bakker", "attn. P.
# Visser", "c/o"), folded: such a line, when it holds no number, is no part of the address; so is
# a line of words before the street's line when the place's line follows ("A. de Boer, Van
# Speykstraat 8c, Groningen")
ADDRESSEE_WORDS = ("t a v", "tav", "ter attentie van", "attn", "att", "attention", "fao", "c o",
                   "p a", "fam", "familie", "dhr", "de heer", "mevr", "mevrouw", "mw", "hr",
                   "mr", "mrs", "ms")
# the words of two letters that glued names hold ("bergenopzoom", "dehoven", "capelleaandenijssel"
# has none): a glued word is cut into pieces of 3+ letters and these only, since the register's
# other two-letter words are initials and abbreviations ("hg", "tj", "ns") that cut a slipped word
# just as well ("enhgelandlaan" is no "en hg elandlaan")
GLUE_PARTICLES = ("de", "op", "en", "in", "te", "la", "le", "du", "da", "di", "of", "st")
# One sound that Dutch spelling writes two ways (folded: `ij` is `y`): `ei` and `ij`, `au` and
# `ou`. Either written for the other is one slip of the word (`reinlaan` for Rijnlaan, also
# beside a slip of a key: _typo.pxi `_sound_variant`), and the two read as one in the sound key
# (SOUND_RULES)
SOUND_SPELLINGS = (("ei", "y"), ("au", "ou"))
# Spellings that sound the same to a Dutch speaker (issue 40): a typed word and a registered
# word with the same sound key are sound-alikes (`agterweg`: Achterweg, `kristiaan`:
# Christiaan, `ofstraat`: Hofstraat, `dorpstraat`: Dorpsstraat), a kind of match of its own
# (params.SOUND_PEN), looked for before a slip of a key (_typo.pxi `_sound_key`; the index
# holds every token's key). The key of a folded word: at each position the first rule whose
# letters stand there (and, when the third field is given, are followed by one of its
# letters; "$": end the word; "^": start it) is written as its second field; then every run
# of one consonant is written once (`mollenweg`, `dorpsstraat`, `ck`).
SOUND_RULES: tuple[tuple[str, str, str], ...] = (
    ("sch", "s", ""),      # Haagsche / Haagse, Bosch / Bos
    ("chr", "kr", "^"),    # Christiaan / Kristiaan; inside a word ch is g (Raaigras / Raaichras)
    ("ch", "g", ""),       # Achterweg / Agterweg
    ("ph", "f", ""),       # Philips / Filips
    ("c", "s", "eiy"),     # Ceintuur / Seintuur, Vincent / Vinsent
    ("c", "k", ""),        # Cornelis / Kornelis, Dijck / Dijk
    ("x", "ks", ""),       # Alexander / Aleksander
    ("qu", "kw", ""),      # Quakel / Kwakel
    # an h left out or added where it is not heard: before a vowel or at the end (Hofstraat /
    # Ofstraat, Thorbecke / Torbecke, Gogh / Gog); before a consonant it is no sound
    # ("hreestraat" is a slip from Herestraat, not Reestraat)
    ("h", "", "aeiouy"),
    ("h", "", "$"),
    ("ie", "i", ""),       # Piet / Pit
    *((a, b, "") for a, b in SOUND_SPELLINGS),
    ("ey", "y", ""),       # Leyden / Leiden
    ("ae", "aa", ""),      # Maes / Maas
    ("uy", "ui", ""),      # Huyssen / Huissen
    # a d at the end of a word, or of a part of one before another consonant, is said t
    # (Hofstad / Hofstat, Stadt, Raadhuisplein / Raathuisplein); not before an r (Hendrik)
    ("d", "t", "bcfghjklmnpqstvwxz"),
    ("d", "t", "$"),
)
SOUND_VOWELS = "aeiouy"    # ... the letters that are no consonant (y: ij)
# Ordinals, each written three ways that all mean the same (`2e`, `2de`, `tweede`): unlike an
# abbreviation with two expansions (`pr`: prins, prinses), every spelling answers to every other
# (engine/vocab.py). After a house number, each says a floor (`_retry.pxi _ordinal`)
ORDINALS: tuple[tuple[str, ...], ...] = (
    ("1e", "1ste", "eerste"),
    ("2e", "2de", "tweede"),
    ("3e", "3de", "derde"),
    ("4e", "4de", "vierde"),
    ("5e", "5de", "vyfde"),
    ("6e", "6de", "zesde"),
    ("7e", "7de", "zevende"),
    ("8e", "8ste", "achtste"),
    ("9e", "9de", "negende"),
    ("10e", "10de", "tiende"),
)
