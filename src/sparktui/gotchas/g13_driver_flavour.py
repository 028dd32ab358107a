"""G13: driver and kernel flavour: the NVIDIA module flavour, driver branch and kernel release
against a table of known-bad combinations (sparktui/data/known_bad.toml)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.readings import Reading
from sparktui.core.shapes import DRIVER_FLAVOUR, NVML
from sparktui.core.validate import KERNEL_RELEASE_MAX, pattern_problem
from sparktui.core.verdict import EvidenceList, Status, Verdict, worst
from sparktui.gotchas._facts import GpuFacts
from sparktui.gotchas._fix import block, comment
from sparktui.gotchas.base import Gotcha

ID = "G13"
DATA_FILE = "sparktui/data/known_bad.toml"
GB10_CAPABILITY = (12, 1)

MATCH, NO_MATCH, MAYBE = "match", "no match", "maybe"

_BRANCH_FROM_SYSFS = "$(cut -d. -f1 /sys/module/nvidia/version)"


def _vt(v: Any) -> tuple[int, ...] | None:
    if not isinstance(v, str) or not re.fullmatch(r"\d+(?:\.\d+)*", v):
        return None
    return tuple(int(p) for p in v.split("."))


def open_module_fix(branch: int | None, version: str | None) -> str:
    b = str(branch) if branch is not None else _BRANCH_FROM_SYSFS
    seen = comment(f"the proprietary module {version} is loaded; a GB10 needs the open flavour of the same branch"
                   if version else "the proprietary module is loaded; a GB10 needs the open flavour")
    return ("Install the open kernel module of the branch you run (DGX OS / Ubuntu package names), "
            "reboot, and check that the NVRM line says \"Open Kernel Module\":\n\n"
            + block([seen,
                     "sudo apt-get update",
                     f"sudo apt-get install nvidia-driver-{b}-open     # replaces nvidia-driver-{b} (proprietary)",
                     "sudo reboot",
                     "cat /proc/driver/nvidia/version                 # expect: NVIDIA UNIX Open Kernel Module"])
            + "\nWith Secure Boot, Ubuntu's signed prebuilt modules for the running kernel instead of DKMS:\n\n"
            + block([f"sudo apt-get install linux-modules-nvidia-{b}-open-$(uname -r)"]))


KERNEL_FIX = ("Boot another kernel: update to a newer -nvidia kernel from DGX OS / Ubuntu, or pick a "
              "previous one in GRUB until the fix lands:\n\n"
              + block(["sudo apt-get update && sudo apt-get upgrade      # a newer linux-image-*-nvidia",
                       "dpkg -l 'linux-image-*' | grep '^ii'              # the kernels installed",
                       "uname -r                                        # after the reboot"]))


def driver_fix(branch: int | None, flavour: str | None) -> str:
    suffix = "-open" if flavour != "proprietary" else ""
    return ("If you see the symptom, compare with the previous driver branch before changing anything else "
            "(a report, not a confirmed bug: measure first):\n\n"
            + block([comment(f"driver branch {branch} is loaded" if branch is not None else "driver branch unread"),
                     f"sudo apt-get install nvidia-driver-580{suffix}      # the DGX OS release branch",
                     "sudo reboot"]))



# NVML's own words for a user-space driver newer (or older) than the loaded kernel module: the error
# code's name, nvmlErrorString's text (nvidia-ml-py), and the text nvidia-smi and NCCL print
_LIB_MISMATCH = re.compile(r"LIB_RM_VERSION_MISMATCH|driver/library version mismatch|NVML/RM version mismatch", re.I)
ERROR_TEXT_CHARS = 2000  # of an NVML error matched (a real one is under 100)
# packages in /var/run/reboot-required.pkgs that mean the driver or the kernel waits for the reboot
_REBOOT_PKG = re.compile(r"^(?:linux-(?:image|modules|base|signed|generic|nvidia)|nvidia-|libnvidia-)")


def nvml_mismatch(text: Any) -> bool:
    """True when an NVML error (or nvidia-smi's, NCCL's words) says driver/library version mismatch."""
    return isinstance(text, str) and _LIB_MISMATCH.search(text[:ERROR_TEXT_CHARS]) is not None


def reboot_fix(f: Mapping[str, Any]) -> str:
    loaded = f.get("driver_version")
    installed = f.get("installed_version")
    seen = comment(f"loaded module {loaded}, installed {installed}" if loaded and installed and loaded != installed
                   else "the driver or the kernel was updated without a reboot")
    return ("The driver or the kernel was updated while the old one runs: reboot to load what is installed "
            "(stop or checkpoint the run first). After the reboot the loaded module, the installed one and "
            "NVML agree:\n\n"
            + block([seen,
                     "cat /var/run/reboot-required.pkgs 2>/dev/null     # what asked for the reboot",
                     "sudo reboot",
                     "cat /proc/driver/nvidia/version                   # the loaded module",
                     "modinfo -F version nvidia                         # the installed one: the same",
                     "nvidia-smi                                        # no 'Driver/library version mismatch'",
                     "uname -r                                          # the newest installed kernel"])
            + "\nAn update that arrived on its own came from unattended-upgrades; its log says when:\n\n"
            + block(["grep -A4 -i nvidia /var/log/apt/history.log | tail -20"]))


_RELEASE_KEY = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?-(\d+)")


def release_key(release: Any) -> tuple[int, int, int, int] | None:
    """(6, 17, 0, 1008) from "6.17.0-1008-nvidia": the order Ubuntu's kernels are versioned in."""
    m = _RELEASE_KEY.match(release) if isinstance(release, str) else None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0), int(m.group(4))) if m else None


