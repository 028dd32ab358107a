"""The training interpreter's installed packages, as every judge reads them (G2, G9).

One reading, three answers per name, never confused: a version (installed), ``None`` (asked and not
installed) and unknown (the list was not read, the name's read failed, or the name was not asked).
A failed read is never absence: "no Unsloth" needs Unsloth asked and reported missing.

The target probe reports ``packages`` (name -> version, None = not installed), ``packages_unread``
(name -> why its metadata could not be read; those names are left out of ``packages``) and, when
the whole list is missing, ``packages: null`` with ``packages_error``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from sparktui.core.versions import canonical_name

INSTALLED = "installed"
ABSENT = "absent"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Installed:
    """Canonical name -> version (None = asked, not installed); ``unread``: canonical name -> why its
    read failed; ``error``: why the whole list is unavailable (None when it was read)."""

    versions: dict[str, str | None] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    @property
    def known(self) -> bool:
        return self.error is None

    def state(self, name: str) -> str:
        """``installed``, ``absent`` (asked and reported missing) or ``unknown``."""
        c = canonical_name(name)
        if self.error is not None or c not in self.versions:
            return UNKNOWN
        return ABSENT if self.versions[c] is None else INSTALLED

    def version(self, name: str) -> str | None:
        """The installed version, or None (absent or unknown: ask ``state`` which)."""
        return self.versions.get(canonical_name(name))  # empty when the list was not read

    def why_unknown(self, name: str) -> str:
        """Why ``name``'s state is unknown, in words."""
        if self.error is not None:
            return f"packages not read: {self.error}"
        c = canonical_name(name)
        if c in self.unread:
            return f"its metadata could not be read: {self.unread[c]}"
        return "the target reading did not include it"

    def describe(self, name: str) -> str:
        """The version, "not installed", or "unknown (why)": an evidence value."""
        state = self.state(name)
        if state == INSTALLED:
            return str(self.version(name))
        if state == ABSENT:
            return "not installed"
        return f"unknown ({self.why_unknown(name)})"


def installed_packages(t: Mapping[str, Any] | None) -> Installed:
    """What the target reading says is installed; see the module docstring for the shape."""
    if not isinstance(t, dict):
        return Installed(error="no target reading")
    pk = t.get("packages")
    if not isinstance(pk, dict) or (set(pk) == {"error"} and isinstance(pk.get("error"), str)):
        return Installed(error=_list_error(t, pk))
    unread: dict[str, str] = {}
    raw_unread = t.get("packages_unread")
    if isinstance(raw_unread, dict):
        for name, why in raw_unread.items():
            unread[canonical_name(str(name))] = str(why)
    versions: dict[str, str | None] = {}
    for name, version in pk.items():
        c = canonical_name(str(name))
        if version is not None and not isinstance(version, str):
            unread.setdefault(c, f"version reported as {version!r}, not a string")
            continue
        if version is not None:
            versions[c] = version  # one spelling installed wins over another's "not found"
            unread.pop(c, None)
        elif c not in versions and c not in unread:
            versions[c] = None
    for c in unread:  # a spelling whose read failed makes the name unknown unless another was read installed
        if versions.get(c) is None:
            versions.pop(c, None)
    return Installed(versions=versions, unread=unread)


def _list_error(t: Mapping[str, Any], pk: object) -> str:
    if isinstance(t.get("packages_error"), str) and t["packages_error"]:
        return t["packages_error"]
    if isinstance(pk, dict) and isinstance(pk.get("error"), str):
        return pk["error"]
    stage = (t.get("stages") or {}).get("packages")
    if isinstance(stage, dict) and stage.get("status") not in (None, "done"):
        err = stage.get("error")
        etype = stage.get("error_type")
        return f"packages stage {stage['status']}" + (f": {etype + ': ' if etype else ''}{err}" if err else "")
    if "packages" not in t:
        return "the target reading has no packages field"
    return f"packages reported as {type(pk).__name__}, not a list of versions"
