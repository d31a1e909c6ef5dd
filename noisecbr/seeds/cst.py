"""Compressed structure tree (Yi & Liu, IJCAI 2003, "Web page cleaning for web mining through
feature weighting").

The DOM trees of a site's pages are merged into one tree of *element nodes*. An element node
collects the *tag nodes* (DOM elements, possibly several per page) merged into it; a tag node's
*presentation style* is the sequence of its children's tags and attributes. Children of an
element node's tag nodes are merged when they share tag, attributes and presentation style; two
resulting siblings with the same tag and attributes but different styles are merged further when
their characteristic word sets (words found in at least ``γ`` of their tag nodes) overlap by a
Jaccard coefficient of at least ``λ``.

Importance: an internal node's NodeImp is the entropy of its presentation styles, in base ``m``
(its number of tag nodes); a leaf's is ``1 - Σ H(a_i) / N`` over its ``N`` words, ``H(a_i)`` being
the entropy (base ``m``) of word ``a_i``'s spread over the leaf's tag nodes. PathImp multiplies
the "unimportance" ``1 - NodeImp`` down the path. A page's word ``a_i`` under leaf tag node
``T_j`` of element node ``E`` weighs ``PathImp(E) · (1 - H_E(a_i)) · f_ij``; a page's bag of
words sums these.

Implementation choices:

* Virtual leaves are the grandparents of actual leaves: we stop at an element none of whose
  element children has element grandchildren (subtree height ≤ 2), so a single ``<br>`` does
  not make its parent a leaf (see :mod:`noisecbr.seeds.sst`).
* The root is the document's ``<html>`` (as in the paper's example); its ``<body>`` always maps
  to the one body node whatever the body's attributes (body classes often name the page).
* An element node whose tag nodes are leaves on some pages and internal on others uses the
  style entropy for descending and the leaf formula (over its leaf tag nodes) for words.
* Sibling merging by Jaccard is one union-find pass over the pairs of same-key siblings, using
  the characteristic sets before merging (merging is then independent of the order of pairs).
* Mapping a new page: a child goes to the sibling node with its tag, attributes and style;
  failing that, to the same-key sibling whose characteristic words best overlap the child's
  words (Jaccard ≥ λ); failing that it is new to the site: its words weigh their frequency
  (NodeImp 1: nothing on the site says they are common). Text placed directly in an internal
  element (not in a leaf) carries no weight, as in the paper.

All traversals use explicit stacks or queues.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from lxml import etree

from ..prepare.tidy import Parser, tidy
from .style import (
    content_features,
    element_children,
    element_key,
    feature_entropies,
    words_of,
)

__all__ = ["CHARACTERISTIC_SHARE", "JACCARD_MERGE", "CSTNode", "CompressedStructureTree"]

#: γ: a word is characteristic of an element node when it occurs in at least this share of the
#: node's tag nodes (the paper's value).
CHARACTERISTIC_SHARE = 0.85

#: λ: same-tag siblings whose characteristic word sets overlap at least this much (Jaccard) are
#: one block shown with different markup (the paper's value).
JACCARD_MERGE = 0.85

Style = tuple[str, ...]


def _key(element: etree._Element) -> str:
    # The body is one position on every page, whatever its (often page-specific) attributes.
    return "body" if element.tag == "body" else element_key(element)


def _style(element: etree._Element) -> Style:
    return tuple(_key(child) for child in element_children(element))


def _is_leaf(element: etree._Element) -> bool:
    """True when the element's subtree is at most two levels deep (a grandparent of leaves)."""
    for child in element:
        if not isinstance(child.tag, str):
            continue
        for grandchild in child:
            if isinstance(grandchild.tag, str) and any(
                isinstance(great.tag, str) for great in grandchild
            ):
                return False
    return True


def _word_sets(root: etree._Element) -> dict[etree._Element, frozenset[str]]:
    """Distinct words under every element, in one post-order pass.

    Reading each element's text separately would cost depth × text; here each set is built
    from its children's sets, so a chain of 100 000 wrappers around one sentence stays cheap.
    """
    sets: dict[etree._Element, frozenset[str]] = {}
    open_sets: list[set[str]] = []
    for event, element in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            text = element.text if isinstance(element.tag, str) else None
            open_sets.append(set(words_of(text)) if text else set())
            continue
        words = frozenset(open_sets.pop())
        if isinstance(element.tag, str):
            sets[element] = words
        if open_sets:
            parent = open_sets[-1]
            parent |= words
            if element.tail and element is not root:
                parent.update(words_of(element.tail))
    return sets


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0  # no words on one side: nothing says the two are the same block
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def _characteristic(word_sets: list[frozenset[str]], share: float) -> frozenset[str]:
    counts: Counter[str] = Counter()
    for words in word_sets:
        counts.update(words)
    needed = share * len(word_sets)
    return frozenset(word for word, count in counts.items() if count >= needed - 1e-9)