def _newer_kernel(f: Mapping[str, Any]) -> str | None:
    """The newest installed kernel of the running one's flavour when it is newer than the running one."""
    running = f.get("kernel_release")
    installed = f.get("kernels_installed")
    if not isinstance(running, str) or not isinstance(installed, list) or release_key(running) is None:
        return None
    flavour = f.get("kernel_flavour")
    same = [k for k in installed if isinstance(k, str) and release_key(k) is not None
            and (flavour is None or k.endswith("-" + flavour))]
    newest = max(same, key=lambda k: release_key(k) or (0, 0, 0, 0), default=None)
    return newest if newest and (release_key(newest) or ()) > (release_key(running) or ()) else None


def _nvml_rule(f: Mapping[str, Any], nvml: Reading[Any], ev: EvidenceList) -> list[tuple[Status, str]]:
    err = nvml.error if nvml.data is None else (nvml.data.get("error") if isinstance(nvml.data, Mapping) else None)
    if not nvml_mismatch(err):
        return []
    ev.add("NVML", nvml.source or "NVML", str(err)[:300])
    return [(Status.FAIL, "NVML refuses: driver/library version mismatch (the user-space driver was updated and the "
                          f"loaded module {f.get('driver_version') or '(version unread)'} is the old one): reboot")]


def reboot_rules(f: Mapping[str, Any], nvml: Reading[Any], ev: EvidenceList) -> list[tuple[Status, str]]:
    """fail: NVML refuses with a driver/library version mismatch; the installed module's version is
    not the loaded one's; a newer kernel waits with Ubuntu's reboot flag up, or the flag names a
    driver or kernel package. A newer kernel with no flag (booted before, then not chosen: pinned?),
    or with a flag raised by other packages only, and such a flag alone are evidence only."""
    out = _nvml_rule(f, nvml, ev)
    errors, sources = f.get("errors") or {}, f.get("sources") or {}
    loaded, installed = f.get("driver_version"), f.get("installed_version")
    ev.add("installed NVIDIA module (next boot)", sources.get("installed_version", "modinfo nvidia"),
           f"{installed}, {f.get('installed_flavour') or 'flavour unread'}" if installed
           else f"unavailable: {errors.get('installed_version', 'not read')}")
    if isinstance(loaded, str) and isinstance(installed, str) and loaded != installed:
        out.append((Status.FAIL, f"driver {installed} is installed but {loaded} is loaded: a reboot is pending"
                    + (f" (and the installed module is {f.get('installed_flavour')})"
                       if f.get("installed_flavour") and f.get("installed_flavour") != f.get("flavour") else "")))
    newer = _newer_kernel(f)
    flag = f.get("reboot_required")
    pkgs = [p for p in (f.get("reboot_required_pkgs") or []) if isinstance(p, str)]
    kernels = f.get("kernels_installed")
    ev.add("kernels installed", sources.get("kernels_installed", "/lib/modules"),
           ", ".join(kernels[-5:]) if isinstance(kernels, list) and kernels
           else f"unavailable: {errors.get('kernels_installed', 'not read')}")
    ev.add("reboot required (Ubuntu's flag)", sources.get("reboot_required", "/var/run/reboot-required"),
           ("yes" + (f": {', '.join(pkgs[:8])}" + (f" (+{len(pkgs) - 8})" if len(pkgs) > 8 else "") if pkgs else ""))
           if flag else "no" if flag is False else f"unavailable: {errors.get('reboot_required', 'not read')}")
    driver_pkgs = [p for p in pkgs if _REBOOT_PKG.match(p)]
    if newer and flag and (not pkgs or driver_pkgs):  # a flag raised by libc6 alone: that kernel is pinned
        out.append((Status.FAIL, f"kernel {newer} is installed but {f.get('kernel_release')} runs, and a reboot is "
                                 "required: a reboot is pending"))
    elif flag and driver_pkgs and not any(s is Status.FAIL and "is installed but" in t for s, t in out):
        out.append((Status.FAIL, f"a reboot is pending for {', '.join(driver_pkgs[:4])}"
                                 + (f" (+{len(driver_pkgs) - 4})" if len(driver_pkgs) > 4 else "")))
    return out


