"""Site style tree (Yi, Liu & Li, KDD 2003, "Eliminating noisy information in web pages for
data mining").

The DOM trees of a site's pages are merged top down into one *style tree*. An element node
stands for one element position (tag plus display attributes); its child *style nodes* are the
different sequences of children seen at that position, each with the number of pages using it.
Parts that look the same on every page (navigation, footers, banners) end up in element nodes
with one style and repeated content, so they score a low information-based importance; the
main content varies in structure or words and scores high.

Implementation choices (the paper leaves them open):

* Virtual leaves. The paper stops at the parents of actual leaf tags. We stop at an element all
  of whose element children are actual leaves (no element grandchildren), or that has no
  element children at all. Stopping at *any* parent of a leaf would make ``<body>`` a leaf as
  soon as it holds a single ``<br>`` or skip link, i.e. the whole page one node. Text placed
  directly inside a non-leaf element is not a feature (it is kept or dropped with its element).
* A position can be a virtual leaf on some pages and deeper on others. Its leaf instances form
  one extra pseudo style node whose importance is the leaf formula.
* Display attributes are the presentation ones of old HTML plus ``id``, ``class`` and ``role``
  (modern pages are styled through classes); runs of digits in values become ``#`` so that
  ``post-1234`` and ``post-987`` are one style.
* Mapping a new page: a node whose children sequence matches no style node is still partly
  mapped: each child goes to the element node with the same key and the same occurrence of that
  key in the most used style node that has one (the paper keeps such a subtree whole; on real
  sites a single extra child would then keep the navigation inside it). Children that map
  nowhere are new to the site, hence probably content, and are kept.
* Local noise: in :meth:`SiteStyleTree.features` the words of a kept virtual leaf whose entropy
  across the site's pages exceeds ``feature_entropy`` are left out of the bag of words; the
  cleaned text and HTML keep such a leaf whole (dropping single words would garble sentences).

Every traversal uses explicit stacks: a page can be 100 000 levels deep.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from lxml import etree

from ..prepare.strings import drop_elements
from ..prepare.subtrees import build_table
from ..prepare.tidy import Parser, tidy
from ..render.text import render_html, render_text
from ..result import DATA, LABELS, MIXTURE, NOISE, CleanResult, Decision
from .style import content_features, element_children, element_key, feature_entropies

__all__ = [
    "ATTENUATION",
    "DEFAULT_FEATURE_ENTROPY",
    "DEFAULT_THRESHOLD",
    "ElementNode",
    "SiteStyleTree",
    "StyleNode",
]

#: γ of the composite importance: the paper's value. The weight of the children's importance is
#: γ^l, so a node with many styles is judged mostly by its own style diversity.
ATTENUATION = 0.9

#: An element node is noise when it and all its descendants score below this composite
#: importance. A block repeated on every page scores about 0 (every word spread evenly over the
#: pages, entropy 1); an article's virtual leaf scores 1 minus the share of its vocabulary that
#: is common words, about 0.6–0.9; an unchanged wrapper above both scores γ·mean of its
#: children. 0.3 sits between the two groups: a leaf is noise when, on average, its words are
#: more than 70 % "spread evenly over the pages".
DEFAULT_THRESHOLD = 0.3

#: A word of a kept virtual leaf is local noise (dropped from :meth:`SiteStyleTree.features`)
#: above this entropy: spread evenly over at least m^0.8 of the m pages (8 of 13, 40 of 100).
DEFAULT_FEATURE_ENTROPY = 0.8


#: A node's status and a decision's label are label names (:data:`noisecbr.result.LABELS`).
_NOISE, _DATA, _MIXTURE = LABELS[NOISE], LABELS[DATA], LABELS[MIXTURE]
#: The probabilities of a decision the style tree takes outright: one-hot in the paper's classes.
_ONE_HOT = {LABELS[k]: tuple(float(k == c) for c in range(3)) for k in (NOISE, DATA, MIXTURE)}


def _is_virtual_leaf(element: etree._Element) -> bool:
    """True when no element child has element children of its own."""
    for child in element:
        if isinstance(child.tag, str):
            for grandchild in child:
                if isinstance(grandchild.tag, str):
                    return False
    return True


@dataclass(eq=False)
class StyleNode:
    """One children sequence seen at an element position, and how many pages used it."""

    keys: tuple[str, ...]
    children: list[ElementNode]
    pages: int = 0
    comp_imp: float = 0.0


@dataclass(eq=False)
class ElementNode:
    """One element position of the site: its styles, its leaf instances and its importance."""

    key: str
    tag: str
    styles: dict[tuple[str, ...], StyleNode] = field(default_factory=dict)
    #: Features of each page's instance where the element was a virtual leaf.
    leaf_instances: list[Counter[str]] = field(default_factory=list)
    #: Entropy of each leaf feature across the leaf instances (filled by the importance pass).
    entropies: dict[str, float] = field(default_factory=dict)
    node_imp: float = 1.0
    leaf_imp: float = 1.0  # leaf formula over ``leaf_instances`` (meaningless without any)
    comp_imp: float = 1.0
    status: str = _DATA  # noise, data (meaningful) or mixture (neither: descend)
    #: The element node above and this node's place under it: "s<style>/<position>".
    parent: ElementNode | None = field(default=None, repr=False)
    slot: str = ""

    @property
    def path(self) -> str:
        """Readable position in the tree: ``body/s0/2:div[class=main]/s1/0:p``.

        Style numbers follow the order in which the styles were first seen.
        """
        steps = []
        node: ElementNode | None = self
        while node is not None:
            steps.append(f"{node.slot}:{node.key}" if node.slot else node.key)
            node = node.parent
        return "/".join(reversed(steps))

    @property
    def pages(self) -> int:
        """m: the number of pages that have this element position."""
        return sum(style.pages for style in self.styles.values()) + len(self.leaf_instances)

    def ranked_styles(self) -> list[StyleNode]:
        """Style nodes, most used first."""
        return sorted(self.styles.values(), key=lambda style: -style.pages)


def _leaf_importance(node: ElementNode) -> float:
    """1 - Σ H(a_i) / N over the N distinct features of the node's leaf instances."""
    m = len(node.leaf_instances)
    if m <= 1:
        return 1.0
    if not node.entropies:
        # No words nor images on any page: presentation furniture, nothing to keep.
        return 0.0
    return 1.0 - sum(node.entropies.values()) / len(node.entropies)


