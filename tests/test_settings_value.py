"""The rules a cleaner runs under, as one frozen value: given to a Cleaner (or clean()), they
change what its stages decide and render, for that cleaner only; the defaults are the
settings module's constants."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

import noisecbr
from noisecbr import Cleaner, Settings
from noisecbr import settings as settings_module
from noisecbr.settings import DEFAULTS, active, using

#: Over every page's words: every page then "kept too little", and the fallback decides it.
EVERYTHING_FALLS_BACK = Settings(fallback_min_words=10**9)

BYLINED = b"""<html><head><title>Harbour works begin</title></head><body>
<div class="author-name">Ann Marie Louise Smith</div>
<article><h1>Harbour works begin</h1>
<p>The harbour works began on Monday after two years of planning by the council and the port
authority, who agreed on the budget in a long meeting last spring.</p>
<p>Residents said the noise would be worth it if the new quay brings the ferries back to the
town, which lost its last regular service a decade ago.</p></article></body></html>"""


def test_the_defaults_are_the_settings_modules_constants():
    for field in dataclasses.fields(Settings):
        assert getattr(DEFAULTS, field.name) == getattr(settings_module, field.name.upper())
    assert Cleaner().settings is DEFAULTS and active() is DEFAULTS


def test_settings_are_a_frozen_value_checked_when_made():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULTS.orphan_words = 3
    with pytest.raises(TypeError):
        DEFAULTS.replace(no_such_setting=1)
    with pytest.raises(ValueError, match="orphan_words"):
        Settings(orphan_words=-1)
    with pytest.raises(ValueError, match="dateline_share"):
        Settings(dateline_share=float("nan"))
    with pytest.raises(ValueError, match="whole number"):
        Settings(byline_within_pieces=3.0)  # a count slices a list: 3.0 would fail later
    with pytest.raises(ValueError, match="byline_max_words"):
        Settings(byline_max_words="12")
    with pytest.raises(ValueError, match="thread_markup_ancestors"):
        Settings(thread_markup_ancestors=2**40)  # the kernel reads it as a C int
    assert type(Settings(orphan_words=np.int64(5)).orphan_words) is int
    with pytest.raises(TypeError, match="settings must be"):
        Cleaner(settings={"orphan_words": 3})
    assert DEFAULTS.replace(orphan_words=3).orphan_words == 3 and DEFAULTS.orphan_words == 8


def test_a_cleaners_settings_change_its_decisions_and_no_one_elses(article_html):
    ruled = Cleaner(settings=EVERYTHING_FALLS_BACK)
    plain = Cleaner()
    assert ruled.clean(article_html).fallback
    assert not plain.clean(article_html).fallback
    assert not noisecbr.clean(article_html).fallback
    assert noisecbr.clean(article_html, settings=EVERYTHING_FALLS_BACK).fallback
    # The stages one at a time run under the cleaner's settings too.
    page = ruled.prepare(article_html)
    assert ruled.decide(page).fell_back and not plain.decide(page).fell_back
    assert active() is DEFAULTS  # nothing leaks out of a stage


def test_the_pipelines_functions_run_under_the_settings_in_force(article_html):
    from noisecbr import pipeline

    cleaner = Cleaner()
    page = cleaner.prepare(article_html)
    proba = cleaner.score(page)
    thresholds = cleaner.thresholds_for(page)
    with using(EVERYTHING_FALLS_BACK):
        assert pipeline.decide(page, proba, thresholds).fell_back
    assert not pipeline.decide(page, proba, thresholds).fell_back


def test_a_lazily_read_author_follows_the_cleaners_settings():
    # The author an element's class names is looked for when first read, after clean has
    # returned: under the settings of the cleaner that rendered the result.
    found = Cleaner().clean(BYLINED)
    bounded = Cleaner(settings=Settings(byline_max_words=1)).clean(BYLINED)
    assert found.author == "Ann Marie Louise Smith"
    assert bounded.author is None  # four words: over 1 (+ 2 for a "By" and a date)


def test_settings_hold_in_their_own_thread_only():
    seen = {}

    def other():
        seen["other"] = active()

    with using(EVERYTHING_FALLS_BACK):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert active() is EVERYTHING_FALLS_BACK
    assert seen["other"] is DEFAULTS
