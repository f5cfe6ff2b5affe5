"""API discovery and REST mapping: which resource types the server serves, and kubectl's type resolution.

Discovery reads ``/api``, ``/apis`` and every served group version (``/api/v1``, ``/apis/<g>/<v>``), 8
requests in flight. Servers that offer aggregated discovery (``apidiscovery.k8s.io/v2`` or ``v2beta1``,
Kubernetes 1.26+) answer everything in the two root requests instead.

Ceilings (a server's discovery is read whole, so a hostile one could otherwise make it endless): at
most :data:`MAX_DISCOVERY_GROUPS` API groups, :data:`MAX_DISCOVERY_GROUP_VERSIONS` group versions
(one request each), :data:`MAX_DISCOVERY_RESOURCES` resources in all and
:data:`MAX_DISCOVERY_SECONDS` for the whole discovery, and :data:`MAX_DISCOVERY_DOCUMENT_VALUES`
JSON values per group version's document (eight are read at once); past one, discovery fails
with an error naming the ceiling and the server (a group version over its ceiling counts as a
failed group, like any other broken group).

Caching: in memory per :class:`Discovery` and on disk under
``<cache root>/discovery/<sha256(server)[:16]>/discovery.json`` where the cache root is ``--cache-dir``,
else ``$XDG_CACHE_HOME/workload-map``, else ``~/.cache/workload-map``. The disk copy is trusted for
:data:`DEFAULT_TTL` (6 hours, the TTL kubectl uses for its own disk cache): CRDs installed meanwhile are
found anyway because a type that is not in a cached copy triggers one fresh discovery ("invalidate on a
miss"). A discovery that had failing groups is kept in memory but not written to disk.

Type resolution (:meth:`Discovery.resolve_type`) follows kubectl: the token is lowercased; a token with
dots is tried as ``resource.version.group`` first, then as ``resource.group``; a resource is named by its
plural, its singular (the lowercase Kind when the server leaves ``singularName`` empty) or its Kind, and
short names are used only when no full name matches. One match per API group (its preferred version
when that version serves the resource), ordered like kubectl's priority: the core group, then groups in
the server's order.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from workload_map.errors import (
    AmbiguousResourceTypeError,
    ApiError,
    ClusterError,
    NotFoundError,
    UnknownResourceTypeError,
)
from workload_map.kube.objects import split_api_version

if TYPE_CHECKING:
    from workload_map.cluster.client import Deadline, KubeClient

__all__ = [
    "DEFAULT_TTL",
    "MAX_DISCOVERY_DOCUMENT_VALUES",
    "MAX_DISCOVERY_GROUPS",
    "MAX_DISCOVERY_GROUP_VERSIONS",
    "MAX_DISCOVERY_RESOURCES",
    "MAX_DISCOVERY_SECONDS",
    "APIResource",
    "Discovery",
    "GroupInfo",
    "ResourceMatch",
    "cache_root",
    "version_priority",
]

DEFAULT_TTL = 6 * 3600.0
MAX_IN_FLIGHT = 8
CACHE_FORMAT = 1
#: A miss on an in-memory discovery younger than this does not trigger a refetch.
FRESH_ENOUGH = 30.0
#: API groups read at most (large clusters serve a few hundred).
MAX_DISCOVERY_GROUPS = 2_000
#: Group versions read at most: each is one request when discovery is not aggregated.
MAX_DISCOVERY_GROUP_VERSIONS = 4_000
#: Resources (subresources included) read at most, over every group version.
MAX_DISCOVERY_RESOURCES = 50_000
#: Seconds one whole discovery may take (its requests in parallel included).
MAX_DISCOVERY_SECONDS = 120.0
#: JSON values one group version's document may hold (about 20 per resource: 12,000 resources):
#: discovery reads eight at once, so each gets a ceiling of its own, under the client's.
MAX_DISCOVERY_DOCUMENT_VALUES = 250_000
_DOCUMENT_VALUES = (MAX_DISCOVERY_DOCUMENT_VALUES, "MAX_DISCOVERY_DOCUMENT_VALUES")
_AGGREGATED_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)


@dataclass(frozen=True)
class APIResource:
    """One resource type served at one group version."""

    group: str
    version: str
    kind: str
    name: str
    singular: str
    namespaced: bool
    verbs: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    #: True when ``version`` is the group's preferred version.
    preferred: bool = False

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    api_version = group_version

    @property
    def qualified_name(self) -> str:
        """``jobsets.jobset.x-k8s.io`` (``pods`` for the core group)."""
        return f"{self.name}.{self.group}" if self.group else self.name

    @property
    def gvk(self) -> str:
        """``JobSet.v1alpha2.jobset.x-k8s.io`` (``Pod.v1`` for the core group), kubectl's notation."""
        return f"{self.kind}.{self.version}.{self.group}" if self.group else f"{self.kind}.{self.version}"

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        """The REST path; ``namespace`` is ignored for cluster-scoped resources, ``None`` = all namespaces."""
        from workload_map.cluster.client import api_path

        return api_path(
            self.group_version, self.name, namespace if self.namespaced else None, name, subresource
        )

    def names(self) -> tuple[str, ...]:
        return (self.name, self.singular, self.kind.lower())


