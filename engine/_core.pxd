# Declarations of the compiled core (engine/_core.pyx): the fixed sizes of a search, the
# structures it works in, and the Index class. The C types of `Data` match the numpy dtypes of
# the arrays on disk (ARRAYS in _core.pyx), which `Index.__init__` checks once on open.

from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t

from engine._register cimport ADDITION_MAX, NUMBER_MAX


cdef enum:
    FOLD_MAX = 0x2500
    FOLD_W = 4
    MAX_Q = 128          # code points accepted in a query
    ADDITION_TYPED = ADDITION_MAX  # folded letters and digits a hyphen glues to a number
                         # ("12-GA07"), fewer of them letters ("12-BSB"; "1672-Laan" stays apart)
    QBUF = 128 * 4 + 8   # folded bytes


cdef enum:
    MAXT = 40          # tokens in a query
    MAXR = 160         # ranges per word (prefix, variant, typo tokens: a 10-letter word ending
                       # in "straat" is within two slips of up to ~140 tokens)
    TWO_SLIP_LEN = 9   # a word of this many letters may hold two slips ...
    TWO_SLIP_TYPED = 7  # ... and may be typed this short with them (two letters left out)
    TWO_SLIP_WORDS = 3  # words of a query looked up afresh within two slips, at most
    MEMO_MAX = 16      # words whose slips a query remembers (Search.memo) ...
    MEMO_POOL = 4096   # ... and their tokens, in all
    MAXSLIP = 96       # tokens a word still being typed starts with one slip undone
    MAXP = 3           # typed letter/addition parts
    MAXI = 8           # interpretations
    POOL = 64          # best groups kept
    MAXLIMIT = 10
    DEFAULT_LIMIT = 5    # the contract's limit when none is given
    SCAN_BUDGET = 20000  # postings scanned for the rarest word when other words filter
    SCAN_ALONE = 2000    # ... and when it is the only word (build.py SHORT_PREFIX_MIN)
    EXACT_CAP = 128      # groups of the complete word taken before a short-prefix list
    DEL_TOK_BITS = 22    # the typo table's entry: the hash's top 42 bits, then token id + 1
    DEL_TAIL = 4096      # slots past the last home slot, so that a run never wraps around
    DEL_BUCKET = 8       # slots of a cache line: every home slot starts one
    UNFOLD_MAX = 96
    MAX_CONSIDER = 2000  # groups scored per interpretation at most
    WORK_PER_GROUP = 16  # a group scored costs this many postings walked (_retry.pxi _spent),
    FREE_WORDS = 5       # ... both more in a query of more words than this (_scan.pxi
    EXTRA_WORD_WORK = 2  # `_scan_text`): a group this many times more per word beyond them
    SLIP_PER_PROBE = 5   # the slips looked up (Search.slip_work, _typo.pxi _slips_spent):
    SLIP_PER_CHECK = 30  # a deletion hash probed, a token measured against the word;
    SLIP_SCAN_TOKENS = 4  # a slip of a word being typed: an edit looked up (SLIP_PER_PROBE), this
                          # many tokens walked for all of them at once (_typo.pxi `_word_slips`)
    TOKEN_CAP_MIN = 8
    PC_PREFIX_CAP = 4000
    DROP_MAX_TOKENS = 12  # a query that finds nothing is tried again with its words spaced
                         # otherwise (_respace_retry), then without some words (_drop_retry),
                         # when it has at most this many tokens
    RESPACE_TRIES = 6    # respaced readings tried at most ...
    RESPACE_PROBES = 1000  # ... and prefix searches made to find them
    MAXCUT = 4           # spaces put into one typed word
    SEG_MAX = 48         # glued words cut into registered words (_segment) at most this long
    PREFIX_SLIP = 9      # TypoSet mark of a token that the word, one slip undone, starts
    PREFIX_SLIP_MAX = 32  # ... kept only when the undone word starts at most this many tokens
    PREFIX_SLIP_LEN = 30  # ... looked for in words of at most this many letters
    SLIP_SCAN_MAX = 256  # ... by one walk over the tokens that start as the word, when so few
    PFX_BITS = 20        # the filter of the tokens' starts: 2^20 bits (128 KB) ...
    PFX_MIN = 4          # ... a bit per start of this many bytes ...
    PFX_MAX = 8          # ... to this many
    SAME_NUMBER_CAP = 4096  # addresses of one house number looked at in one run (a
                            # marina or holiday park has hundreds: 100K-K029)
    SOUND_MIN = 3        # a sound-alike is looked for in a word of this many letters (typed) ...
    SOUND_RUNS_MAX = 128   # ... and of a word still being typed kept only when the tokens whose
                           # keys start with its key, that it does not start as typed, make at
                           # most this many runs of neighbouring tokens ...
    SOUND_WALK_MAX = 2048  # ... and at most this many keys start so and go on as it may
                           # (_typo.pxi `_sound_runs`)
    MAX_SOUND_RULES = 64   # words.SOUND_RULES, as C arrays (_core.pyx `_init_sounds`)
    MAX_SPELLINGS = 8      # words.SOUND_SPELLINGS, both ways