@dataclass(eq=False)
class CSTNode:
    """An element node: the tag nodes merged into it, their styles, words and importance."""

    key: str
    tag: str
    parent: CSTNode | None = field(default=None, repr=False)
    children: list[CSTNode] = field(default_factory=list, repr=False)
    #: Presentation style → number of tag nodes using it.
    styles: Counter[Style] = field(default_factory=Counter)
    #: Words of each tag node that was a virtual leaf.
    leaf_instances: list[Counter[str]] = field(default_factory=list, repr=False)
    #: Words found in at least γ of the tag nodes.
    characteristic: frozenset[str] = field(default_factory=frozenset, repr=False)
    entropies: dict[str, float] = field(default_factory=dict, repr=False)
    node_imp: float = 1.0  # style entropy (what descending through the node contributes)
    leaf_imp: float = 1.0  # leaf formula over leaf_instances
    path_imp: float = 1.0  # 1 - Π (1 - node_imp) from the root down to this node

    @property
    def tag_nodes(self) -> int:
        """m: how many DOM elements were merged into this node."""
        return sum(self.styles.values())

    @property
    def leaf_path_imp(self) -> float:
        """PathImp of the node's words: the ancestors' NodeImp, then the leaf formula's."""
        above = 1.0 - self.parent.path_imp if self.parent is not None else 1.0
        return 1.0 - above * (1.0 - self.leaf_imp)


class CompressedStructureTree:
    """A site's compressed structure tree, giving each word of a page a weight.

    Hyperparameters go to the constructor and :meth:`fit` returns the tree, as in
    scikit-learn:

    >>> nav = "<ul class=nav><li><a>Home</a></li><li><a>News</a></li></ul>"
    >>> pages = [f"<body>{nav}<div class=article><div><p>{text}</p></div></div></body>"
    ...          for text in ("Apple banana", "Cherry pie")]
    >>> CompressedStructureTree().fit(pages).weights(pages[0])
    {'apple': 1.0, 'banana': 1.0, 'home': 0.0, 'news': 0.0}
    """

    def __init__(self, *, share: float = CHARACTERISTIC_SHARE, jaccard: float = JACCARD_MERGE,
                 parser: Parser = "lxml") -> None:
        self.share = share
        self.jaccard = jaccard
        self.parser: Parser = parser
        #: The merged structure tree, set by :meth:`fit`.
        self.root: CSTNode | None = None

    def fit(self, pages: Iterable[str | bytes]) -> CompressedStructureTree:
        """Build the tree of a site from the HTML of some of its pages; returns self."""
        return self.fit_bodies(tidy(page, parser=self.parser) for page in pages)

    def fit_bodies(self, bodies: Iterable[etree._Element]) -> CompressedStructureTree:
        """Build the tree from already tidied ``<body>`` elements (identical pages count once);
        returns self."""
        roots: list[etree._Element] = []
        seen: set[bytes] = set()
        for body in bodies:
            digest = hashlib.blake2b(etree.tostring(body), digest_size=16).digest()
            if digest not in seen:
                seen.add(digest)
                roots.append(_document_root(body))
        if not roots:
            raise ValueError("a compressed structure tree needs at least one page")
        root = CSTNode(key=_key(roots[0]), tag=str(roots[0].tag))
        word_sets: dict[etree._Element, frozenset[str]] = {}
        for page_root in roots:
            word_sets.update(_word_sets(page_root))
        root.characteristic = _characteristic([word_sets[r] for r in roots], self.share)
        _build(root, roots, word_sets, self.share, self.jaccard)
        _score(root)
        self.root = root
        return self

    def _fitted_root(self) -> CSTNode:
        if self.root is None:
            raise ValueError("this CompressedStructureTree is not fitted: call fit(pages) first")
        return self.root

    def nodes(self) -> Iterator[CSTNode]:
        """Every element node, parents before children."""
        stack = [self._fitted_root()]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def _match(self, node: CSTNode, child: etree._Element,
               word_sets: dict[etree._Element, frozenset[str]]) -> CSTNode | None:
        key, style = _key(child), _style(child)
        same_key = [candidate for candidate in node.children if candidate.key == key]
        if key == "body" and same_key:
            return same_key[0]
        for candidate in same_key:
            if style in candidate.styles:
                return candidate
        if not same_key:
            return None
        words = word_sets[child]
        best = max(same_key, key=lambda candidate: _jaccard(candidate.characteristic, words))
        return best if _jaccard(best.characteristic, words) >= self.jaccard else None

    def weights_of_body(self, body: etree._Element) -> dict[str, float]:
        """Weighted bag of words of an already tidied page body."""
        weights: dict[str, float] = {}

        def add(element: etree._Element, path_imp: float, entropies: dict[str, float]) -> None:
            for word, count in content_features(element, images=False).items():
                weight = path_imp * (1.0 - entropies.get(word, 0.0)) * count
                weights[word] = weights.get(word, 0.0) + weight

        page_root = _document_root(body)
        word_sets = _word_sets(page_root)
        # (page element, node it maps to or None, Π (1 - NodeImp) over the nodes above it)
        stack: list[tuple[etree._Element, CSTNode | None, float]] = [
            (page_root, self._fitted_root(), 1.0)]
        while stack:
            element, node, above = stack.pop()
            if node is None:
                add(element, 1.0, {})  # new to the site
            elif _is_leaf(element) or not node.children:
                # A leaf on this page, or a position the site only ever showed as a leaf.
                if node.leaf_instances:
                    add(element, 1.0 - above * (1.0 - node.leaf_imp), node.entropies)
                else:
                    add(element, 1.0 - above * (1.0 - node.node_imp), {})
            else:
                below = above * (1.0 - node.node_imp)
                for child in element_children(element):
                    stack.append((child, self._match(node, child, word_sets), below))
        return weights

    def weights(self, html: str | bytes) -> dict[str, float]:
        """A page's weighted bag of words: common, site-wide words weigh little."""
        return self.weights_of_body(tidy(html, parser=self.parser))