ResourceMatch = APIResource


@dataclass(frozen=True)
class GroupInfo:
    name: str
    versions: tuple[str, ...]
    preferred_version: str


_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key for Kubernetes version ordering (``sorted(..., key=version_priority)``: most stable first):
    GA by major descending, then beta, then alpha, then anything else alphabetically."""
    m = _VERSION_RE.match(version)
    if not m:
        return (3, 0, 0, version)
    major = int(m.group(1))
    level = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    minor = int(m.group(3) or 0)
    return (level, -major, -minor, version)


def cache_root(cache_dir: str | None = None) -> Path:
    """``--cache-dir`` > ``$XDG_CACHE_HOME/workload-map`` > ``~/.cache/workload-map``."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    from workload_map.model.cachefile import cache_root as user_cache_root

    return user_cache_root()


class _Budget:
    """How many groups, group versions and resources one discovery has read so far; thread-safe."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._lock = threading.Lock()
        self._used = {"groups": 0, "versions": 0, "resources": 0}

    def take(self, what: str, count: int) -> None:
        limit, name, text = _CEILINGS[what]
        with self._lock:
            self._used[what] += count
            used = self._used[what]
        if used > limit:
            raise ApiError(
                200,
                "DiscoveryTooLarge",
                f"discovery on {self.server}: the API server lists more than {limit} {text} ({name})",
            )


_CEILINGS = {
    "groups": (MAX_DISCOVERY_GROUPS, "MAX_DISCOVERY_GROUPS", "API groups"),
    "versions": (MAX_DISCOVERY_GROUP_VERSIONS, "MAX_DISCOVERY_GROUP_VERSIONS", "group versions"),
    "resources": (MAX_DISCOVERY_RESOURCES, "MAX_DISCOVERY_RESOURCES", "resources"),
}


def _items(doc: Mapping[str, Any], key: str) -> list[Any]:
    """``doc[key]`` when it is a list, else ``[]`` (a hostile document may hold anything)."""
    value = doc.get(key)
    return value if isinstance(value, list) else []


def _parse_resource_list(
    group: str, version: str, doc: dict[str, Any], preferred: bool, budget: _Budget | None = None
) -> list[APIResource]:
    subs: dict[str, list[str]] = {}
    mains: list[dict[str, Any]] = []
    rows = [r for r in _items(doc, "resources") if isinstance(r, dict)]
    if budget is not None:
        budget.take("resources", len(rows))
    for r in rows:
        name = r.get("name", "")
        if "/" in name:
            parent, sub = name.split("/", 1)
            subs.setdefault(parent, []).append(sub)
        else:
            mains.append(r)
    out = []
    for r in mains:
        kind = str(r.get("kind", ""))
        name = str(r["name"])
        out.append(
            APIResource(
                group=group,
                version=version,
                kind=kind,
                name=name,
                singular=str(r.get("singularName") or kind.lower()),
                namespaced=bool(r.get("namespaced")),
                verbs=tuple(r.get("verbs") or ()),
                short_names=tuple(r.get("shortNames") or ()),
                categories=tuple(r.get("categories") or ()),
                subresources=tuple(subs.get(name, ())),
                preferred=preferred,
            )
        )
    return out


def _parse_aggregated(
    doc: dict[str, Any], budget: _Budget | None = None
) -> tuple[list[GroupInfo], dict[str, list[APIResource]]]:
    groups: list[GroupInfo] = []
    resources: dict[str, list[APIResource]] = {}
    items = [i for i in _items(doc, "items") if isinstance(i, dict)]
    if budget is not None:
        budget.take("groups", len(items))
    for item in items:
        gname = str((item.get("metadata") or {}).get("name") or "")
        served = [v for v in _items(item, "versions") if isinstance(v, dict)]
        versions = [str(v.get("version")) for v in served if v.get("version")]
        if not versions:
            continue
        if budget is not None:
            budget.take("versions", len(versions))
        groups.append(GroupInfo(gname, tuple(versions), versions[0]))
        for v in served:
            version = str(v.get("version"))
            gv = f"{gname}/{version}" if gname else version
            rows = []
            listed = [r for r in _items(v, "resources") if isinstance(r, dict)]
            if budget is not None:
                budget.take("resources", len(listed))
            for r in listed:
                kind = str((r.get("responseKind") or {}).get("kind") or "")
                rows.append(
                    APIResource(
                        group=gname,
                        version=version,
                        kind=kind,
                        name=str(r.get("resource")),
                        singular=str(r.get("singularResource") or kind.lower()),
                        namespaced=r.get("scope") == "Namespaced",
                        verbs=tuple(r.get("verbs") or ()),
                        short_names=tuple(r.get("shortNames") or ()),
                        categories=tuple(r.get("categories") or ()),
                        subresources=tuple(str(s.get("subresource")) for s in r.get("subresources") or ()),
                        preferred=version == versions[0],
                    )
                )
            resources[gv] = rows
    return groups, resources


def _to_json(res: APIResource) -> dict[str, Any]:
    return {
        "group": res.group,
        "version": res.version,
        "kind": res.kind,
        "name": res.name,
        "singular": res.singular,
        "namespaced": res.namespaced,
        "verbs": list(res.verbs),
        "shortNames": list(res.short_names),
        "categories": list(res.categories),
        "subresources": list(res.subresources),
        "preferred": res.preferred,
    }


def _from_json(d: dict[str, Any]) -> APIResource:
    return APIResource(
        group=d["group"],
        version=d["version"],
        kind=d["kind"],
        name=d["name"],
        singular=d["singular"],
        namespaced=bool(d["namespaced"]),
        verbs=tuple(d.get("verbs") or ()),
        short_names=tuple(d.get("shortNames") or ()),
        categories=tuple(d.get("categories") or ()),
        subresources=tuple(d.get("subresources") or ()),
        preferred=bool(d.get("preferred")),
    )


@dataclass
class _Snapshot:
    groups: list[GroupInfo]
    resources: dict[str, list[APIResource]]
    fetched_at: float
    from_disk: bool
    failed: dict[str, str] = field(default_factory=dict)


class Discovery:
    """Discovery for one client: resource types, kubectl type resolution, and kind -> resource mapping.

    ``cache_dir=False`` disables the disk cache; ``None`` uses :func:`cache_root` with the client's
    ``--cache-dir``. Thread-safe.
    """

    def __init__(
        self,
        client: KubeClient,
        *,
        cache_dir: str | Path | bool | None = None,
        ttl: float = DEFAULT_TTL,
        max_workers: int = MAX_IN_FLIGHT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.ttl = ttl
        self.max_workers = max_workers
        self._clock = clock
        self._lock = threading.RLock()
        self._snapshot: _Snapshot | None = None
        self._partial: dict[str, list[APIResource]] = {}
        #: Group versions read by :meth:`served_at` (long-running processes): (time, resources).
        self._timed: dict[str, tuple[float, list[APIResource]]] = {}
        if cache_dir is False:
            self.cache_file: Path | None = None
        else:
            root = cache_root(
                str(cache_dir) if isinstance(cache_dir, (str, Path)) else client.config.cache_dir
            )
            digest = hashlib.sha256(client.server.encode()).hexdigest()[:16]
            self.cache_file = root / "discovery" / digest / "discovery.json"
        #: Requests made to the server (tests and diagnostics).
        self.fetches = 0

    # ------------------------------------------------------------------------------ loading

    @property
    def failed_groups(self) -> dict[str, str]:
        """Group versions whose discovery failed in the last fetch, with the error text."""
        return dict(self._snapshot.failed) if self._snapshot else {}

    def invalidate(self) -> None:
        with self._lock:
            self._snapshot = None
            self._partial.clear()
            if self.cache_file is not None:
                with contextlib.suppress(OSError):
                    self.cache_file.unlink()

    def _load(self, *, fresh: bool = False) -> _Snapshot:
        with self._lock:
            if not fresh and self._snapshot is not None:
                return self._snapshot
            if not fresh:
                disk = self._read_cache()
                if disk is not None:
                    self._snapshot = disk
                    return disk
            snap = self._fetch()
            self._snapshot = snap
            if not snap.failed:
                self._write_cache(snap)
            return snap

    def refresh(self) -> None:
        """Fetch everything from the server again (and rewrite the disk cache)."""
        self._load(fresh=True)

    def revalidate(self, covered: Iterable[tuple[str, str]]) -> bool:
        """Make sure a copy read from disk (or older than :data:`FRESH_ENOUGH`) is not hiding a
        covered ``(group, kind)`` installed since: one ``/apis`` request; a covered group whose
        versions changed, or a served group that lacks a covered kind, means a full refresh.
        True when it refreshed. A copy fetched in this process just now is trusted as is."""
        snap = self._load()
        if not snap.from_disk and self._clock() - snap.fetched_at <= FRESH_ENOUGH:
            return False
        wanted: dict[str, set[str]] = {}
        for group, kind in covered:
            wanted.setdefault(group, set()).add(kind.lower())
        apis, aggregated = self._get_root("/apis")
        if aggregated:
            self.refresh()
            return True
        now_groups = {g.name: g.versions for g in _group_list(apis, _Budget(self.client.server))}
        had = {g.name: g.versions for g in snap.groups}
        if any(now_groups.get(g) != had.get(g) for g in wanted if g):
            self.refresh()
            return True

        def served_kinds(group: str) -> set[str]:
            return {
                r.kind.lower()
                for v in had.get(group, ())
                for r in snap.resources.get(f"{group}/{v}" if group else v, ())
            }

        # A covered kind missing from a group the server serves: a CRD added to a known group.
        stale = [g for g, kinds in wanted.items() if g in had and not kinds <= served_kinds(g)]
        if not stale:
            return False
        self.refresh()
        return True

    def _read_cache(self) -> _Snapshot | None:
        if self.cache_file is None:
            return None
        try:
            doc = orjson.loads(self.cache_file.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        try:
            if doc.get("format") != CACHE_FORMAT or doc.get("server") != self.client.server:
                return None
            fetched = float(doc["fetchedAt"])
            if self._clock() - fetched > self.ttl or fetched > self._clock() + 60:
                return None
            groups = [
                GroupInfo(g["name"], tuple(g["versions"]), g["preferredVersion"]) for g in doc["groups"]
            ]
            resources = {gv: [_from_json(r) for r in rows] for gv, rows in doc["resources"].items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return _Snapshot(groups, resources, fetched, from_disk=True)

    def _write_cache(self, snap: _Snapshot) -> None:
        if self.cache_file is None:
            return
        doc = {
            "format": CACHE_FORMAT,
            "server": self.client.server,
            "fetchedAt": snap.fetched_at,
            "groups": [
                {"name": g.name, "versions": list(g.versions), "preferredVersion": g.preferred_version}
                for g in snap.groups
            ],
            "resources": {gv: [_to_json(r) for r in rows] for gv, rows in snap.resources.items()},
        }
        try:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".discovery-", dir=self.cache_file.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(orjson.dumps(doc))
            os.replace(tmp, self.cache_file)
        except OSError:
            pass  # a read-only home must not break the CLI

    def _get_root(self, path: str, until: Deadline | None = None) -> tuple[dict[str, Any], bool]:
        self.fetches += 1
        doc, content_type = self.client.get_document(path, accept=_AGGREGATED_ACCEPT, until=until)
        return doc, "apidiscovery.k8s.io" in content_type

    def _deadline(self) -> Deadline:
        return self.client.deadline(
            MAX_DISCOVERY_SECONDS,
            f"discovery took more than {MAX_DISCOVERY_SECONDS:g}s (MAX_DISCOVERY_SECONDS) and was stopped",
        )

    def _fetch(self) -> _Snapshot:
        now = self._clock()
        until = self._deadline()
        budget = _Budget(self.client.server)
        core, core_agg = self._get_root("/api", until)
        apis, apis_agg = self._get_root("/apis", until)
        groups: list[GroupInfo] = []
        resources: dict[str, list[APIResource]] = {}
        todo: list[tuple[str, str, bool]] = []
        if core_agg:
            g, r = _parse_aggregated(core, budget)
            groups += g
            resources.update(r)
        else:
            versions = tuple(str(v) for v in _items(core, "versions"))
            if versions:
                budget.take("versions", len(versions))
                groups.append(GroupInfo("", versions, versions[0]))
                todo += [("", v, v == versions[0]) for v in versions]
        if apis_agg:
            g, r = _parse_aggregated(apis, budget)
            groups += g
            resources.update(r)
        else:
            for info in _group_list(apis, budget):
                groups.append(info)
                todo += [(info.name, v, v == info.preferred_version) for v in info.versions]
        failed: dict[str, str] = {}
        if todo:
            results = self._fetch_group_versions(todo, until, budget)
            for (group, version, _), result in zip(todo, results, strict=True):
                gv = f"{group}/{version}" if group else version
                if isinstance(result, Exception):
                    failed[gv] = str(result)
                else:
                    resources[gv] = result
        return _Snapshot(groups, resources, now, from_disk=False, failed=failed)

    def _fetch_one(
        self,
        group: str,
        version: str,
        preferred: bool,
        until: Deadline | None = None,
        budget: _Budget | None = None,
    ) -> list[APIResource]:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        self.fetches += 1
        doc, _ = self.client.get_document(path, until=until, values=_DOCUMENT_VALUES)
        return _parse_resource_list(group, version, doc, preferred, budget)

    def _fetch_served(self, api_version: str) -> list[APIResource]:
        """One group version's resources from the server (``[]`` when it is not served)."""
        group, version = split_api_version(api_version)
        try:
            return self._fetch_one(group, version, False)
        except NotFoundError:
            return []

    def _fetch_group_versions(
        self, todo: list[tuple[str, str, bool]], until: Deadline, budget: _Budget
    ) -> list[list[APIResource] | Exception]:
        def one(item: tuple[str, str, bool]) -> list[APIResource] | Exception:
            try:
                return self._fetch_one(*item, until, budget)
            except ApiError as exc:  # one broken aggregated API must not hide the rest
                if exc.reason == "DiscoveryTooLarge":
                    raise
                return exc

        if len(todo) == 1 or self.max_workers <= 1:
            return [one(t) for t in todo]
        pool = ThreadPoolExecutor(
            max_workers=min(self.max_workers, len(todo)), thread_name_prefix="discovery"
        )
        try:
            results = list(pool.map(one, todo))
        except BaseException:
            # A ceiling, an interrupt: the requests not yet started are dropped, not waited for.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return results

    # ------------------------------------------------------------------------------ queries

    def groups(self) -> list[GroupInfo]:
        return list(self._load().groups)

    def resources(self) -> list[APIResource]:
        """Every resource type at every served version, in priority order."""
        snap = self._load()
        return list(self._ordered(snap))

    @staticmethod
    def _ordered(snap: _Snapshot) -> Iterable[APIResource]:
        for g in snap.groups:
            versions = [g.preferred_version] + [v for v in g.versions if v != g.preferred_version]
            for v in versions:
                gv = f"{g.name}/{v}" if g.name else v
                yield from snap.resources.get(gv, ())

    def preferred_version(self, group: str) -> str | None:
        for g in self._load().groups:
            if g.name == group:
                return g.preferred_version
        return None

    def served_versions(self, group: str, kind: str) -> list[str]:
        """Versions of ``group`` that serve ``kind`` (case-insensitive), in the server's preference order."""
        kind_l = kind.lower()
        snap = self._load()
        out = []
        for g in snap.groups:
            if g.name != group:
                continue
            for v in g.versions:
                rows = snap.resources.get(f"{group}/{v}" if group else v, ())
                if any(r.kind.lower() == kind_l for r in rows):
                    out.append(v)
        return out

    def _match(self, snap: _Snapshot, token: str) -> list[APIResource]:
        ordered = list(self._ordered(snap))
        if "." in token:
            parts = token.split(".", 2)
            if len(parts) == 3:
                res, ver, grp = parts
                hits = [r for r in ordered if r.group == grp and r.version == ver and res in r.names()]
                if not hits:
                    hits = [
                        r for r in ordered if r.group == grp and r.version == ver and res in r.short_names
                    ]
                if hits:
                    return hits[:1]
            res, grp = token.split(".", 1)
            hits = [r for r in ordered if r.group == grp and res in r.names()]
            if not hits:
                hits = [r for r in ordered if r.group == grp and res in r.short_names]
            return hits[:1]
        hits = [r for r in ordered if token in r.names()]
        if not hits:
            hits = [r for r in ordered if token in r.short_names]
        per_group: dict[str, APIResource] = {}
        for r in hits:
            per_group.setdefault(r.group, r)  # first = preferred version (ordered puts it first)
        return list(per_group.values())

    def resolve_type(self, token: str) -> list[ResourceMatch]:
        """kubectl's type resolution: all matches, one per API group, best first; ``[]`` when unknown.

        A miss on data read from the disk cache (or fetched earlier by this process) triggers one fresh
        discovery, so a CRD installed since is found.
        """
        t = token.strip().lower()
        if not t:
            return []
        snap = self._load()
        hits = self._match(snap, t)
        if not hits and (snap.from_disk or self._clock() - snap.fetched_at > FRESH_ENOUGH):
            snap = self._load(fresh=True)
            hits = self._match(snap, t)
        return hits

    def resolve_one(self, token: str, *, strict: bool = False) -> ResourceMatch:
        """The match for ``token``: like kubectl, the highest-priority group wins when several groups
        serve the name (``events`` -> core ``v1``); with ``strict`` that is an
        AmbiguousResourceTypeError instead. UnknownResourceTypeError when nothing matches."""
        hits = self.resolve_type(token)
        if not hits:
            failed = self.failed_groups
            extra = f" (discovery failed for {', '.join(sorted(failed))})" if failed else ""
            raise UnknownResourceTypeError(
                token, f'the server doesn\'t have a resource type "{token}"{extra}'
            )
        if strict and len(hits) > 1:
            raise AmbiguousResourceTypeError(token, [f"{h.name}.{h.version}.{h.group}" for h in hits])
        return hits[0]

    # ------------------------------------------------------------------------------ REST mapping

    def resources_for(self, api_version: str) -> list[APIResource]:
        """The resources of one group version (``apps/v1``, ``v1``); ``[]`` when it is not served.

        Uses the full discovery when it is already loaded; otherwise fetches just this group version.
        """
        with self._lock:
            if self._snapshot is not None and api_version in self._snapshot.resources:
                return self._snapshot.resources[api_version]
            if api_version in self._partial:
                return self._partial[api_version]
        if self._snapshot is None:
            disk = self._read_cache()
            if disk is not None and api_version in disk.resources:
                with self._lock:
                    self._snapshot = disk
                return disk.resources[api_version]
        rows = self._fetch_served(api_version)
        with self._lock:
            self._partial[api_version] = rows
        return rows

    # ------------------------------------------------------------------------- long-running use

    def served_at(self, api_version: str, *, max_age: float) -> list[APIResource]:
        """The resources of one group version, read again when the copy is older than
        ``max_age`` seconds (``[]`` when not served): how the operator and the exporter follow
        CRD changes without keeping discovery caches of their own."""
        now = self._clock()
        with self._lock:
            hit = self._timed.get(api_version)
            if hit is not None and now - hit[0] < max_age:
                return hit[1]
        rows = self._fetch_served(api_version)
        with self._lock:
            self._timed[api_version] = (now, rows)
        return rows

    def forget(self) -> None:
        """Drop what :meth:`served_at` remembers (e.g. when CRDs changed)."""
        with self._lock:
            self._timed.clear()

    def group_versions(self) -> dict[str, list[str]]:
        """Group -> served versions, read from the server now (core group ``""``)."""
        core, _ = self._get_root("/api")
        apis, aggregated = self._get_root("/apis")
        out: dict[str, list[str]] = {"": [str(v) for v in _items(core, "versions") or ["v1"]]}
        budget = _Budget(self.client.server)
        groups = _parse_aggregated(apis, budget)[0] if aggregated else _group_list(apis, budget)
        for g in groups:
            out[g.name] = list(g.versions)
        return out

    def resource_for_kind(self, api_version: str, kind: str) -> APIResource | None:
        """RESTMapper: the resource serving ``kind`` at ``api_version`` (for ownerReferences), or None."""
        for r in self.resources_for(api_version):
            if r.kind == kind:
                return r
        with self._lock:
            stale = (
                self._snapshot is not None and self._snapshot.from_disk
            ) and api_version not in self._partial
        if stale:
            rows = self._fetch_served(api_version)
            with self._lock:
                self._partial[api_version] = rows
                if self._snapshot is not None:
                    self._snapshot.resources[api_version] = rows
            for r in rows:
                if r.kind == kind:
                    return r
        return None


def _group_list(apis: Mapping[str, Any], budget: _Budget) -> list[GroupInfo]:
    """The groups of an ``APIGroupList`` (``/apis``), within the discovery ceilings."""
    items = [g for g in _items(apis, "groups") if isinstance(g, dict)]
    budget.take("groups", len(items))
    out = []
    for item in items:
        versions = tuple(
            str(v["version"]) for v in _items(item, "versions") if isinstance(v, dict) and v.get("version")
        )
        if not versions:
            continue
        budget.take("versions", len(versions))
        preferred = str((item.get("preferredVersion") or {}).get("version") or versions[0])
        out.append(GroupInfo(str(item.get("name") or ""), versions, preferred))
    return out


def discovery_error(token: str, exc: ClusterError) -> str:
    """The spec's ``discover "<res>": ...`` wording for discovery errors other than no-match."""
    return f'discover "{token}": {exc}'