FIX = open_module_fix(None, None) + "\n" + KERNEL_FIX + "\n" + reboot_fix({})


def _with_pending(v: Verdict, pending: list[tuple[Status, str]], f: Mapping[str, Any]) -> Verdict:
    """The table's verdict with the reboot findings first (they decide when worse)."""
    if not pending:
        return v
    status = worst([v.status] + [st for st, _ in pending])
    summary = "; ".join(t for _, t in pending)
    summary += f"; known-bad table: {v.summary}" if v.status is not Status.OK else " (no known-bad entry matches)"
    details = tuple(f"{st.value}: {t}" for st, t in pending) + tuple(v.details)
    fix = reboot_fix(f) + (f"\n{v.fix}" if v.fix else "")
    return Verdict(ID, status, summary, evidence=v.evidence, details=details, fix=fix)


def _gb10(f: Mapping[str, Any], gpu: GpuFacts) -> tuple[bool | None, str]:
    """(is GB10, how known); None when the GPU could not be named."""
    name = f.get("gpu_name")
    if gpu.capability == GB10_CAPABILITY:
        return True, f"compute capability 12.1 ({gpu.cap_source})"
    if "GB10" in (gpu.name or "").upper():
        return True, f"{gpu.name} ({gpu.name_source})"
    if isinstance(name, str) and "GB10" in name.upper():
        return True, f"{name} (/proc/driver/nvidia/gpus)"
    if gpu.capability is not None or gpu.name or name:
        cap = f"capability {gpu.capability[0]}.{gpu.capability[1]}" if gpu.capability else "capability unread"
        return False, f"no: {gpu.name or name or 'unnamed'}, {cap}"
    arch = f.get("architecture")
    if arch and arch != "aarch64":
        return False, f"no: the host is {arch} and a GB10 is an aarch64 system (GPU not named)"
    return None, "GPU not named (NVML and /proc/driver/nvidia/gpus unread)"


def _entry_ok(e: Any) -> bool:
    """An entry as the loader builds it (a recording can hold anything)."""
    return (isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("id", "status", "what", "source", "added"))
            and e["status"] in ("warn", "fail") and isinstance(e.get("match"), dict) and bool(e["match"])
            and ("kernel_release" not in e["match"] or pattern_problem(e["match"]["kernel_release"]) is None))


