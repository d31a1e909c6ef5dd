"""noisecbr as a datatrove extractor: the HTML step of an LLM-data pipeline (FineWeb and its kin).

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter
    from noisecbr_apps.crawl.datatrove_step import NoisecbrExtractor

    LocalPipelineExecutor(pipeline=[
        WarcReader("crawl/"),
        NoisecbrExtractor(output="markdown"),   # where datatrove's Trafilatura() would stand
        JsonlWriter("cleaned/"),
    ], tasks=4).run()

Each document's HTML becomes its main content (text, or Markdown), and the page's title, author,
publication date (``published``) and language join its metadata; a document that is not a page,
or whose content is empty, is dropped and counted (datatrove's stats: ``extracted``,
``dropped``, ``clean_error``…). As
datatrove's own extractors, the cleaning runs in a child process under a per-document
``timeout``; the model is loaded once per child. Needs the ``datatrove`` extra; nothing in the
engine imports this module.
"""

from __future__ import annotations

from typing import Any, Literal

from datatrove.pipeline.extractors.base import BaseExtractor, ExtractorSandbox
from datatrove.utils.logging import logger
from datatrove.utils.typeshelper import StatHints

from noisecbr.decide.walk import AUTO
from noisecbr.prepare.tidy import InputError

from .warc import cached_cleaner

__all__ = ["NoisecbrExtractor"]

#: The metadata a page gives, copied into each document's metadata (under these keys) when the
#: page declares it: ``published``, not ``date``, which datatrove's WarcReader sets to the
#: crawl's WARC-Date.
METADATA = {"title": "title", "author": "author", "date": "published", "lang": "lang"}


class NoisecbrExtractor(BaseExtractor):
    """Clean each document's HTML with noisecbr.

    ``output``: ``"text"`` (the default) or ``"markdown"`` (with ``links`` / ``images`` when
    asked); ``favor``, ``comments`` and ``model`` as for :class:`noisecbr.Cleaner`; ``timeout``:
    seconds per document (and for the child to load the model)."""

    name = "🧹 noisecbr"
    _requires_dependencies = ["lxml", "numpy"]

    def __init__(self, output: Literal["text", "markdown"] = "text", *,
                 favor: str = AUTO, comments: bool = False, links: bool = False,
                 images: bool = False, model: str | None = None, timeout: float = 10.0) -> None:
        super().__init__(timeout)
        if output not in ("text", "markdown"):
            raise ValueError(f"output is 'text' or 'markdown', not {output!r}")
        self.output, self.favor, self.comments = output, favor, comments
        self.links, self.images, self.model = links, images, model

    def clean(self, html: str, url: str | None = None) -> dict[str, Any]:
        """The page's main content (``"text"``) and metadata; an empty text for input that is
        not a page (then dropped)."""
        cleaner = cached_cleaner(self.model, favor=self.favor, comments=self.comments)
        try:
            result = cleaner.clean(html, url=url)
        except InputError:
            return {"text": ""}
        text = (result.to_markdown(links=self.links, images=self.images)
                if self.output == "markdown" else result.text)
        return {"text": text, **{key: getattr(result, name) for name, key in METADATA.items()}}

    def extract(self, text: str) -> str:
        """The main content of the HTML ``text`` (datatrove's extractor interface)."""
        return self.clean(text)["text"]

    def run(self, data, rank: int = 0, world_size: int = 1):
        """Clean every document, as datatrove's extractors do, keeping the page's metadata."""
        with ExtractorSandbox(timeout=self.timeout, warmup_text=("", None)) as sandbox:
            for doc in data:
                self.stat_update(StatHints.total)
                with self.track_time():
                    try:
                        cleaned = sandbox.process_document(
                            (doc.text, doc.metadata.get("url")), self.clean)
                    except TimeoutError:
                        self.stat_update("timeout")
                        logger.warning("noisecbr: a document took longer than the timeout: "
                                       "skipped")
                        continue
                    except EOFError:
                        self.stat_update("broken_process")
                        continue
                    except Exception as error:  # noqa: BLE001 - datatrove counts and goes on
                        self.stat_update("clean_error")
                        logger.warning(f"noisecbr: {type(error).__name__}: {error}: skipped")
                        continue
                    self.stat_update("extracted")
                doc.text = cleaned.pop("text")
                if not doc.text:
                    self.stat_update(StatHints.dropped)
                    continue
                for key, value in cleaned.items():  # what the reader set stays
                    if value is not None:
                        doc.metadata.setdefault(key, value)
                self.stat_update(StatHints.forwarded)
                self.update_doc_stats(doc)
                yield doc