cdef enum:
    # the word tables of engine/words.py, as C arrays (_core.pyx `_init_regions`)
    MAX_REGION_WORDS = 64
    MAX_FLOOR_WORDS = 48
    MAX_LIST_WORDS = 16   # NUMBER_WORDS, LABEL_WORDS


cdef enum:
    # the kind of a group token (engine/vocab.py reads these through _core.BITS)
    K_STREET = 1
    K_LOCALITY = 2
    K_MUNICIPALITY = 3
    K_ALIAS = 0x10       # a flag on top of a kind
    K_KIND = 0x0F        # the kind without the flag


cdef enum:
    # the meta byte beside each posting (build.py `_posting_meta` writes it through _core.BITS;
    # the scan's bound `_out_of_reach` reads it)
    META_UNCOVERED = 0x0F    # registered street words the token leaves uncovered (at most 15)
    META_GLUED = 0x10        # a token of the group covers two of them at once (`hc`, `thofje`)
    META_LOCALITY = 0x20     # the token is a locality ...
    META_ALIAS = 0x40        # ... an alias ...
    META_MUNICIPALITY = 0x80  # ... a municipality
    META_PLACE = 0xA0        # a locality or a municipality
    NUM_LOW_BITS = 15        # v_post_num: the lowest house number in the low bits (capped) ...
    NUM_HIGH_MAX = 131071    # ... the highest above them (capped here: 17 bits)
    PC_DIGIT_BITS = 14       # v_post_pcr: the highest four postcode digits in the low bits
    TLEN_LONG = 255          # TokRec.tlen of a token this long or longer (its length is in v_off)


cdef struct TokRec:
    # one group token as stored in g_tokrec (two little-endian uint64 words per token):
    # token id in the low 32 bits of the first word, its kind in the next byte, its length in
    # bytes in the next (TLEN_LONG when it is that long or longer); cover second
    int32_t tok
    uint8_t kind
    uint8_t tlen
    uint8_t pad[2]
    uint64_t cover


cdef struct GroupNames:
    # the names a hit of a group writes (_json.pxi `_put_hit`), in one record: where each of
    # its street, locality, municipality and province starts in s_blob, and its length
    uint32_t off[4]
    uint32_t len[4]


