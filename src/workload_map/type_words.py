"""One type resolver: the words ``get``, ``describe``, ``explain``, ``definitions``, ``group``,
the REST API and every other consumer accept for a workload type.

A word is, in this order:

1. a definition name (``jobset-x-k8s-io-jobset-v1alpha2``);
2. with a cluster, what kubectl resolves it to through discovery (plural, singular, short name,
   kind, ``kind.group``, ``kind.version.group``, the core group first), then the definition of
   that exact GVK or, failing that, of the same group and kind;
3. without a cluster (or for a word discovery does not know), the same forms from the REST names
   the catalog records for its kinds (``catalog/resource-names.yaml``) and from each
   definition's kind. Built-in kinds win over custom resources with the same word, as in kubectl
   (``services`` is the core Service, ``jobs`` batch Jobs, not Knative's or Volcano's).

A word that names a type no definition covers is a :class:`NoDefinitionForTypeError`; a word
nothing knows is an :class:`UnknownTypeWordError` with "did you mean" suggestions.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workload_map.errors import WorkloadMapError

if TYPE_CHECKING:
    from workload_map.definitions_source import DefinitionEntry, DefinitionSet

NAMES_FILE = Path(__file__).with_name("catalog") / "resource-names.yaml"
#: How many "did you mean" suggestions an unknown word gets.
MAX_SUGGESTIONS = 3


class TypeWordError(WorkloadMapError):
    """A type word that cannot be turned into one definition."""


class UnknownTypeWordError(TypeWordError):
    """Nothing (definition, discovery, catalog names) knows the word."""

    def __init__(self, word: str, suggestions: Sequence[str]) -> None:
        self.word = word
        self.suggestions = tuple(suggestions)
        hint = f"; did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f'no workload type "{word}"{hint}')


class NoDefinitionForTypeError(TypeWordError):
    """The word names a real type, but no definition covers it."""

    def __init__(self, word: str, gvk: str) -> None:
        self.word = word
        self.gvk = gvk
        super().__init__(f'no Karta definition covers "{word}" ({gvk})')


class AmbiguousTypeWordError(TypeWordError):
    """The word names several covered types; ``forms`` are the words that name each one."""

    def __init__(self, word: str, forms: Sequence[str]) -> None:
        self.word = word
        self.forms = tuple(forms)
        super().__init__(
            f'"{word}" matches more than one Karta definition, retry with one of: {", ".join(forms)}'
        )


class DefinitionClaimedTwiceError(TypeWordError):
    """Several definitions claim the same GVK."""

    def __init__(self, gvk: str, names: Sequence[str]) -> None:
        self.gvk = gvk
        self.names = tuple(names)
        quoted = ", ".join(f'"{n}"' for n in names)
        super().__init__(f"{len(names)} Karta definitions claim {gvk}: {quoted}; remove one from the cluster")


@dataclass(frozen=True)
class RestNames:
    """The REST names of one kind: plural, singular, short names; ``builtin`` for the
    Kubernetes built-in groups."""

    group: str
    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...] = ()
    builtin: bool = False

    def words(self) -> tuple[str, ...]:
        return (self.plural, self.singular, self.kind.lower(), *self.short_names)


def plural_forms(kind: str) -> set[str]:
    """The words a kind without recorded REST names is known by: the lowercase kind and the
    plurals English rules give it (``jobs``, ``...ses``, ``...ies``)."""
    k = kind.lower()
    out = {k, k + "s"}
    if k.endswith(("s", "x", "z", "ch", "sh")):
        out.add(k + "es")
    if k.endswith("y") and len(k) > 1 and k[-2] not in "aeiou":
        out.add(k[:-1] + "ies")
    return out


@functools.cache
def catalog_names() -> Mapping[tuple[str, str], RestNames]:
    """``(group, kind) -> RestNames`` from ``catalog/resource-names.yaml`` (read once)."""
    import yaml

    rows: list[dict[str, Any]] = yaml.safe_load(NAMES_FILE.read_text(encoding="utf-8"))
    out: dict[tuple[str, str], RestNames] = {}
    for r in rows:
        names = RestNames(
            group=str(r["group"]),
            kind=str(r["kind"]),
            plural=str(r["plural"]),
            singular=str(r["singular"]),
            short_names=tuple(str(s) for s in r.get("shortNames") or ()),
            builtin=bool(r.get("builtin", False)),
        )
        out[(names.group, names.kind)] = names
    return out


class ResourceMatchLike(Protocol):
    """What the resolver reads from a discovery match (``cluster.discovery.ResourceMatch``)."""

    @property
    def group(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def kind(self) -> str: ...


class DiscoveryLike(Protocol):
    def resolve_type(self, token: str) -> Sequence[ResourceMatchLike]: ...


@dataclass(frozen=True)
class TypeMatch:
    """A word resolved: the definition, and the served GVK when discovery gave it."""

    word: str
    entry: DefinitionEntry
    served: ResourceMatchLike | None = None


def _words_for(group: str, kind: str) -> set[str]:
    known = catalog_names().get((group, kind))
    return set(known.words()) if known is not None else plural_forms(kind)


def offline_candidates(defs: DefinitionSet, word: str) -> list[DefinitionEntry]:
    """Entries whose kind a word names by the REST-name forms (module doc, step 3)."""
    t = word.strip().lower()
    first, _, rest = t.partition(".")
    version, _, group_part = rest.partition(".")
    found: list[DefinitionEntry] = []
    for e in defs.resolvable():
        gvk = e.gvk
        assert gvk is not None
        words = _words_for(gvk.group, gvk.kind)
        if t in words:
            found.append(e)
        elif rest and first in words:
            same_group = rest == gvk.group.lower()
            same_gv = bool(group_part) and version == gvk.version and group_part == gvk.group.lower()
            core_version = not gvk.group and rest == gvk.version
            if same_group or same_gv or core_version:
                found.append(e)
    return found


def _builtin_claim(word: str) -> RestNames | None:
    """The built-in kind a bare word names, if any (kubectl's priority for the core groups)."""
    t = word.strip().lower()
    for names in catalog_names().values():
        if names.builtin and t in names.words():
            return names
    return None


def all_words(defs: DefinitionSet) -> list[str]:
    """Every word that names a covered type offline (completion and suggestions)."""
    out: set[str] = set()
    for e in defs.resolvable():
        gvk = e.gvk
        assert gvk is not None
        out.update(_words_for(gvk.group, gvk.kind))
        out.add(e.name)
    return sorted(out)


def suggestions(defs: DefinitionSet, word: str) -> list[str]:
    return difflib.get_close_matches(word.lower(), all_words(defs), n=MAX_SUGGESTIONS, cutoff=0.6)


def _forms(entries: Sequence[DefinitionEntry]) -> list[str]:
    from workload_map.definitions_source import kind_version_group

    return [kind_version_group(e.gvk) for e in entries if e.gvk is not None]


def _one(word: str, entries: Sequence[DefinitionEntry], served: ResourceMatchLike | None) -> TypeMatch:
    from workload_map.model.definition import gvk_text

    # By identity: entries are not hashable (their models hold dicts, e.g. Milvus' and Spark's).
    unique = list({id(e): e for e in entries}.values())
    if len(unique) == 1:
        return TypeMatch(word, unique[0], served)
    keys = {e.key for e in unique}
    if len(keys) == 1:
        gvk = unique[0].gvk
        assert gvk is not None
        raise DefinitionClaimedTwiceError(
            gvk_text(gvk.group, gvk.version, gvk.kind), [e.name for e in unique]
        )
    raise AmbiguousTypeWordError(word, _forms(unique))


def resolve_word(defs: DefinitionSet, word: str, discovery: DiscoveryLike | None = None) -> TypeMatch:
    """The one definition ``word`` names (module doc). Discovery errors other than "unknown"
    propagate as :class:`~workload_map.errors.ClusterError`."""
    from workload_map.errors import AmbiguousResourceTypeError, UnknownResourceTypeError
    from workload_map.model.definition import gvk_text

    by_name = defs.by_name(word)
    if by_name is not None:
        return TypeMatch(word, by_name)
    matches: Sequence[ResourceMatchLike] = ()
    if discovery is not None:
        try:
            matches = discovery.resolve_type(word)
        except (UnknownResourceTypeError, AmbiguousResourceTypeError):
            matches = ()
    if matches:
        best = matches[0]  # kubectl: the highest-priority group wins
        exact = defs.for_gvk(best.group, best.version, best.kind)
        if exact:
            return _one(word, exact, best)
        same_kind = defs.for_group_kind(best.group, best.kind)
        if same_kind:
            return _one(word, same_kind, best)
        raise NoDefinitionForTypeError(word, gvk_text(best.group, best.version, best.kind))
    builtin = _builtin_claim(word)
    candidates = offline_candidates(defs, word)
    if builtin is not None:
        owned = [
            e
            for e in candidates
            if e.gvk is not None and (e.gvk.group, e.gvk.kind) == (builtin.group, builtin.kind)
        ]
        if owned:
            return _one(word, owned, None)
        if "." not in word:
            raise NoDefinitionForTypeError(word, f"{builtin.group or 'core'}/{builtin.kind}")
    if candidates:
        return _one(word, candidates, None)
    raise UnknownTypeWordError(word, suggestions(defs, word))


def resolve_words(defs: DefinitionSet, word: str, discovery: DiscoveryLike | None = None) -> list[TypeMatch]:
    """Like :func:`resolve_word` but every covered type the word names (the REST API lists
    them all); ``[]`` for an unknown or uncovered word."""
    try:
        return [resolve_word(defs, word, discovery)]
    except AmbiguousTypeWordError:
        return [TypeMatch(word, e) for e in offline_candidates(defs, word)]
    except (UnknownTypeWordError, NoDefinitionForTypeError):
        return []


__all__ = [
    "AmbiguousTypeWordError",
    "DefinitionClaimedTwiceError",
    "NoDefinitionForTypeError",
    "RestNames",
    "TypeMatch",
    "TypeWordError",
    "UnknownTypeWordError",
    "all_words",
    "catalog_names",
    "offline_candidates",
    "plural_forms",
    "resolve_word",
    "resolve_words",
    "suggestions",
]