class SiteStyleTree:
    """A site's style tree: fit on some pages of a site, then clean any page of that site.

    Hyperparameters go to the constructor and :meth:`fit` returns the tree, as in
    scikit-learn:

    >>> nav = "<ul class=nav><li>Home</li><li>News</li><li>About</li></ul>"
    >>> pages = [f"<body>{nav}<div class=article>{article}</div></body>" for article in
    ...          ("<h1>Apple banana</h1><p>Common apple.</p>", "<p>Cherry pie.</p>")]
    >>> SiteStyleTree(threshold=0.5).fit(pages).clean(pages[0]).text.splitlines()
    ['Apple banana', '', 'Common apple.']
    """

    def __init__(
        self,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        feature_entropy: float = DEFAULT_FEATURE_ENTROPY,
        parser: Parser = "lxml",
    ) -> None:
        self.threshold = threshold
        self.feature_entropy = feature_entropy
        self.parser: Parser = parser
        #: The merged style tree, set by :meth:`fit`.
        self.root: ElementNode | None = None

    # ------------------------------------------------------------------ building

    def fit(self, pages: Iterable[str | bytes]) -> SiteStyleTree:
        """Build the style tree of a site from the HTML of some of its pages; returns self."""
        return self.fit_bodies(tidy(page, parser=self.parser) for page in pages)

    def fit_bodies(self, bodies: Iterable[etree._Element]) -> SiteStyleTree:
        """Build the style tree from already tidied ``<body>`` elements; returns self.

        Identical copies of a page (one URL fetched twice) are merged once: counted twice they
        would make every part of that page look repeated across the site, hence noise.
        """
        root: ElementNode | None = None
        seen: set[bytes] = set()
        for body in bodies:
            digest = hashlib.blake2b(etree.tostring(body), digest_size=16).digest()
            if digest in seen:
                continue
            seen.add(digest)
            if root is None:
                root = ElementNode(key=element_key(body), tag=str(body.tag))
            _merge_page(root, body)
        if root is None:
            raise ValueError("a site style tree needs at least one page")
        self.root = root
        self._score()
        return self

    def _fitted_root(self) -> ElementNode:
        if self.root is None:
            raise ValueError("this SiteStyleTree is not fitted: call fit(pages) first")
        return self.root

    def _score(self) -> None:
        """NodeImp, CompImp and noise status of every element node, children first."""
        for node in reversed(list(self.nodes())):
            m = node.pages
            node.entropies = feature_entropies(node.leaf_instances)
            node.leaf_imp = _leaf_importance(node)
            if not node.styles:  # a virtual leaf on every page that has it
                node.node_imp = node.comp_imp = node.leaf_imp if m > 1 else 1.0
            else:
                shares = [style.pages / m for style in node.styles.values()]
                style_imps = []
                for style in node.styles.values():
                    style.comp_imp = (sum(c.comp_imp for c in style.children)
                                      / len(style.children))
                    style_imps.append(style.comp_imp)
                if node.leaf_instances:
                    shares.append(len(node.leaf_instances) / m)
                    style_imps.append(node.leaf_imp)
                node.node_imp = _style_entropy(shares, m)
                weight = ATTENUATION ** len(shares)
                node.comp_imp = ((1.0 - weight) * node.node_imp
                                 + weight * sum(p * c for p, c in zip(shares, style_imps,
                                                                      strict=True)))
            node.status = self._status(node)

    def _status(self, node: ElementNode) -> str:
        """Noise: it and every descendant below t. Meaningful (data): no noisy descendant.

        Children are scored first, so "every descendant" reduces to "every child is noise" and
        "no noisy descendant" to "every child is meaningful".
        """
        t = self.threshold
        parts_noise = []
        parts_clean = []
        for style in node.styles.values():
            for child in style.children:
                parts_noise.append(child.status == _NOISE)
                parts_clean.append(child.status == _DATA)
        if node.styles and node.leaf_instances:
            # The leaf instances act as one more child of a position that is sometimes a leaf.
            parts_noise.append(node.leaf_imp < t)
            parts_clean.append(node.leaf_imp >= t)
        if node.comp_imp < t and all(parts_noise):
            return _NOISE
        if all(parts_clean):
            return _DATA
        return _MIXTURE

    # ------------------------------------------------------------------ inspection

    def nodes(self) -> Iterator[ElementNode]:
        """Every element node, parents before children."""
        stack = [self._fitted_root()]
        while stack:
            node = stack.pop()
            yield node
            for style in node.styles.values():
                stack.extend(reversed(style.children))

    @property
    def importance(self) -> dict[str, float]:
        """Composite importance of every element node, by :attr:`ElementNode.path`.

        For inspection: one path string per node, so its size grows with nodes × depth; walk
        :meth:`nodes` instead on pathologically deep sites.
        """
        return {node.path: node.comp_imp for node in self.nodes()}

    # ------------------------------------------------------------------ mapping pages

    def _walk(
        self, body: etree._Element
    ) -> tuple[list[tuple[etree._Element, str]], list[tuple[etree._Element, ElementNode | None]]]:
        """Map a page onto the tree.

        Returns the decisions (element, label) from the top down to the first noise or data
        verdict, and the kept virtual leaves of the page with the element node each maps to
        (``None`` for parts new to the site).
        """
        decisions: list[tuple[etree._Element, str]] = []
        leaves: list[tuple[etree._Element, ElementNode | None]] = []
        # (page element, element node or None, True once an ancestor was kept whole)
        stack: list[tuple[etree._Element, ElementNode | None, bool]] = [
            (body, self._fitted_root(), False)]
        t = self.threshold
        while stack:
            element, node, kept = stack.pop()
            is_leaf = _is_virtual_leaf(element)
            if not kept:
                if node is None:
                    label = _DATA
                elif node.status != _MIXTURE:
                    label = node.status
                elif is_leaf:
                    # Mixed position reached as a leaf: judge it as a leaf if ever seen as one.
                    label = _NOISE if node.leaf_instances and node.leaf_imp < t else _DATA
                else:
                    label = _MIXTURE
                decisions.append((element, label))
                if label == _NOISE:
                    continue
                kept = label == _DATA
            if is_leaf:
                leaves.append((element, node))
                continue
            children = element_children(element)
            mapped = _map_children(node, children) if node is not None else [None] * len(children)
            stack.extend((child, target, kept)
                         for child, target in zip(reversed(children), reversed(mapped),
                                                  strict=True))
        return decisions, leaves

    def noisy_elements(self, body: etree._Element) -> set[etree._Element]:
        """Elements of a tidied body that map to noise (maximal ones: not their descendants)."""
        decisions, _ = self._walk(body)
        return {element for element, label in decisions if label == _NOISE}

    def clean(self, html: str | bytes, url: str | None = None) -> CleanResult:
        """Remove from a page of the site what maps to the noisy parts of the style tree.

        Decisions run from ``<body>`` down to each noise (deleted) or data (kept whole) verdict,
        through mixture nodes (descended into). Their probabilities are one-hot: the style tree
        gives verdicts, not calibrated probabilities. A decision's ``text_length`` is what the
        cleaner's is: the word characters of the subtree, from the page's element table.
        """
        body = tidy(html, parser=self.parser)
        walked, _ = self._walk(body)
        removed = {element for element, label in walked if label == _NOISE}
        tree = body.getroottree()
        table = build_table(body)
        chars = table.subtree(table.piece_chars)
        row = {element: i for i, element in enumerate(table.elements)}
        decisions = [
            Decision(
                path=tree.getpath(element),
                tag=str(element.tag),
                label=label,
                probabilities=_ONE_HOT[label],
                text_length=int(chars[row[element]]) if element in row else 0,
            )
            for element, label in walked
        ]
        text = render_text(body, removed=removed)
        if body in removed:  # the whole page is noise: keep an empty, still valid, body
            for child in list(body):
                body.remove(child)
            body.text = None
        else:
            drop_elements(removed)
        return CleanResult(html=render_html(body), text=text, decisions=decisions, url=url)

    def features(self, html: str | bytes) -> Counter[str]:
        """Bag of words and image sources of the kept parts, without locally noisy words."""
        body = tidy(html, parser=self.parser)
        _, leaves = self._walk(body)
        bag: Counter[str] = Counter()
        for element, node in leaves:
            entropies = node.entropies if node is not None else {}
            for feature, count in content_features(element).items():
                if entropies.get(feature, 0.0) <= self.feature_entropy:
                    bag[feature] += count
        return bag