cdef struct Data:
    int32_t block2[1297]    # first token id of each two-character start (0-9a-z), then n_tok
    int32_t* block3         # the same for each three-character start (46,656 + 1), or NULL
    uint64_t* tok_key       # each token's first 8 bytes, big-endian, zero-padded (_tok_keys)
    uint64_t* pfx_bits      # a bit per start of PFX_MIN to PFX_MAX bytes of a token (_pfx_filter), or NULL
    uint64_t* pc_rank       # where each four digits and first letter start in pc_code, and the
                            # second letters registered (_score.pxi `_pc_ranks`)
    GroupNames* g_names     # each group's names, where they are in s_blob (_group_names)
    const int32_t* a_group
    const int32_t* a_number
    const uint8_t* a_letter
    const int32_t* a_addition
    const int32_t* a_postcode
    const int32_t* a_lat
    const int32_t* a_lon
    const int32_t* g_street
    const int32_t* g_locality
    const int32_t* g_municipality
    const int32_t* g_province
    const int32_t* g_start
    const float* g_prior
    const int32_t* g_lat
    const int32_t* g_lon
    const int32_t* g_tok_start
    const TokRec* g_rec
    const uint8_t* v_blob
    const int64_t* v_off
    const int32_t* v_post_start
    const int32_t* v_post
    const uint64_t* del_slot      # the typo table (_text.pxi `deletion_table`)
    uint64_t n_home               # ... its home slots (the rest is the tail)
    const int32_t* slip_start     # per token and maxd (2 t + maxd - 1): what the look-up of the
    const int32_t* slip_tok       # token typed whole finds (_typo.pxi `slip_lists`) ...
    const uint8_t* slip_dist
    const int32_t* slip_work      # ... and the work it counts; -1: nothing stored
    const uint8_t* snd_blob       # every token's sound key (_typo.pxi `_sound_key`), sorted ...
    const int64_t* snd_off
    const int32_t* snd_tok        # ... and the token of each
    int32_t* snd_first2           # where the keys of each first two letters start among them
                                  # (_typo.pxi `_snd_firsts`, made at open)
    const int32_t* pc_code
    const int32_t* pc_start
    const int32_t* pc_addr
    const uint8_t* add_blob
    const int64_t* add_off
    const uint8_t* s_blob
    const int64_t* s_off
    const uint8_t* sp_blob
    const int64_t* sp_off
    const int32_t* sp_start
    const int32_t* sp_group
    int32_t n_sp
    const uint64_t* v_post_sig
    const float* v_post_prior
    const uint64_t* sp_sig
    const float* sp_prior
    const uint8_t* sp_toklen
    const uint8_t* v_post_meta    # per posting: what the group costs at least through this token
    const uint64_t* v_post_xsig   # per posting: the group's whole-token signature
    const uint8_t* sp_meta
    const uint64_t* sp_xsig
    const uint32_t* v_post_first  # per posting: the first letters of the group's tokens
    const uint32_t* sp_first
    const uint32_t* v_post_num    # per posting: the group's highest house number (at least) << 15
    const uint32_t* sp_num        # | its lowest (at most): build.py `_number_ranges`
    const uint32_t* v_post_sfx    # per posting: the first letters of its addresses' letters and
    const uint32_t* sp_sfx        # additions (bit as _first_bit): build.py `_suffix_starts`
    const uint32_t* v_post_pcr    # per posting: the lowest four postcode digits of its group's
    const uint32_t* sp_pcr        # addresses << 14 | the highest: build.py `_postcode_ranges`
    const uint8_t* sa_blob        # one-word queries with stored answers, sorted
    const int64_t* sa_off
    const int32_t* sa_start       # answers of query k at limit L: sa_addr[sa_start[k*10+L-1]:..]
    const int32_t* sa_addr
    int32_t n_sa
    const int32_t* ar_group       # groups by municipality, then by locality, best prior first
    const int32_t* rv_addr        # the spatial index (_near.pxi): address ids in tree order,
    const int32_t* rv_lat         # ... their points beside them,
    const int32_t* rv_lon
    const int32_t* rv_box         # ... each node's box (lat lo, hi, lon lo, hi): 2^(depth+1)-1
    int rv_depth                  # the tree's depth (its leaves are its last 2^depth nodes)
    const uint8_t* addl_blob      # every registered addition, lower case, sorted, distinct
    const int64_t* addl_off
    int32_t n_addl
    int32_t n_addr
    int32_t n_groups
    int32_t n_tok
    int32_t n_pc
    int32_t region_prov[MAX_REGION_WORDS]  # the province (string id) each REGION_WORDS word names, or -1
    int32_t prov_nh               # ... Noord-Holland and Zuid-Holland, which two words name
    int32_t prov_zh