def match_entry(entry: Mapping[str, Any], f: Mapping[str, Any], gb10: bool | None) -> tuple[str, list[str]]:
    """Whether a known-bad entry applies to the facts: (MATCH | NO_MATCH | MAYBE, the fields that
    could not be read, for MAYBE)."""
    unread: list[str] = []
    for key, want in (entry.get("match") or {}).items():
        if key == "module_flavour":
            have: Any = f.get("flavour")
            ok = None if have is None else have == want
        elif key == "driver_branch":
            have = f.get("driver_branch")
            ok = None if not isinstance(have, int) else have in (want if isinstance(want, list) else [want])
        elif key in ("driver_min", "driver_below"):
            v = _vt(f.get("driver_version"))
            w = _vt(want)
            ok = None if v is None or w is None else (v >= w if key == "driver_min" else v < w)
        elif key == "kernel_release":
            have = f.get("kernel_release")
            # the pattern passed pattern_problem (_entry_ok); the text is never longer than a release can be
            ok = (None if not isinstance(have, str) or len(have) > KERNEL_RELEASE_MAX
                  else re.fullmatch(str(want), have) is not None)
        elif key == "kernel_flavour":
            have = f.get("kernel_flavour")
            # a release that was read but has no flavour suffix is known not to be that flavour
            ok = (have == want) if have is not None else (False if f.get("kernel_release") else None)
        elif key == "architecture":
            have = f.get("architecture")
            ok = None if have is None else have == want
        elif key == "gpu":
            if str(want).upper() == "GB10":
                ok = gb10
            else:
                name = f.get("gpu_name")
                ok = None if not name else str(want).upper() in str(name).upper()
        else:  # the loader refuses unknown fields; a recording from a newer table may carry one
            ok = None
        if ok is False:
            return NO_MATCH, []
        if ok is None:
            unread.append(key)
    return (MAYBE, unread) if unread else (MATCH, [])


def _add_facts(ev: EvidenceList, f: Mapping[str, Any], gb10_how: str) -> None:
    errors = f.get("errors") or {}
    sources = f.get("sources") or {}
    for key, what in (("flavour", "NVIDIA kernel module flavour"), ("driver_version", "driver version"),
                      ("driver_branch", "driver branch"), ("kernel_release", "kernel release"),
                      ("kernel_flavour", "kernel flavour"), ("architecture", "architecture"),
                      ("bios_version", "firmware (BIOS) version"), ("bios_date", "firmware (BIOS) date")):
        v = f.get(key)
        ev.add(what, sources.get(key, "driver_flavour probe"),
               v if v is not None else f"unavailable: {errors.get(key, 'not read')}")
    ev.add("GPU is a GB10", "NVML / /proc/driver/nvidia/gpus", gb10_how)


def judge(r: Readings, cfg: Config) -> Verdict:
    """fail/warn when a known-bad entry matches (the worst one decides); ok when none does and the
    module flavour and driver version were read; unknown when the table is unusable, no driver is
    loaded, or a fact an entry needs could not be read. The proprietary-module entry needs a GB10:
    on an aarch64 host whose GPU could not be named it is a warning, not a failure."""
    ev = EvidenceList()
    reading = r.get_reading(DRIVER_FLAVOUR)
    f = reading.data
    nvml = r.get_reading(NVML)
    if not f:
        ev.add("driver flavour", "driver_flavour probe", f"unavailable: {reading.error or 'not read'}")
        pending = _nvml_rule({}, nvml, ev)
        return _with_pending(Verdict(ID, Status.UNKNOWN, f"cannot tell: driver facts unread ({reading.error or 'no reading'})",
                                     evidence=ev.tuple()), pending, {})
    gpu = GpuFacts(r, cfg)
    gb10, gb10_how = _gb10(f, gpu)
    _add_facts(ev, f, gb10_how)
    pending = reboot_rules(f, nvml, ev)
    return _with_pending(_by_table(f, gb10, ev), pending, f)


def _by_table(f: Mapping[str, Any], gb10: bool | None, ev: EvidenceList) -> Verdict:
    """The known-bad table against the facts."""
    kb = f.get("known_bad") or {}
    unusable = _table_unusable(kb, ev)
    if unusable is not None:
        return unusable
    entries: Sequence[Mapping[str, Any]] = kb["entries"]
    updated = kb.get("updated") or "unknown date"
    ev.add("known-bad table", kb.get("path") or DATA_FILE, f"{len(entries)} entries, data of {updated}")
    matched: list[Mapping[str, Any]] = []
    maybe: list[tuple[Mapping[str, Any], list[str]]] = []
    for e in entries:
        res, unread = match_entry(e, f, gb10)
        if res == MATCH:
            matched.append(e)
        elif res == MAYBE:
            maybe.append((e, unread))
    # The GB10 rule on a host whose GPU could not be named: aarch64 with the proprietary module is
    # exactly what a GB10 looks like when that module failed to initialise it (NVML then fails too).
    suspect = [e for e, unread in maybe if unread == ["gpu"] and (e.get("match") or {}).get("gpu", "").upper() == "GB10"
               and f.get("architecture") == "aarch64" and f.get("module_loaded")]
    if matched or suspect:
        return _known_issue(f, matched, suspect, ev)
    return _none_known(f, entries, [(e, u) for e, u in maybe if e not in suspect], updated, ev)


