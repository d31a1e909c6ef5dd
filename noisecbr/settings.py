"""Every tuning constant of the cleaning path, by stage, each with how it was calibrated.

A constant that defines a feature (the features stage) changes the vectors: a change needs a
new :data:`noisecbr.features.VECTOR_SCHEMA` and a retrained model. The others change decisions
only; they were measured on the development sets by site-grouped folds unless their comment says
otherwise (docs/experiments.md has the runs). Structural constants (vocabularies, tag lists,
keyword lists, cache sizes) stay with the code that reads them.

The rules a cleaner may change are also fields of :class:`Settings`, a frozen value a
:class:`~noisecbr.cleaner.Cleaner` is given and runs its stages under (:func:`using`); the
stages read them through :func:`active`.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
import operator
from collections.abc import Iterator

# -- input: what is refused before parsing (noisecbr.prepare: limits, sniff, tidy) ------------

#: Pages larger than this are refused (10 MB: the largest of the 2 171 modernweb-dev and
#: dragnet pages is 5.3 MB; a bigger "page" is a data dump or an attack on memory, and at this
#: size a page of tiny paragraphs still cleans within 5 s and 1 GB). ``max_bytes=`` raises it.
DEFAULT_MAX_BYTES = 10_000_000
#: Pages with more elements than this are refused: each element costs about 3 kB while the page
#: is scored (its 221-feature vector and the network's layers), so this bounds memory to about
#: 800 MB (10 MB of 40-byte paragraphs, 244 000 elements, peak at 756 MB). The most in the 2 171
#: development pages is 15 793.
MAX_ELEMENTS = 250_000
#: Attributes of one element beyond this many are dropped before parsing (the most in the 2 171
#: development pages is 151; libxml2's cost grows with the square of the count).
MAX_ATTRIBUTES = 1_000
#: libxml2's HTML parser stops at 2 048 open elements (huge_tree does not lift it for HTML) and
#: drops the rest of the page. Deeper markup is flattened to this depth first: the tags beyond it
#: are removed, their text kept. 1 500 leaves room for the elements the parser adds itself.
MAX_PARSE_DEPTH = 1500
#: Bytes of the input's start that are examined.
SNIFF_BYTES = 4096
#: Control bytes other than whitespace: more than this share of the first 4 kB means the input is
#: binary. 1 %: none of the 2 171 modernweb-dev and dragnet pages has a single one there, while
#: random or compressed bytes have 27 in 256 (10.5 %); the former 10 % let 250 of 2 000 random
#: 100 kB inputs through.
BINARY_CONTROL_SHARE = 0.01
#: A ``<noscript>`` with more text than this is the page's no-JavaScript rendering (forums such as
#: Discourse serve the whole thread there) and is kept; smaller ones are "enable JavaScript"
#: notices and tracking pixels. 500 characters: those notices stay under 200 in the dev pages,
#: the thread renderings start at a few thousand.
NOSCRIPT_CONTENT_CHARS = 500

# -- features: what a subtree's vector reads (noisecbr.features; a change is a new schema) -----

#: A text piece that reads as a sentence: at least this many words, punctuation, not a link.
SENTENCE_WORDS = 8
#: How many of a subtree's first words are read as its heading.
HEAD_WORDS = 6
#: Readability's paragraph score: a text of at least 25 characters scores 1, plus one per comma,
#: plus one per 100 characters up to 3 (Arc90 readability, kept as published). A paragraph's
#: score counts for its parent, and divided by 2 for its grandparent.
MIN_PARAGRAPH_CHARS = 25
PARAGRAPH_CHARS = 100.0
MAX_LENGTH_POINTS = 3.0
GRANDPARENT_DIVISOR = 2.0
#: A page needs this many tokens of its language's stop words, and a tenth of its tokens, for
#: the language to be read: fewer are names, quotes, a menu's "and".
MIN_STOP_TOKENS = 5
MIN_STOP_SHARE = 0.1
#: How many ancestors' attribute tokens describe a subtree's surroundings (the lexical fields):
#: a widget's box is usually the element itself or one to three wrappers above it.
LEXICAL_ANCESTORS = 3

# -- the walk (noisecbr.decide.walk) -------------------------------------------------------------

#: Walk thresholds used when a model does not carry its own. Balanced, 0.5 / 0.9 / 0.5: remove
#: what the network more likely than not calls noise, keep whole only what it is sure is data.
#: The other two lean one way, for models saved without modes of their own. (A trained model
#: carries the modes chosen for it on site-grouped folds: ``python -m training.modes``.)
DEFAULT_THRESHOLDS = {"noise": 0.5, "keep": 0.9, "leaf": 0.5}
DEFAULT_MODES = {
    "balanced": DEFAULT_THRESHOLDS,
    "precision": {"noise": 0.35, "keep": 0.95, "leaf": 0.35},
    "recall": {"noise": 0.7, "keep": 0.8, "leaf": 0.7},
}
#: ``favor="auto"`` (the default) walks each page in the mode of its convention
#: (:mod:`noisecbr.decide.convention`): a page that declares itself an article (``og:type`` article,
#: a JSON-LD ``Article``, ``NewsArticle``, ``BlogPosting``…) in the precision mode, the article
#: body alone; a page with little prose (under :data:`PROSE_MIN_SHARE` of its characters in
#: text pieces of :data:`PROSE_PIECE_CHARS` or more, outside links: listings, products,
#: collections, services) in the recall mode, what a reader came for being its lists; any
#: other in the balanced mode. Measured on the recipe's fold models against the balanced mode
#: on every page (docs/experiments.md, 2026-11-26): fundus +0.0003, utomo-chaos2017 +0.0009,
#: modernweb-dev +0.0073, cleaneval-dev +0.0144, dragnet −0.0006, utomo-big9 −0.0024,
#: readability −0.0022, chinese-wce −0.0053 (69 pages; ± 0.046). The neighbouring rules (a
#: share of 0.2 or 0.4, pieces of 80 or 200 characters) give modernweb-dev +0.006 to +0.008 and
#: cleaneval-dev +0.005 to +0.015, the other sets within 0.004 of these.
PROSE_PIECE_CHARS = 120
PROSE_MIN_SHARE = 0.3

# -- after the walk: fallback, comments, headline, byline, orphans, datelines -------------------

#: The walk "kept almost nothing" below this many words. 10 words: the bench counts a page
#: with fewer than 10 words kept, where the ground truth has 50 or more, as a failure.
FALLBACK_MIN_WORDS = 10
#: Pages with fewer words than this in all their text are not rescued: their result may be
#: rightly tiny (a login wall, an image page).
FALLBACK_PAGE_WORDS = 50
#: A thread holds this many words at least: "No comments yet" or "Comments are closed." is
#: furniture about comments, not comments.
THREAD_MIN_WORDS = 10
#: The markup of a thread's box sits on the box or at most a few wrappers above it.
THREAD_MARKUP_ANCESTORS = 3
#: Comment scores below this are left as they are: a subtree is a comment only where its
#: comment score beats its noise score and their sum reaches the walk's noise threshold (0.2
#: at the lowest), and most pages have no score above it, so the markup is read only where it
#: can matter.
MIN_COMMENT_SCORE = 0.1
#: Headings this many words long or shorter are compared with the title; longer ones are text.
MAX_HEADLINE_WORDS = 40
#: A heading is the headline when this share of its words is in the title, and the other way
#: round (a ``<title>`` often adds the site's name; a heading sometimes a kicker).
HEADLINE_OVERLAP = 0.8
#: JSON-LD blocks larger than this are not parsed (a page's whole state dumped as JSON).
MAX_JSON_LD_CHARS = 200_000
#: A byline block is this short ("By Ann Reporter and Bo Li, Science Desk, 2 March 2025").
BYLINE_MAX_WORDS = 12
#: It stands among the first kept text pieces (after the headline, which is already out).
BYLINE_WITHIN_PIECES = 3
#: Or, where the page declares no author, among this many pieces the walk removed between those
#: kept pieces (the network removes many bylines: their name is still the author). Twice the
#: kept pieces' window: a byline sits between a standfirst, a date, a share bar and the body.
BYLINE_REMOVED_PIECES = 6
#: A box's heading is short: "Das könnte Sie auch interessieren" has five words.
ORPHAN_WORDS = 8
#: A dateline is short: "Updated 0339 GMT (1139 HKT) November 19, 2019" has 10 words.
DATELINE_WORDS = 20
#: Most of its words are digits or dateline words (the rest: "at", "de", "um", a city).
DATELINE_SHARE = 0.6
#: Page furniture's widgets are small (:mod:`noisecbr.decide.widgets`): a feedback box with
#: its answers, an edit link, a last-updated line or previous / next links with their titles
#: hold at most this many words ("← Previous: Configuring structured logging for multi-tenant
#: deployments Next: Shipping logs to a remote collector over TLS →" has 17). Not fitted: a
#: bound on what is read, the phrases decide.
WIDGET_WORDS = 40

# -- a site's other pages: memory (labelled) and evidence (unlabelled) ---------------------------

#: Stored case ids kept per signature to explain a decision by memory: a few examples suffice,
#: and a site's thousand product tiles must not make the memory a copy of the case base.
CASES_KEPT = 5
#: Steps of the *short* signature, consulted when a subtree's full chain is not in memory: the
#: same box (a comment list, a share bar) often sits in a different container on another page
#: of the site (another layout for galleries, a sidebar moved). 3: over one labelled page per
#: site of the development sets, F1 0.935 on dragnet's and 0.664 on modernweb-dev's pages of
#: multi-page sites, against 0.924 and 0.656 with full chains only (2 steps: 0.933 / 0.653;
#: 4: 0.939 / 0.660; 5: 0.937 / 0.660).
SHORT_STEPS = 3
#: A box the site's stored pages hold as noise (or comments) under the same markup is not removed
#: by memory when it holds more than this many times the words of the largest such stored box
#: (at least :data:`MEMORY_MIN_WORDS`): markup stays where the text changes, and a post's body
#: that a labelled video page showed with eight words is not the same furniture as a 400-word
#: article in that box. dragnet's article truth, ``--cv 5 --adapt 1`` on the recipe's fold
#: models: F1 0.947 without the bound, 0.949 with 2, 3 or 4 (docs/experiments.md, 2026-11-26).
#: The same bound holds for all of a page's boxes under one markup together, against the most
#: words one stored page held as noise there: 0.9487 -> 0.9491 (fda.gov's article, a run of
#: plain divs, came back: 0.92 on its own, 0.14 with the memory before).
MEMORY_NOISE_GROWTH = 4
MEMORY_MIN_WORDS = 5
#: Bytes of a page searched for the URL it declares: the <head> is near the start, though
#: inline styles and scripts can push it past 256 kB. 1 MB finds a URL in 720 of the 790
#: modernweb-dev pages (704 name the page's own site; 256 kB found 712), in 0.25 ms a page.
DECLARED_URL_BYTES = 1_048_576
#: A subtree is a template when its text recurs on at least this share of the evidence pages
#: (and on one page at least).
TEMPLATE_MIN_SHARE = 0.5
#: A page holding this share of the target page's paragraph words is a copy of it, not evidence.
EVIDENCE_COPY_SHARE = 0.5
#: A piece of at least this many words is a paragraph, for :data:`EVIDENCE_COPY_SHARE`: menus and
#: footers have few such pieces, articles many.
EVIDENCE_PARAGRAPH_WORDS = 20
#: A template subtree the network scores data at this level or above stays the network's to
#: decide: a site's articles repeat their own section headings ("What's the big idea?"), a
#: press office its boilerplate paragraph. 0.8 on dragnet's article truth, site-grouped 5 folds,
#: 4 pages of evidence: F1 0.941 (0.5), 0.942 (0.8), 0.940 (0.95), 0.938 (none), against 0.939
#: without evidence; on utomo-big9 0.968 with each, as without.
TEMPLATE_MAX_DATA = 0.8
#: Pages kept as evidence for one site: what repeats on a site shows on a handful of its pages,
#: and comparing each page with every other page of a 10 000-page site would cost quadratic time.
EVIDENCE_MAX_PAGES = 16

#: Levels of the page the lazy walk (:func:`noisecbr.decide.walk.walk_lazily`) scores in one round,
#: from the elements it has reached: the walk reads the scores of 7 % of a dragnet page's
#: elements, 20 % of a modernweb-dev page's, some ten levels deep. On 200 pages of each
#: (2026-11-26): 1 level → 9.6 rounds a dragnet page, 10 % of its elements scored; 3 → 3.5
#: rounds, 20 %; 6 → 2.0 rounds, 37 %. Counted in instructions (callgrind, 100 pages), 4 levels
#: cost least: dragnet 30.2 / 29.7 / 29.4 / 30.2 M a page for 2 / 3 / 4 / 6, modernweb-dev
#: 47.3 / 47.1 / 47.4 M for 3 / 4 / 6.
WALK_LOOKAHEAD = 4

# -- confidence: where a result is handed to another extractor (noisecbr.render.confidence) ---

#: ``Cleaner(fallback=…)`` hands a page on when its result's expected word F1 is under this. On
#: the recipe's folds (3 458 pages of the seven sets, each scored by a confidence model fitted
#: on the other folds; training.conventions, 2026-11-27) 2.0 % of the pages fall under 0.5 and
#: their results averaged 0.40 word F1 against 0.92 for the rest; under 0.7, 7 % averaging 0.54.
DEFAULT_FALLBACK_BELOW = 0.5


# -- the rules as one value a Cleaner can be given ---------------------------------------------


#: Above any count or factor a setting can mean (and a C int still).
_LARGEST = 2**31


@dataclasses.dataclass(frozen=True)
class Settings:
    """The rules after the walk, of comments and of a site's pages, as one frozen value a
    :class:`~noisecbr.cleaner.Cleaner` can be given (``Cleaner(settings=Settings(
    orphan_words=5))``, or :meth:`replace` on :data:`DEFAULTS`); each field's default is this
    module's constant of the same name in capitals, with its calibration.

    Not here, and why: the constants that define a feature (a trained model reads the vectors
    they made); what a :class:`~noisecbr.prepare.page.Page` computes once and keeps (its
    headline, its convention's mode); the input limits (``max_bytes``, ``max_elements`` are the
    cleaner's own arguments, the others guards against hostile input); the thresholds (a
    :class:`~noisecbr.decide.walk.Thresholds` value, chosen per page kind by the model); what
    a stored file records (a site memory's short steps); the lazy walk's lookahead (speed
    only)."""

    fallback_min_words: int = FALLBACK_MIN_WORDS
    fallback_page_words: int = FALLBACK_PAGE_WORDS
    thread_min_words: int = THREAD_MIN_WORDS
    thread_markup_ancestors: int = THREAD_MARKUP_ANCESTORS
    min_comment_score: float = MIN_COMMENT_SCORE
    byline_max_words: int = BYLINE_MAX_WORDS
    byline_within_pieces: int = BYLINE_WITHIN_PIECES
    byline_removed_pieces: int = BYLINE_REMOVED_PIECES
    orphan_words: int = ORPHAN_WORDS
    dateline_words: int = DATELINE_WORDS
    dateline_share: float = DATELINE_SHARE
    widget_words: int = WIDGET_WORDS
    memory_noise_growth: float = MEMORY_NOISE_GROWTH
    memory_min_words: int = MEMORY_MIN_WORDS
    template_min_share: float = TEMPLATE_MIN_SHARE
    evidence_copy_share: float = EVIDENCE_COPY_SHARE
    evidence_paragraph_words: int = EVIDENCE_PARAGRAPH_WORDS
    template_max_data: float = TEMPLATE_MAX_DATA
    evidence_max_pages: int = EVIDENCE_MAX_PAGES

    def __post_init__(self) -> None:
        # Counts are whole numbers (they slice, bound loops and reach the kernel as a C int),
        # shares and factors finite; numpy's numbers are taken as Python's.
        for field in dataclasses.fields(self):
            value, whole = getattr(self, field.name), field.type == "int"
            try:
                if isinstance(value, (bool, str, bytes)):
                    raise TypeError
                number = operator.index(value) if whole else float(value)
            except (TypeError, ValueError):
                number = None
            if number is None or not math.isfinite(number) or not 0 <= number < _LARGEST:
                kind = "a whole number" if whole else "a number"
                raise ValueError(f"Settings.{field.name} is {kind} in [0, {_LARGEST}), got "
                                 f"{value!r}")
            object.__setattr__(self, field.name, number)

    def replace(self, **changes: float) -> Settings:
        """These settings with ``changes`` (TypeError for a name that is not a setting)."""
        return dataclasses.replace(self, **changes)


#: The settings of this module's constants.
DEFAULTS = Settings()
_ACTIVE: contextvars.ContextVar[Settings] = contextvars.ContextVar("noisecbr_settings",
                                                                  default=DEFAULTS)


def active() -> Settings:
    """The settings the stages read now: those of the cleaner running them (:func:`using`),
    else :data:`DEFAULTS`."""
    return _ACTIVE.get()


@contextlib.contextmanager
def using(settings: Settings) -> Iterator[Settings]:
    """Run the stages called inside with ``settings`` (this thread or task only; a
    :class:`~noisecbr.cleaner.Cleaner` runs each of its stages under its own)."""
    token = _ACTIVE.set(settings)
    try:
        yield settings
    finally:
        _ACTIVE.reset(token)
