"""Ranking weights, shared by the compiled core and its Python twin, and the index format.

Scores are "higher is better": a candidate's score is its group prior (in [0, PRIOR_MAX])
minus the penalties below. A prefix match costs more than the whole prior, so an address that
matches every typed part completely always beats one that matches only by prefix (contract
ranking rule 1); the prior orders addresses that match equally well.
"""

PRIOR_MAX = 0.9          # the prior of a group lies in [0, PRIOR_MAX] (engine/ingest/build.py)
PREFIX_PEN = 1.0         # a word that is only the start of a token
PREFIX_FRAC = 0.5        # ... plus this times the share of the token not yet typed
TYPO_PEN = 1.6           # a word one edit away from a token
TYPO_EDIT = 0.6          # ... plus this per further edit
SOUND_PEN = 1.55         # a word that sounds like a token (words.SOUND_RULES: "agterweg" for
                         # Achterweg): more than a prefix (1.0 + up to 0.5), so that the words as
                         # typed, whole or being typed, always come first; less than a slip of a
                         # key, which it is looked for before (_retry.pxi PASS_SOUND)
MUNI_PEN = 0.5           # a word matched the municipality rather than the locality
ALIAS_PEN = 0.05         # a word matched an alias of a place (everyday name, glued form)
STREET_ALIAS_PEN = 0.2   # ... of a street word (abbreviation, glued form): the register's own
                         # spelling as typed comes first ("pr clauslaan 7": Pr Clauslaan before
                         # the Prins Clauslaan of bigger places); an everyday place name is what
                         # people call the place, and costs only ALIAS_PEN
ALIAS_WHOLE_LEN = 3      # an alias this short (st, nw, vd) answers only when typed whole: its
                         # first letters already start the word it stands for
UNMATCHED_PEN = 0.6      # per registered street word the query did not mention
ORDER_PLACE_PEN = 0.7    # ... and, with words after the number too, a word before it matched the place
ORDER_PEN = 0.7          # a word typed after the house number (with words before it) matched
                         # the street: people type the street, the number, then the place
EXTRA_SUFFIX_PEN = 0.5   # the address has a letter/addition the query did not type
PART_PREFIX_PEN = 0.3    # the typed addition is only the start of the address's addition
NUM_PREFIX_PEN = 1.0     # the typed number is only the start of the house number
NUM_PREFIX_DIGIT = 0.1   # ... plus this per extra digit beyond the first
UNKNOWN_WORD_PEN = 2.5   # postcode mode: a typed word that names nothing of the address
NO_LOCALITY_PRIOR = 1.0  # weight of the group prior when no place was typed
LOCALITY_PRIOR = 0.3     # ... and when a place was typed
IJ_VARIANT_PEN = 0.1     # a word ending in "i" read as the start of "ij"
ROUND_BASE = 0.25        # spreading: each further address of the same street/postcode costs
ROUND_SHORT = 1.5        # ... ROUND_BASE + ROUND_SHORT / limit (short lists spread harder)
PC_PRIOR = 0.1           # weight of the group prior in postcode mode
LETTER_AS_ADDITION_PEN = 0.05  # a letter glued to the number ("93h") matched an addition H
HS_ADDITION_PEN = 0.2    # "hs" or "huis" left out said the addition H ("damrak 11 hs"): a house
                         # without any addition (the whole house) comes next

# with a focus point (lat/lon) the prior term of a group is FOCUS_NEAR / (1 + km / FOCUS_KM)
# + FOCUS_SHARE * prior, in place of the weighted prior: FOCUS_NEAR at the point itself, half
# of that FOCUS_KM away
FOCUS_NEAR = 0.9
FOCUS_KM = 5.0
FOCUS_SHARE = 0.1
FOCUS_EPS = 1e-5         # the focus prior is computed in double and stored as float: the scan's
                         # bound allows for the rounding
KM_PER_DEGREE = 111.2    # distances on the flat earth of a small country
MICRODEGREE = 1e-6       # coordinates are stored as int32 microdegrees
NEAR_MARGIN = 0.05       # reverse: a point farther than this many degrees (about 5 km) outside
                         # the box of the index's addresses (the country's) answers nothing

# the index directory's format (manifest.json `format_version`): engine/ingest/build.py writes it,
# AddressIndex.open refuses any other
FORMAT_VERSION = 19       # 19: sound keys with ch as g inside a word (chr as kr only at the start)
                          # 18: the spatial index (rv_*) and the groups of each area (ar_group)
                          # 17: every token's sound key, sorted (snd_*); former municipality
                          #     names as aliases of the places they became
                          # 16: the size and checksum of every file in the manifest ("files")
                          # 15: a token's length in its group record (TokRec.tlen)
                          # 13: each group's range of postcode digits beside its postings (*_pcr)
                          # 12: the first letters of each group's letters and additions (*_sfx)
                          # 11: each posting's group's house number range (v_post_num, sp_num)
                          # 10: what the slips of each token typed whole are (slip_*)
                          # 9: the typo index is one open-addressing table (del_slot)
                          # 8: g_tok, g_tok_kind, g_tok_cover, g_sig no longer written
