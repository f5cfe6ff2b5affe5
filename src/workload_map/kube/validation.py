"""Kubernetes' own validation rules for the values a user may write into pod templates: label
keys and values, DNS names, environment variable names, resource names, taint effects.

Each ``*_problem`` function returns ``None`` for a valid value, else the reason in the words the
API server uses (``apimachinery/pkg/util/validation``), so a bad value is refused before it is
written into a template that only fails later, when a controller creates pods from it.
"""

from __future__ import annotations

import re

_NAME_PART = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_RE = re.compile(rf"^{_NAME_PART}$")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_RE = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
_LABEL_VALUE_RE = re.compile(rf"^({_NAME_PART})?$")
_ENV_NAME_RE = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")

#: Longest label value, name part of a qualified name, and DNS subdomain.
LABEL_VALUE_MAX = 63
NAME_PART_MAX = 63
DNS_SUBDOMAIN_MAX = 253
#: Kubernetes' limit on all annotations of one object together (``TotalAnnotationSizeLimitB``).
ANNOTATIONS_MAX_BYTES = 256 * 1024
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: The scheduler name the API server writes into a pod spec that names none (so a template that
#: shows it has not chosen a scheduler).
DEFAULT_SCHEDULER = "default-scheduler"
TOLERATION_OPERATORS = ("Exists", "Equal")


def dns_subdomain_problem(value: str) -> str | None:
    """``IsDNS1123Subdomain``: scheduler and priority class names, label key prefixes."""
    if len(value) > DNS_SUBDOMAIN_MAX:
        return f"must be no more than {DNS_SUBDOMAIN_MAX} characters"
    if not _DNS_SUBDOMAIN_RE.match(value):
        return (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'example.com')"
        )
    return None


def qualified_name_problem(value: str) -> str | None:
    """``IsQualifiedName``: label and annotation keys, node selector keys, resource names."""
    prefix, slash, name = value.rpartition("/")
    if slash and not prefix:
        return "prefix part must be non-empty"
    if prefix:
        problem = dns_subdomain_problem(prefix)
        if problem is not None:
            return f"prefix part {problem}"
    if not name:
        return "name part must be non-empty"
    if len(name) > NAME_PART_MAX:
        return f"name part must be no more than {NAME_PART_MAX} characters"
    if not _NAME_RE.match(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
            "end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')"
        )
    return None


def label_value_problem(value: str) -> str | None:
    """``IsValidLabelValue`` (the empty value is valid)."""
    if len(value) > LABEL_VALUE_MAX:
        return f"must be no more than {LABEL_VALUE_MAX} characters"
    if not _LABEL_VALUE_RE.match(value):
        return (
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'MyValue', or "
            "'my_value', or '12345')"
        )
    return None


def env_name_problem(value: str) -> str | None:
    """``IsEnvVarName`` as kubectl checks it (``set env``)."""
    if not _ENV_NAME_RE.match(value):
        return (
            "a valid environment variable name must consist of alphabetic characters, digits, '_', "
            "'-', or '.', and must not start with a digit (e.g. 'my.env-name', or 'MY_ENV.NAME', or "
            "'MyEnvName1')"
        )
    return None


def is_native_resource(name: str) -> bool:
    """``IsNativeResource``: no domain, or a ``kubernetes.io/`` one (cpu, memory, hugepages-2Mi)."""
    return "/" not in name or name.startswith("kubernetes.io/") or ".kubernetes.io/" in name.split("/")[0]


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a domain-qualified name outside kubernetes.io, not a quota name
    (``nvidia.com/gpu``, ``amd.com/gpu``). Kubernetes needs such a resource's request, when given,
    to equal its limit, and both to be whole numbers."""
    return not is_native_resource(name) and not name.startswith("requests.")


__all__ = [
    "ANNOTATIONS_MAX_BYTES",
    "DEFAULT_SCHEDULER",
    "LABEL_VALUE_MAX",
    "TAINT_EFFECTS",
    "TOLERATION_OPERATORS",
    "dns_subdomain_problem",
    "env_name_problem",
    "is_extended_resource",
    "is_native_resource",
    "label_value_problem",
    "qualified_name_problem",
]
