"""A thread-based informer: list, then watch, into an in-memory store, with event handlers.

Lifecycle of the informer thread (client-go's reflector, simplified):

1. **List** the collection (paged, ``limit`` = ``page_size``), replace the store with the result
   and tell the handlers the *difference* with the previous store: ``on_add`` for new keys,
   ``on_update`` for changed ones (resourceVersion differs), ``on_delete`` for keys that vanished
   (e.g. deleted while the watch was down). A key whose object was deleted and recreated (another
   uid) is reported as delete + add. Nothing is lost and nothing reported twice.
2. **Watch** from the list's resourceVersion with ``allowWatchBookmarks`` and a server-side
   ``timeoutSeconds`` (jittered). BOOKMARK events only advance the resourceVersion.
3. When the server ends the watch normally: watch again from the last resourceVersion.
4. On ``410 Gone`` (too old resourceVersion, HTTP or ERROR event): go back to 1 (full relist).
5. On connection errors and other API errors (the API server may be restarting): back off
   exponentially with jitter (``backoff_initial`` .. ``backoff_max``) and watch again from the last
   resourceVersion (a 410 then leads to a relist); a failing list is retried the same way.

Handlers run on the informer thread and must be quick: hand work to a
:class:`~workload_map.runtime.workqueue.WorkQueue`. Objects are the decoded dicts from the
API (by default without ``metadata.managedFields``) and are shared with the store: do not
mutate them.

:meth:`Informer.stop` interrupts a blocked watch read (it shuts the socket down) so the thread
ends promptly.
"""

from __future__ import annotations

import builtins
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from workload_map.errors import ClusterError, GoneError

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient, WatchEvent
    from workload_map.cluster.watch import WatchStream

__all__ = [
    "EventHandler",
    "Informer",
    "InformerStats",
    "ObjectEventHandler",
    "ObjectInformer",
    "ObjectKey",
    "ObjectStore",
    "SharedIndex",
    "Store",
    "Stored",
    "object_key",
    "strip_managed_fields",
]

log = logging.getLogger(__name__)

#: ``(namespace, name)``; namespace is ``""`` for cluster-scoped objects.
ObjectKey = tuple[str, str]
Obj = dict[str, Any]
#: What a store may keep: the decoded object, or any mapping an informer's transform made of it
#: (the exporter keeps pods in a compact form, see workload_map.exporter.compact).
Stored = Mapping[str, Any]
T = TypeVar("T", bound=Stored)


