"""What the gang controller is told: the scheduler whose objects it keeps, and which workloads
opt in (namespaces, a label selector). Checked when built, so a typo fails ``wmap operator`` at
start (exit code 2 through click) instead of an informer retrying a bad selector forever."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from workload_map.errors import WorkloadMapError
from workload_map.kube.validation import dns_subdomain_problem, label_value_problem, qualified_name_problem

#: The schedulers the controller keeps objects for (Kueue has its own admission controller).
CONTROLLER_SCHEDULERS: tuple[str, ...] = ("kai", "volcano", "coscheduling", "workload-api")
#: Namespaces one controller may list (more: select by label instead).
MAX_NAMESPACES = 1000
MAX_SELECTOR_LENGTH = 4096

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# One requirement of a Kubernetes label selector: key, !key, key=v, key==v, key!=v,
# key in (a,b), key notin (a,b).
_REQUIREMENT = re.compile(
    r"^\s*(?:(?P<not>!)\s*(?P<nkey>[^\s!=(),]+)"
    r"|(?P<key>[^\s!=(),]+)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[^\s!=(),]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<values>[^()]*)\))?)\s*$"
)


class GangConfigError(WorkloadMapError):
    """A gang controller setting is not valid (the message names it)."""


def split_requirements(selector: str) -> list[str]:
    """The comma-separated requirements of ``selector`` (commas inside ``( )`` belong to a set)."""
    out: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(selector):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(selector[start:i])
            start = i + 1
    out.append(selector[start:])
    return out


def check_selector(selector: str) -> str:
    """``selector`` if it is a valid label selector, else :class:`GangConfigError` naming the
    requirement at fault."""
    if len(selector) > MAX_SELECTOR_LENGTH:
        raise GangConfigError(f"--gang-selector is longer than {MAX_SELECTOR_LENGTH} characters")
    if not selector.strip():
        return ""
    for req in split_requirements(selector):
        m = _REQUIREMENT.match(req)
        if m is None:
            raise GangConfigError(f"--gang-selector: {req.strip()!r} is not a label selector requirement")
        key = m.group("nkey") or m.group("key")
        problem = qualified_name_problem(key)
        if problem is not None:
            raise GangConfigError(f"--gang-selector: label key {key!r}: {problem}")
        values = [m.group("value")] if m.group("value") is not None else []
        if m.group("values") is not None:
            values = [v.strip() for v in m.group("values").split(",")]
        for v in values:
            problem = label_value_problem(v)
            if problem is not None:
                raise GangConfigError(f"--gang-selector: value {v!r} of {key!r}: {problem}")
    return selector.strip()


@dataclass(frozen=True)
class GangConfig:
    """``scheduler``: whose objects to keep; ``namespaces``: the namespaces whose workloads opt in
    (empty: every namespace); ``selector``: a label selector the workloads must match (empty:
    all); ``scheduler_name``: the schedulerName pods get (``None``: the scheduler's usual one);
    ``workers``: reconciling threads."""

    scheduler: str
    namespaces: frozenset[str] = field(default_factory=frozenset)
    selector: str = ""
    scheduler_name: str | None = None
    workers: int = 4

    @classmethod
    def build(
        cls,
        scheduler: str,
        namespaces: Iterable[str] = (),
        selector: str = "",
        scheduler_name: str | None = None,
        workers: int = 4,
    ) -> GangConfig:
        if scheduler not in CONTROLLER_SCHEDULERS:
            raise GangConfigError(
                f"--gang-scheduler {scheduler!r}: the gang controller keeps objects for "
                + ", ".join(CONTROLLER_SCHEDULERS)
            )
        names = [n.strip() for ns in namespaces for n in ns.split(",") if n.strip()]
        if len(names) > MAX_NAMESPACES:
            raise GangConfigError(f"--gang-namespace: more than {MAX_NAMESPACES} namespaces")
        for n in names:
            if len(n) > 63 or not _DNS1123_LABEL.match(n):
                raise GangConfigError(
                    f"--gang-namespace {n!r} is not a namespace name (a DNS-1123 label: lowercase "
                    "letters, digits and '-', at most 63 characters)"
                )
        if scheduler_name is not None:
            problem = dns_subdomain_problem(scheduler_name)
            if problem is not None:
                raise GangConfigError(f"--gang-scheduler-name {scheduler_name!r}: {problem}")
        if not 1 <= workers <= 64:
            raise GangConfigError(f"--gang-workers {workers}: give 1 to 64")
        return cls(scheduler, frozenset(names), check_selector(selector), scheduler_name, workers)

    def selects_namespace(self, namespace: str) -> bool:
        return not self.namespaces or namespace in self.namespaces