cdef enum:
    # a restriction of the answers to an area (_area.pxi): names of one kind, postcode
    # prefixes, and lists of an area's groups walked when a short word's scan is capped
    AREA_NAMES = 32
    AREA_WALKS = 128
    PC_AREAS = 10000    # postcodes' four digits: 0..9999 (_pc_index) ...
    PC_RANK_SLOTS = PC_AREAS * 26  # ... and a first letter (_score.pxi `_pc_ranks`)
    SND_FIRST2 = 1 << 14  # the slots of the sound keys' first two bytes (7 bits each, _snd_firsts)
    # the spatial index (_near.pxi): a k-d tree's leaves hold at most this many addresses ...
    NEAR_LEAF = 32
    NEAR_DEPTH_MAX = 30  # ... in a tree at most this deep (a stack of that many nodes a level)


cdef struct Area:
    # what a restricted search keeps (`on`): every address whose group's municipality,
    # locality and province are among those named (each list when not empty), whose postcode
    # lies in one of the ranges (when any), and whose point lies in the box (when has_box)
    int on
    int n_mun
    int n_loc
    int n_prov
    int n_pc
    int32_t mun[AREA_NAMES]
    int32_t loc[AREA_NAMES]
    int32_t prov[AREA_NAMES]
    int32_t pc_lo[AREA_NAMES]
    int32_t pc_hi[AREA_NAMES]
    int has_box
    int32_t lat_lo
    int32_t lat_hi
    int32_t lon_lo
    int32_t lon_hi
    int nwalk            # the area's groups as runs of ar_group (best prior first), walked
    int32_t walk_lo[AREA_WALKS]  # when a short word's scan was capped (_scan.pxi
    int32_t walk_hi[AREA_WALKS]  # `_walk_area`); 0 runs: the area has none to walk


cdef struct Src:
    # where a byte of the folded query came from: the code points [a, b) of the query as given
    # (the two of "ij" folded to one "y"); a space put in, or a byte no code point made, -1
    int16_t a
    int16_t b


cdef struct Tok:
    int start
    int len
    int digits       # leading digits
    int value        # value of the leading digits (capped at 10**6)


cdef struct Word:
    int nr
    int32_t lo[MAXR]
    int32_t hi[MAXR]
    float base[MAXR]    # penalty of the range before the prefix share (0 prefix, TYPO for typos)
    uint8_t typo[MAXR]  # 0: a prefix range; a typo range: TYPO_WHOLE, TYPO_START, TYPO_RUN
    int32_t exact       # token id equal to the word, or -1
    int64_t cost        # postings under all ranges
    int typo_done       # the furthest look for slips so far (1, then 2: the last)
    int first_typo      # ranges [first_typo, nr) are typo ranges, sorted by token id, apart:
                        # single tokens, or runs of sound-alikes (TYPO_RUN)
    int slips           # ... and they are tokens the word starts with one slip undone
    int sound_done      # its sound-alikes were looked up (`_add_sounds`): they stay among its
                        # typo ranges when its slips are looked up
    uint64_t tbits      # the whole-token signature bits (_xsig_bit) of its typo tokens, and
    uint64_t tsig       # ... their start signature bits (_sig_bit), when
    int tbits_nr        # ... tbits_nr is nr (_scan.pxi `_typo_bits`; -1: not yet)


cdef enum:
    # what a word's typo range holds (Word.typo; engine.explain tells the two apart)
    TYPO_WHOLE = 1       # a token within the word's slips
    TYPO_START = 2       # a token the word starts with a slip undone (a word still being typed)
    TYPO_RUN = 3         # neighbouring tokens whose sound the word starts (a word still being
                         # typed): a prefix's penalty on top of the range's (`_typo_pen`)