def _document_root(body: etree._Element) -> etree._Element:
    """The page's ``<html>`` when the body has one, else the body itself."""
    parent = body.getparent()
    return parent if parent is not None and parent.tag == "html" else body


def _build(
    root: CSTNode,
    roots: list[etree._Element],
    word_sets: dict[etree._Element, frozenset[str]],
    share: float,
    jaccard: float,
) -> None:
    """Merge the pages top down, one element node at a time (breadth first, no recursion)."""
    queue: deque[tuple[CSTNode, list[etree._Element]]] = deque([(root, roots)])
    while queue:
        node, tag_nodes = queue.popleft()
        # Children tag nodes grouped by (key, style), in order of first appearance.
        groups: dict[tuple[str, Style], list[etree._Element]] = {}
        for tag_node in tag_nodes:
            node.styles[_style(tag_node)] += 1
            if _is_leaf(tag_node):
                node.leaf_instances.append(content_features(tag_node, images=False))
                continue
            for child in element_children(tag_node):
                key = _key(child)
                # Every page's body is the same position, however differently it is laid out.
                style = () if key == "body" else _style(child)
                groups.setdefault((key, style), []).append(child)
        if not groups:
            continue
        members = list(groups.values())
        group_sets = [[word_sets[element] for element in group] for group in members]
        characteristic = [_characteristic(sets, share) for sets in group_sets]
        owner = _merge_similar([key for key, _ in groups], characteristic, jaccard)
        merged: dict[int, list[int]] = {}
        for index, representative in enumerate(owner):
            merged.setdefault(representative, []).append(index)
        for indexes in merged.values():
            elements = [element for i in indexes for element in members[i]]
            first = elements[0]
            child_node = CSTNode(key=_key(first), tag=str(first.tag), parent=node)
            child_node.characteristic = (
                characteristic[indexes[0]] if len(indexes) == 1 else _characteristic(
                    [words for i in indexes for words in group_sets[i]], share))
            node.children.append(child_node)
            queue.append((child_node, elements))


def _merge_similar(keys: list[str], characteristic: list[frozenset[str]],
                   jaccard: float) -> list[int]:
    """Union-find over same-key groups whose characteristic sets overlap enough."""
    owner = list(range(len(keys)))

    def find(i: int) -> int:
        while owner[i] != i:
            owner[i] = owner[owner[i]]
            i = owner[i]
        return i

    by_key: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        by_key.setdefault(key, []).append(index)
    for indexes in by_key.values():
        for a_pos, a in enumerate(indexes):
            for b in indexes[a_pos + 1:]:
                if _jaccard(characteristic[a], characteristic[b]) >= jaccard:
                    ra, rb = find(a), find(b)
                    if ra != rb:
                        owner[max(ra, rb)] = min(ra, rb)  # the earliest group represents
    return [find(i) for i in range(len(keys))]


def _score(root: CSTNode) -> None:
    """NodeImp and leaf importance of every node, and PathImp from the root down."""
    stack = [root]
    while stack:
        node = stack.pop()
        m = node.tag_nodes
        if m <= 1:
            node.node_imp = 1.0
        else:
            entropy = -sum((c / m) * math.log(c / m) for c in node.styles.values())
            node.node_imp = min(1.0, max(0.0, entropy / math.log(m)))
        node.entropies = feature_entropies(node.leaf_instances)
        leaves = len(node.leaf_instances)
        if leaves <= 1:
            node.leaf_imp = 1.0
        elif node.entropies:
            node.leaf_imp = 1.0 - sum(node.entropies.values()) / len(node.entropies)
        else:
            node.leaf_imp = 0.0  # no words on any page: nothing to weigh anyway
        above = 1.0 - node.parent.path_imp if node.parent is not None else 1.0
        node.path_imp = 1.0 - above * (1.0 - node.node_imp)
        stack.extend(node.children)