def _style_entropy(shares: Sequence[float], m: int) -> float:
    """NodeImp = -Σ p_i log_m p_i over the styles' page shares; 1 for a node seen on one page."""
    if m <= 1:
        return 1.0
    # Few styles per node: plain floats beat numpy's per-call overhead here.
    entropy = -sum(p * math.log(p) for p in shares if p > 0) / math.log(m)
    return min(1.0, max(0.0, entropy))


def _merge_page(root: ElementNode, body: etree._Element) -> None:
    """Add one page's DOM tree to the style tree, top down."""
    stack: list[tuple[etree._Element, ElementNode]] = [(body, root)]
    while stack:
        element, node = stack.pop()
        if _is_virtual_leaf(element):
            node.leaf_instances.append(content_features(element))
            continue
        children = element_children(element)
        keys = tuple(element_key(child) for child in children)
        style = node.styles.get(keys)
        if style is None:
            number = len(node.styles)
            style = StyleNode(keys=keys, children=[
                ElementNode(key=key, tag=str(child.tag), parent=node, slot=f"s{number}/{i}")
                for i, (key, child) in enumerate(zip(keys, children, strict=True))
            ])
            node.styles[keys] = style
        style.pages += 1
        stack.extend(zip(children, style.children, strict=True))


def _map_children(
    node: ElementNode, children: list[etree._Element]
) -> list[ElementNode | None]:
    """Element node of each page child: the exact style if there is one, else key by key."""
    keys = tuple(element_key(child) for child in children)
    style = node.styles.get(keys)
    if style is not None:
        return list(style.children)
    # Partial mapping: the k-th child with a key goes to the k-th element node with that key in
    # the most used style node that has one.
    ranked = node.ranked_styles()
    lookups: list[dict[tuple[str, int], ElementNode]] = []
    for candidate in ranked:
        seen: Counter[str] = Counter()
        lookup: dict[tuple[str, int], ElementNode] = {}
        for key, child_node in zip(candidate.keys, candidate.children, strict=True):
            lookup[(key, seen[key])] = child_node
            seen[key] += 1
        lookups.append(lookup)
    seen_page: Counter[str] = Counter()
    mapped: list[ElementNode | None] = []
    for key in keys:
        slot = (key, seen_page[key])
        seen_page[key] += 1
        mapped.append(next((lookup[slot] for lookup in lookups if slot in lookup), None))
    return mapped