def _table_unusable(kb: Mapping[str, Any], ev: EvidenceList) -> Verdict | None:
    """unknown when the known-bad table is missing, empty or holds malformed entries; None otherwise."""
    if kb.get("error") or not isinstance(kb.get("entries"), list):
        ev.add("known-bad table", kb.get("path") or DATA_FILE, f"unusable: {kb.get('error') or 'no entries list'}")
        return Verdict(ID, Status.UNKNOWN, f"cannot check: {kb.get('error') or 'known-bad table missing'}",
                       evidence=ev.tuple(), fix=f"Restore or fix the table ({kb.get('path') or DATA_FILE}); "
                       "its header lists the fields each entry may use.")
    entries: Sequence[Mapping[str, Any]] = kb["entries"]
    if not entries:  # nothing to check against is no evidence that nothing applies
        ev.add("known-bad table", kb.get("path") or DATA_FILE, "0 entries")
        return Verdict(ID, Status.UNKNOWN, f"cannot check: the known-bad table {kb.get('path') or DATA_FILE} has no "
                       "entries (an empty table is not evidence that nothing is known bad)", evidence=ev.tuple(),
                       fix=f"Name a table with entries in [driver] known_bad, or remove the setting to use the shipped "
                       f"{DATA_FILE}; its header lists the fields each entry may use.")
    bad = [i for i, e in enumerate(entries, 1) if not _entry_ok(e)]
    if bad:
        ev.add("known-bad table", kb.get("path") or DATA_FILE, f"malformed entries {bad} in the reading")
        return Verdict(ID, Status.UNKNOWN, f"cannot check: the reading's known-bad entries {bad} are malformed "
                       "(a hand-edited recording, or a pattern that cannot be matched in bounded time?)",
                       evidence=ev.tuple())
    return None


def _known_issue(f: Mapping[str, Any], matched: list[Mapping[str, Any]], suspect: list[Mapping[str, Any]],
                 ev: EvidenceList) -> Verdict:
    """fail or warn: the entries that match (the worst decides), and those that would on a GB10 (warn)."""
    fixes: list[str] = []
    names: list[str] = []
    for e in matched:
        note = "" if e.get("confirmed", True) else ", unconfirmed report"
        ev.add(f"known issue {e['id']}", e["source"], f"{e['status']}: {e['what']} (added {e['added']}{note})")
        names.append(f"{e['id']} ({e['status']}{note})")
        fixes.append(_fix_for(e, f))
    for e in suspect:
        ev.add(f"possible issue {e['id']}", e["source"],
               f"{e['what']} (applies if this is a GB10; the GPU could not be named)")
        names.append(f"{e['id']} (if this is a GB10)")
        fixes.append(_fix_for(e, f))
    # the worst decides: a matching fail entry fails; any other match, or a GB10 suspect, warns
    status = Status.FAIL if any(e["status"] == "fail" for e in matched) else Status.WARN
    summary = f"known issue for this driver/kernel: {'; '.join(names)}"
    if not f.get("module_loaded"):
        summary += "; and no NVIDIA kernel module is loaded"
    details = [f"{e['id']}: a single unconfirmed report ({e['source']}): measure before changing drivers"
               for e in matched + suspect if not e.get("confirmed", True)]
    return Verdict(ID, status, summary, evidence=ev.tuple(), details=tuple(details), fix="\n".join(fixes))