cdef struct Interp:
    int number          # house number, -1 when none was typed ...
    int num_tok         # ... and its token (its leading digits), -1 then
    int place_after     # words after this token are read as the place (the number's token,
                        # when words come before it; MAXT otherwise)
    int street_until    # words before this token are read as the street (the number's token,
                        # when words come on both sides of it; -1 otherwise)
    int nparts
    int part_tok[MAXP]  # token of each typed letter/addition part
    int part_off[MAXP]  # offset in that token where the part starts (glued suffix of 12a)
    int nwords
    int words[MAXT]     # token indices that must match the street/locality
    int pc_lo           # postcode code range, -1 when none
    int pc_hi
    int area_lo         # text mode: only addresses with a postcode in this range, -1 when any
    int area_hi         # (a postcode being typed after the number: "kerkstraat 12 1017 g")
    uint64_t need       # signature bits every matching group must have


cdef struct PoolItem:
    float score
    float text_pen      # what the words cost on this group, under interpretation `interp`
    int32_t group
    int interp
    int loc             # a word matched its place


cdef struct Cand:
    float score
    int32_t addr
    int32_t key         # spread key: group, or postcode in postcode mode
    int interp


cdef struct TypoMemo:
    char text[UNFOLD_MAX]  # the folded word ...
    int n
    int maxd            # ... looked up within this many slips ...
    int start           # ... found memo_tid[start:start + count]
    int count


cdef struct SoundMemo:
    char text[UNFOLD_MAX]  # the folded word ...
    int n
    int a               # ... the entries of the tokens sorted by sound key whose key is its
    int k               # (_typo.pxi `_sound_entries`: the first, and how many or MAXR + 1) ...
    int m               # ... the key of it still being typed, of m letters, and the letters
    uint32_t follow     # it may go on with (`_sound_key`) ...
    int nspan           # ... and the spans of the entries of the keys that start so and go
    int32_t lo[26]      # on as it may (`_key_spans`; none past SOUND_WALK_MAX keys)
    int32_t hi[26]


cdef enum:
    # the trace of a search (Index.trace, _retry.pxi `_trace_reading`): a record per reading,
    # none when off
    TRACE_MAX = 4096     # readings one trace keeps; further ones are counted (trace_lost)
    # the passes of one reading (_retry.pxi `_passes`), each run when the ones before it found
    # nothing: as typed, then the sound-alikes, then ever more slips of a key
    PASS_TYPED = 0
    PASS_SOUND = 1       # sound-alikes of every word (words.SOUND_RULES)
    PASS_SLIP = 2        # one slip in the words that match nothing
    PASS_SLIP_ALL = 3    # one slip in every word
    PASS_TWO = 4         # two slips in long words
    NPASS = 5            # passes of one reading at most (Search.max_pass: all of them, ...
    RETRY_PASSES = 3     # ... or up to one slip in the words that match nothing, in a retry)
    # the work budgets that ran out by the end of a reading (TraceRec.spent, Search.spent)
    SPENT_SCAN = 1       # a list of postings was cut to the scan budget (the twin cuts it too)
    SPENT_CONSIDER = 2   # an interpretation scored MAX_CONSIDER groups, no more
    SPENT_WORK = 4       # the query's work budget (_retry.pxi _spent)
    SPENT_SLIPS = 8      # the query's slip look-up budget (_typo.pxi _slips_spent)
    SPENT_TYPO = 16      # a word's typo tokens were cut to MAXR ranges or 512 found (the
                         # twin cuts them too)
    # the step that made a reading (Search.stage; _core.pyx STAGES names them)
    ST_TYPED = 0         # the query as typed
    ST_RESPACED = 1      # its words spaced otherwise (_respace_retry)
    ST_DROPPED = 2       # without some words (_drop_retry)
    ST_PROVINCE = 3      # ... the province left out still says where
    ST_STRIPPED = 4      # ... without the letters/additions/floor typed with a number
    ST_PC_SLIP = 5       # a postcode one slip from the typed one (_postcode_slips)
    ST_PC_AWAY = 6       # without the postcode, near its digits (_postcode_retry)
    ST_NEAR = 7          # the nearest house numbers (near_number)
    ST_DEFERRED = 8      # the slips that waited (defer_slips)
    ST_NOTES = 9         # without the notes in brackets (_without_noise tier 1)
    ST_ADDRESSEE = 10    # ... and without the addressee lines (tier 2)
    ST_GLUED = 11        # words typed without spaces cut into registered words (_glue_reading)