def object_key(obj: Mapping[str, Any]) -> ObjectKey:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return ("", "")
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _rv(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""


def _uid(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("uid") or "") if isinstance(meta, Mapping) else ""


def strip_managed_fields(obj: Obj) -> Obj:
    """The default transform: drop ``metadata.managedFields`` (large and never needed here)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


@dataclass
class ObjectEventHandler(Generic[T]):
    """Callbacks; any may be ``None``. ``on_delete`` receives the last known state."""

    on_add: Callable[[T], None] | None = None
    on_update: Callable[[T, T], None] | None = None
    on_delete: Callable[[T], None] | None = None


class EventHandler(ObjectEventHandler[Obj]):
    """The callbacks of an :class:`Informer` (decoded dicts)."""


class SharedIndex:
    """One secondary index over several stores: ``fn(obj)`` values -> the objects giving them,
    whichever attached store holds them, each with its store's tag. The exporter's owner-UID index
    over every informer is one: a workload's pods are then found with one lookup per level of its
    owner tree instead of one per store and level.

    Kept up to date by the stores (:meth:`Store.attach`) under their own locks; its lock is always
    taken after a store's, never before."""

    def __init__(self, fn: Callable[[Stored], Iterable[str]]) -> None:
        self.fn = fn
        self._lock = threading.Lock()
        self._index: dict[str, dict[tuple[ObjectStore[Any], ObjectKey], Stored]] = {}

    def get(self, value: str) -> builtins.list[tuple[str, Stored]]:
        """``(store tag, object)`` for every object giving ``value``."""
        with self._lock:
            found = self._index.get(value)
            return [(store.tag, obj) for (store, _key), obj in found.items()] if found else []

    def __len__(self) -> int:
        """How many values are indexed."""
        with self._lock:
            return len(self._index)

    def _add(self, store: ObjectStore[Any], key: ObjectKey, obj: Stored) -> None:
        entry = (store, key)
        with self._lock:
            for value in self.fn(obj):
                self._index.setdefault(value, {})[entry] = obj

    def _remove(self, store: ObjectStore[Any], key: ObjectKey, obj: Stored) -> None:
        entry = (store, key)
        with self._lock:
            for value in self.fn(obj):
                found = self._index.get(value)
                if found is not None:
                    found.pop(entry, None)
                    if not found:
                        del self._index[value]


class ObjectStore(Generic[T]):
    """A thread-safe map ``(namespace, name) -> object`` with optional secondary indexes, its own
    and shared ones (:class:`SharedIndex`). ``tag`` names the store in a shared index."""

    def __init__(self, tag: str = "") -> None:
        self.tag = tag
        self._lock = threading.RLock()
        self._items: dict[ObjectKey, T] = {}
        self._indexers: dict[str, Callable[[T], Iterable[str]]] = {}
        self._indexes: dict[str, dict[str, set[ObjectKey]]] = {}
        self._shared: builtins.list[SharedIndex] = []

    def attach(self, index: SharedIndex, tag: str | None = None) -> None:
        """Keep ``index`` up to date with this store's objects from now on (the present ones are
        added at once), under ``tag`` when given."""
        with self._lock:
            if tag is not None:
                self.tag = tag
            if index in self._shared:
                return
            self._shared.append(index)
            for key, obj in self._items.items():
                index._add(self, key, obj)

    def detach(self, index: SharedIndex) -> None:
        """Remove this store's objects from ``index`` and stop updating it (the store is retired)."""
        with self._lock:
            if index not in self._shared:
                return
            self._shared.remove(index)
            for key, obj in self._items.items():
                index._remove(self, key, obj)

    def add_indexer(self, name: str, fn: Callable[[T], Iterable[str]]) -> None:
        """Index objects by ``fn(obj)`` values (e.g. uid); query with :meth:`by_index`."""
        with self._lock:
            self._indexers[name] = fn
            index: dict[str, set[ObjectKey]] = {}
            for key, obj in self._items.items():
                for value in fn(obj):
                    index.setdefault(value, set()).add(key)
            self._indexes[name] = index

    def _unindex(self, key: ObjectKey, obj: T) -> None:
        for shared in self._shared:
            shared._remove(self, key, obj)
        for name, fn in self._indexers.items():
            index = self._indexes[name]
            for value in fn(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]

    def _index(self, key: ObjectKey, obj: T) -> None:
        for shared in self._shared:
            shared._add(self, key, obj)
        for name, fn in self._indexers.items():
            index = self._indexes[name]
            for value in fn(obj):
                index.setdefault(value, set()).add(key)

    def put(self, obj: T) -> T | None:
        """Store ``obj``; return the previous object under its key."""
        key = object_key(obj)
        with self._lock:
            old = self._items.get(key)
            indexed = bool(self._indexers or self._shared)
            if old is not None and indexed:
                self._unindex(key, old)
            self._items[key] = obj
            if indexed:
                self._index(key, obj)
            return old

    def remove(self, key: ObjectKey) -> T | None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None and (self._indexers or self._shared):
                self._unindex(key, old)
            return old

    def get(self, namespace: str, name: str) -> T | None:
        with self._lock:
            return self._items.get((namespace, name))

    def get_key(self, key: ObjectKey) -> T | None:
        with self._lock:
            return self._items.get(key)

    def by_index(self, name: str, value: str) -> builtins.list[T]:
        with self._lock:
            keys = self._indexes.get(name, {}).get(value, ())
            return [self._items[k] for k in keys]

    def list(self) -> builtins.list[T]:
        with self._lock:
            return builtins.list(self._items.values())

    def keys(self) -> builtins.list[ObjectKey]:
        with self._lock:
            return builtins.list(self._items)

    def snapshot(self) -> dict[ObjectKey, T]:
        with self._lock:
            return dict(self._items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __iter__(self) -> Iterator[ObjectKey]:
        return iter(self.keys())

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items


class Store(ObjectStore[Obj]):
    """A store of decoded dicts (what an :class:`Informer` keeps)."""


@dataclass
class InformerStats:
    """Counters for diagnostics and tests."""

    lists: int = 0
    relists_after_gone: int = 0
    watches: int = 0
    watch_errors: int = 0
    list_errors: int = 0
    events: int = 0
    bookmarks: int = 0
    last_error: str | None = None
    errors_by_type: dict[str, int] = field(default_factory=dict)


class _Stopped(Exception):
    pass


def _keep(obj: Obj) -> Obj:
    return obj


InformerT = TypeVar("InformerT", bound="ObjectInformer[Any]")


class ObjectInformer(Generic[T]):
    """List + watch one collection path (``/api/v1/pods``, ``/apis/g/v/namespaces/ns/plural``).

    ``resource`` is a display name (metrics, logs). ``watch_timeout`` is the server-side watch
    length in seconds (each watch gets up to +50% jitter). ``transform`` is applied to every object
    before it is stored: it may return the object, a new dict or any other mapping (what the store
    and the handlers then see), or ``None`` to not keep the object: it is then left out of the
    store, or removed with a delete event when it was there. :class:`Informer` is the one for
    dicts (its default transform: :func:`strip_managed_fields`).
    """

    def __init__(
        self,
        client: KubeClient,
        path: str,
        *,
        resource: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        watch_timeout: int = 300,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        transform: Callable[[Obj], T | None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.path = path
        self.resource = resource or path
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.page_size = page_size
        self.watch_timeout = max(1, int(watch_timeout))
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.transform = transform
        self._clock = clock
        self.store: ObjectStore[T] = ObjectStore()
        self.stats = InformerStats()
        self._handlers: list[ObjectEventHandler[T]] = []
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._thread: threading.Thread | None = None
        self._stream: WatchStream | None = None
        self._stream_lock = threading.Lock()
        self._resource_version: str | None = None
        #: Wall-clock time of the last complete list (``None`` before the first).
        self.last_sync_time: float | None = None
        #: Wall-clock time of the last contact with fresh data: a list, a watch event or bookmark.
        self.last_event_time: float | None = None

    # ------------------------------------------------------------------------------ public API

    def add_handler(self, handler: ObjectEventHandler[T], *, replay: bool = True) -> None:
        """Register ``handler``. With ``replay`` (and the store already filled), it first gets
        ``on_add`` for every stored object (called on the caller's thread)."""
        self._handlers.append(handler)
        if replay and handler.on_add is not None:
            for obj in self.store.list():
                self._call(handler.on_add, obj)

    def start(self: InformerT) -> InformerT:
        if self._thread is not None:
            raise RuntimeError("informer already started")
        self._thread = threading.Thread(target=self._run, name=f"informer:{self.resource}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread (interrupting a watch in progress) and wait up to ``timeout`` seconds."""
        self._stop.set()
        self._interrupt()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def has_synced(self) -> bool:
        """True once the first list has been stored and its events delivered."""
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    @property
    def resource_version(self) -> str | None:
        return self._resource_version

    # --------------------------------------------------------------------------------- internals

    def _call(self, fn: Callable[..., None], *args: T) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("informer %s: event handler failed", self.resource)

    def _emit_add(self, obj: T) -> None:
        for h in self._handlers:
            if h.on_add is not None:
                self._call(h.on_add, obj)

    def _emit_update(self, old: T, new: T) -> None:
        for h in self._handlers:
            if h.on_update is not None:
                self._call(h.on_update, old, new)

    def _emit_delete(self, obj: T) -> None:
        for h in self._handlers:
            if h.on_delete is not None:
                self._call(h.on_delete, obj)

    def _note_error(self, exc: BaseException) -> None:
        name = type(exc).__name__
        self.stats.errors_by_type[name] = self.stats.errors_by_type.get(name, 0) + 1
        self.stats.last_error = f"{name}: {exc}"

    def _sleep(self, seconds: float) -> None:
        if self._stop.wait(seconds):
            raise _Stopped

    def _backoff(self, failures: int) -> float:
        cap = min(self.backoff_max, self.backoff_initial * (2 ** max(0, failures - 1)))
        return random.uniform(cap / 2, cap)

    def _run(self) -> None:
        failures = 0
        need_list = True
        try:
            while not self._stop.is_set():
                if need_list:
                    try:
                        self._list()
                    except ClusterError as exc:
                        if self._stop.is_set():
                            return
                        failures += 1
                        self.stats.list_errors += 1
                        self._note_error(exc)
                        log.info("informer %s: list failed (%s); retrying", self.resource, exc)
                        self._sleep(self._backoff(failures))
                        continue
                    need_list = False
                    failures = 0
                try:
                    self._watch()
                    failures = 0  # a normal end of the watch: watch again at once
                except GoneError as exc:
                    self.stats.relists_after_gone += 1
                    self._note_error(exc)
                    log.info("informer %s: %s; listing again", self.resource, exc)
                    need_list = True
                except (ClusterError, OSError, ValueError) as exc:
                    if self._stop.is_set():
                        return
                    failures += 1
                    self.stats.watch_errors += 1
                    self._note_error(exc)
                    log.info("informer %s: watch failed (%s); reconnecting", self.resource, exc)
                    self._sleep(self._backoff(failures))
        except _Stopped:
            return
        except Exception:  # never die silently: log and let has_synced/alive tell the story
            log.exception("informer %s: unexpected failure; the informer thread ends", self.resource)

    def _list(self) -> None:
        fresh: dict[ObjectKey, T] = {}
        rv: str | None = None
        for page in self.client.list(
            self.path,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            limit=self.page_size,
        ):
            if self._stop.is_set():
                raise _Stopped
            for item in page["items"]:
                if not isinstance(item, dict):
                    continue
                obj = self.transform(item)
                if obj is not None:  # None: the caller does not keep this object
                    fresh[object_key(obj)] = obj
            page_rv = (page.get("metadata") or {}).get("resourceVersion")
            if page_rv:
                rv = str(page_rv)
        self.stats.lists += 1
        self._replace(fresh)
        self._resource_version = rv
        now = self._clock()
        self.last_sync_time = now
        self.last_event_time = now
        self._synced.set()

    def _replace(self, fresh: dict[ObjectKey, T]) -> None:
        """Swap the store's contents for ``fresh`` and emit the difference."""
        old = self.store.snapshot()
        for key, obj in old.items():
            if key not in fresh:
                self.store.remove(key)
                self._emit_delete(obj)
        for key, obj in fresh.items():
            prev = old.get(key)
            if prev is None:
                self.store.put(obj)
                self._emit_add(obj)
            elif _uid(prev) != _uid(obj):
                self.store.remove(key)
                self._emit_delete(prev)
                self.store.put(obj)
                self._emit_add(obj)
            elif _rv(prev) != _rv(obj):
                self.store.put(obj)
                self._emit_update(prev, obj)

    def _interrupt(self) -> None:
        """Break a blocked watch read (the stream shuts its connection down)."""
        with self._stream_lock:
            stream = self._stream
        if stream is not None:
            stream.close()

    def _watch(self) -> None:
        timeout = int(self.watch_timeout * (1 + random.random() * 0.5))
        self.stats.watches += 1
        stream = self.client.open_watch(
            self.path,
            resource_version=self._resource_version,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            timeout_seconds=timeout,
            allow_bookmarks=True,
        )
        with self._stream_lock:
            self._stream = stream
        try:
            if self._stop.is_set():
                raise _Stopped
            for event in stream.events():
                self._handle_event(event)
        except ClusterError:
            if self._stop.is_set():
                raise _Stopped from None
            raise
        finally:
            with self._stream_lock:
                self._stream = None
            stream.close()
        if self._stop.is_set():
            raise _Stopped

    def _handle_event(self, event: WatchEvent) -> None:
        kind = event.type
        obj = event.object
        if not obj:
            return
        self.last_event_time = self._clock()
        rv = _rv(obj)
        if kind == "BOOKMARK":
            self.stats.bookmarks += 1
            if rv:
                self._resource_version = rv
            return
        self.stats.events += 1
        kept = self.transform(obj)
        if kept is None:  # no longer kept: gone from the store, as if deleted
            gone = self.store.remove(object_key(obj))
            if gone is not None:
                self._emit_delete(gone)
            if rv:
                self._resource_version = rv
            return
        if kind == "ADDED" or kind == "MODIFIED":
            old = self.store.put(kept)
            if old is None:
                self._emit_add(kept)
            elif _uid(old) != _uid(kept):
                self._emit_delete(old)
                self._emit_add(kept)
            elif _rv(old) != rv:
                self._emit_update(old, kept)
        elif kind == "DELETED" and self.store.remove(object_key(kept)) is not None:
            self._emit_delete(kept)
        if rv:
            self._resource_version = rv


class Informer(ObjectInformer[Obj]):
    """An informer of decoded dicts; ``transform`` defaults to :func:`strip_managed_fields`
    (``None``: objects are kept as decoded). See :class:`ObjectInformer`."""

    def __init__(
        self,
        client: KubeClient,
        path: str,
        *,
        resource: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        watch_timeout: int = 300,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        transform: Callable[[Obj], Obj | None] | None = strip_managed_fields,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(
            client,
            path,
            resource=resource,
            label_selector=label_selector,
            field_selector=field_selector,
            page_size=page_size,
            watch_timeout=watch_timeout,
            backoff_initial=backoff_initial,
            backoff_max=backoff_max,
            transform=transform or _keep,
            clock=clock,
        )