def _none_known(f: Mapping[str, Any], entries: Sequence[Mapping[str, Any]],
                other: list[tuple[Mapping[str, Any], list[str]]], updated: str, ev: EvidenceList) -> Verdict:
    """No entry matches: ok only with a driver loaded, its flavour and version read, and every entry decided."""
    errors = f.get("errors") or {}
    if not f.get("module_loaded"):
        inst = f.get("installed_version")
        installed = (f"; installed for this kernel: the {f.get('installed_flavour') or 'unknown-flavour'} module {inst} "
                     "(modinfo)" if inst else "")
        return Verdict(ID, Status.UNKNOWN,
                       f"no NVIDIA driver loaded: {errors.get('flavour', 'module absent')}; the flavour and version cannot be checked "
                       f"(kernel {f.get('kernel_release') or 'unread'} matches none of {len(entries)} entries){installed}",
                       evidence=ev.tuple(),
                       fix="Load the driver (`sudo modprobe nvidia`) or install it; on a GB10 install the -open flavour:\n\n"
                           + block(["sudo apt-get install nvidia-driver-580-open", "sudo reboot"]))
    unread_keys = [k for k in ("flavour", "driver_version") if f.get(k) is None]
    if unread_keys:
        why = "; ".join(f"{k}: {errors.get(k, 'not read')}" for k in unread_keys)
        return Verdict(ID, Status.UNKNOWN, f"cannot tell: the driver's {' and '.join(unread_keys)} could not be read ({why})",
                       evidence=ev.tuple(),
                       fix="Read /proc/driver/nvidia/version (world-readable when the driver is loaded):\n\n"
                           + block(["cat /proc/driver/nvidia/version", "cat /sys/module/nvidia/version"]))
    if other:
        text = "; ".join(f"{e['id']} needs {', '.join(u)}" for e, u in other)
        return Verdict(ID, Status.UNKNOWN, f"cannot tell whether known issues apply: {text} (unread)",
                       evidence=ev.tuple())
    return Verdict(ID, Status.OK,
                   f"no known issue for these versions ({f.get('flavour')} module {f.get('driver_version')}, kernel "
                   f"{f.get('kernel_release') or 'unread'}; {len(entries)} entries checked, data of {updated})",
                   evidence=ev.tuple())


def _fix_for(e: Mapping[str, Any], f: Mapping[str, Any]) -> str:
    kind = e.get("fix") or ""
    if kind == "open-module":
        return open_module_fix(f.get("driver_branch"), f.get("driver_version"))
    if kind == "kernel":
        return KERNEL_FIX
    if kind == "driver":
        return driver_fix(f.get("driver_branch"), f.get("flavour"))
    return f"See {e.get('source')}."


GOTCHA = Gotcha(
    id=ID,
    slug="driver-flavour",
    title="Driver and kernel flavour",
    symptom="The GPU is missing after boot (nvidia-smi: no devices, Xid 169 / RmInitAdapter failed in "
            "the kernel log), the machine panics, or CUDA graphs misbehave after a driver or kernel update; "
            "after an update without a reboot, nvidia-smi says \"Failed to initialize NVML: Driver/library "
            "version mismatch\" and CUDA finds no GPU.",
    cause="On GB10 the proprietary NVIDIA kernel module cannot initialise the GPU; the -open flavour is "
          "required. Some kernel builds and driver branches have reported problems of their own.",
    check="Reads the module flavour from /proc/driver/nvidia/version (\"Open Kernel Module\") or the "
          "module's taint (P = proprietary), the driver version from there or /sys/module/nvidia/version, "
          "the kernel release, architecture and firmware; what the next boot loads (`modinfo nvidia`: the "
          "installed module's version and licence, \"Dual MIT/GPL\" open or \"NVIDIA\" proprietary; the "
          "kernels under /lib/modules; Ubuntu's /var/run/reboot-required): an update waiting for a reboot, "
          "or NVML's own \"Driver/library version mismatch\", fails with the reboot fix. It matches the facts against the shipped "
          "known-bad table (sparktui/data/known_bad.toml, or your own named by [driver] known_bad: each "
          "entry has its source and the date it was added). The open-vs-proprietary rule applies to a GB10 only (capability 12.1 or a GB10 "
          "name; an aarch64 host whose GPU cannot be named gets a warning).",
    fix=FIX,
    intrusive=False,
    cadence_s=3600.0,
    probes=("driver_flavour", "nvml"),
    judge=judge,
    references=("proprietary module on GB10: Xid 169 / RmInitAdapter failed (Start9Labs issues #3465, #3693)",
                "kernel 6.17.0-1008-nvidia DOE mailbox panics (NVIDIA developer forum thread 366026)",
                "kernel 7.0.0-1019-nvidia: CmaTotal 0 kB, RDMA registration ENOMEM (luxingcom/aicad-nccl-optimization "
                "#1; MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark #259)",
                "driver updated without a reboot: 'Driver/library version mismatch' (brianmatzelle/sparktop README; "
                "NVIDIA developer forum thread 358869)",
                "open vs proprietary from modinfo's licence: NVIDIA's README 'kernel_open' "
                "(NVIDIA/open-gpu-kernel-modules #171)",
                "590.x CUDA-graph regression (unconfirmed report)",
                "docs/gotchas.md, G13"),
)