cdef struct TraceRec:
    # one reading as the search scored it (copied at the end of `_passes`)
    char q[QBUF]         # the query buffer; tokens point into it (a postcode variant lies
                         # beyond qlen: _postcode_slips)
    int ntok
    Tok tok[MAXT]
    int ninterp
    Interp interp[MAXI]
    int stage           # ST_*
    int mode            # the `_parse` mode
    int has_focus
    double focus_lat
    double focus_lon
    int pc_strict
    int near_number
    int huis
    int32_t province
    int max_pass        # passes allowed (after the postcode-being-typed bound)
    int npass           # passes entered
    uint64_t looked[NPASS]  # per pass: the tokens whose slips were looked up (bit = token)
    int scored          # bit per pass: the interpretations were scored
    int found           # candidates at the end
    int deferred        # the slips were deferred (a break before pass 2)
    int spent           # SPENT_* bits
    int64_t ns          # the time since the reading before it was kept (or the search began)
    int64_t work        # the query's work and slip work counted by its end
    int64_t slip_work
    int64_t walked      # ... the postings (and short-prefix entries) whose bounds its scans
    int64_t groups      # checked, and the groups they scored, by its end


cdef struct Search:
    char q[QBUF]
    Src qsrc[QBUF]      # where each byte of q came from (every step that respells q keeps it)
    int qlen
    int ntok
    Tok tok[MAXT]
    Word word[MAXT]
    int ninterp
    Interp interp[MAXI]
    int npool
    PoolItem pool[POOL]
    int ncand
    Cand cand[POOL * MAXLIMIT + 64]
    int limit
    int has_focus
    double focus_lat
    double focus_lon
    double cos_lat
    int typo_mode
    float floor         # score a group must beat to enter the full pool
    int pool_cap        # groups kept: only the best `limit` can reach the answer
    int considered      # groups scored for the current interpretation
    int64_t work        # postings walked + WORK_PER_GROUP per group scored, for the whole query,
    int post_work       # ... a posting counting this much and a group this much, by the
    int group_work      # words of the interpretation scanned (_scan.pxi `_scan_text`)
    int64_t walked      # postings (and short-prefix entries) whose bounds were checked, and
    int64_t groups      # groups scored, for the whole query (the trace's)
    float min_pen       # least penalty of the words other than the one being scanned
    float tok_pen       # penalty of the scanned word on the token being scanned
    int others          # words of the interpretation besides the scanned one
    int nx              # ... of them, those that are a whole token somewhere: their
    int xbit[MAXT]      # ... whole-token signature bits
    uint32_t need1      # first-letter bits the one-letter words among them need
    int nslipped        # ... of them, those that match only through typo tokens (slips mode,
    uint64_t slipped[MAXT]  # no token starts them): a group holds one of each one's tokens
    uint32_t need_first  # first-letter bits all of them need (_scan.pxi `_may_fit`)
    int cap_xbit        # a capped walk of the scanned word's tokens, or its `...y` variant's
                        # list: the whole-token bit of the word (-1: no token is the whole
                        # word; -2: not such a walk)
    int sfx_bit         # the first typed letter/addition part starts with this (_first_bit;
                        # -1: no such part, or no number to fit it to) ...
    int sfx_word        # ... or may be a word of the group starting so (-1: not: glued to
                        # the number); _scan.pxi `_may_fit`
    uint64_t sfx_sig    # ... and then with the signature bit of its first two letters (0: any)
    int slip_n[MAXT]    # per token: the tokens its word starts with one slip undone
    int32_t slip_tid[MAXT][MAXSLIP]  # (the first MAXSLIP of them; -1: not looked for yet)
    int split_pc        # the postcode was read from two tokens ("5202 de"), or the words
                        # were read within a postcode being typed (area_lo)
    int pc_tok          # the last `_parse`: the token of the postcode (its digits), -1 when
    int pc_tok2         # none, and its letters typed apart (-1: none) ...
    int area_tok        # ... and of the postcode being typed, with its letter typed apart
    int area_tok2
    int area            # ... the latter: the four digits typed, 0 when not
    int pc_strict       # postcode mode: every typed word must name the street or place (1),
                        # and the house number is the one typed, not one it starts (2)
    int max_pass        # passes run: NPASS (as typed, sound-alikes, then ever more slips),
                        # RETRY_PASSES in a retry, 1 (as typed) in a respaced reading
    int defer_slips     # when every word is whole as typed and a number was typed, slips in
                        # those words wait until the retries and the nearest numbers found
                        # nothing ...
    int deferred        # ... and they did wait
    Area within         # the area the answers are kept inside (within.on), set by the caller
    int capped          # the scan of the current interpretation was cut short (a short
                        # prefix's list, or capped token walks): a restricted one walks the area
    int32_t province    # a province typed at the end, left out as a word: only its streets
                        # (string id), -1 when none
    int left_out        # the answer is of the query without its notes or addressee lines
    int near_glue       # two typed words that glued make a registered word, whose respaced
                        # reading found nothing (the first; -1: none): its nearest numbers
                        # are read after the typed words' (`_respace_retry`, `_search`)
    int near_number     # the last retry: no address has the typed house number, so the
                        # nearest numbers of each street (_near_numbers)
    int huis            # the house number's parts left out held "hs" or "huis" (`_drop_retry`):
                        # an addition H is what was typed (`_suffix_pen`)
    int two_slip_words  # words this query looked up afresh within two slips (TWO_SLIP_WORDS)
    int64_t slip_work   # slips looked up for the whole query: SLIP_PER_PROBE per deletion
                        # hash probed, SLIP_PER_CHECK per token measured (_typo_lookup)
    int nmemo           # the words whose slips this query looked up (_typo_ranges): a word
    TypoMemo memo[MEMO_MAX]  # repeated, or read again by a retry, is looked up once; their
    int memo_used       # tokens in memo_tid/memo_dist
    int32_t memo_tid[MEMO_POOL]
    uint8_t memo_dist[MEMO_POOL]
    int nslipmemo       # the words whose prefix slips this query found (_typo.pxi
    TypoMemo slipmemo[MEMO_MAX]  # `_word_slips`): each found once, for every token and
    int32_t slipmemo_tid[MEMO_MAX * MAXSLIP]  # reading of it (`start` counts in MAXSLIPs)
    int nsoundmemo      # the words whose sound-alikes this query looked up (_typo.pxi
    SoundMemo soundmemo[MEMO_MAX]  # `_sound_look`): each looked up once, for every pass and reading
    int spent           # SPENT_* bits of the current reading
    int stage           # ST_* of the readings being made, for the trace
    int parse_mode      # the mode of the last `_parse`, for the trace
    TraceRec* trace     # the readings, when tracing (Index.trace); NULL: off
    int ntrace
    int trace_cap
    int trace_lost      # readings beyond TRACE_MAX, not kept
    int64_t trace_t0    # when the last reading was kept (or the search began), ns


cdef class Index:
    cdef Data d
    cdef dict _arrays
    cdef int _busy          # searches reading the arrays now (changed only under the GIL)
    cdef bint _closed
    cdef object _names      # the area names (_area.pxi `_AreaNames`), made when first needed
    cdef Search* _prepare(self, q, limit, lat, lon, area) except NULL
    cdef list _run(self, q, limit, lat, lon, area, dict trace)
    cdef int _check_open(self) except -1
    cdef void _free_tables(self) noexcept
    # every reader of `d` outside the GIL runs between _enter() and _leave(): close() releases
    # the arrays only when none runs
    cdef int _enter(self) except -1
    cdef int _leave(self) except -1
