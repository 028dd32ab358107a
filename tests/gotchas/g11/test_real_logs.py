"""G11 on real kernel logs: every excerpt of tests/data/kernel_logs/ (public bug reports, incident
write-ups and test fixtures, each with its source in MANIFEST.toml) in each of the four formats a
saved log comes in, judged through the public reader (probes/kernel_log.py ``read_file``) and G11's
judge, against the counts a person read from the excerpt (``expect``; rules in the corpus README).

The converter here strips the source's own prefixes first (dmesg ``[secs]``/``[+secs]``/``<prio>``,
``dmesg -T``, ISO times, ``dmesg -x`` facility, syslog/journal short form, ``talosctl dmesg``, a
reporter's line numbers, wall-broadcast headers), keeps a record's continuation lines with it (a
multi-line NVRM message), then writes the record as ``dmesg`` (``[secs] text``, continuation lines
indented), ``dmesg -T`` (``[Day Mon DD HH:MM:SS YYYY] text``), journal JSON (``journalctl -k -o json``:
MESSAGE with its newlines, __REALTIME_TIMESTAMP, _TRANSPORT=kernel ...) and /dev/kmsg
(``PRI,SEQ,USEC,-;text``, a newline escaped as ``\\x0a`` as the kernel does)."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status
from sparktui.gotchas import g11_kernel_log as g11
from sparktui.probes import kernel_log as kl

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parents[2] / "data" / "kernel_logs"
MANIFEST = CORPUS / "MANIFEST.toml"
EXCERPTS = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["excerpt"] if MANIFEST.exists() else []
FORMATS = ("dmesg", "dmesg -T", "journal JSON", "kmsg")
BOOT_EPOCH = 1_733_000_000  # 2024-11-30: the converted logs' boot

# The source's own prefixes, in the order they nest ("kern  :warn  : 2025-...,283302+00:00 msg").
_WALL = re.compile(r"^(?:Message from syslogd@.*|\S{3,6} {1,2}\d{1,2} \d\d:\d\d:\d\d \.\.\.)\s*$")
_LINENO = re.compile(r"^\s*\d{1,7} +(?=\[\s*[\d+])")
_DECODE = re.compile(r"^[a-z]{2,8} *:[a-z]{2,8} *: ")
_TALOS = re.compile(r"^\S+: kern: *[a-z]+: \[[^\]]+\]: ")
_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[,.]\d+(?:Z|[+-]\d\d:?\d\d)? ")
_SYSLOG = re.compile(r"^\S{2,6} {1,2}\d{1,2} \d\d:\d\d:\d\d (?:\S+ )?(?:\S+ )?kernel: ?")
_KERNEL = re.compile(r"^\s*kernel: ?")
_CTIME = re.compile(r"^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\] ?")
_DMESG = re.compile(r"^\s*(?:<\d+>)?\[\s*\+?\s*\d+[.,]\d+\](?:\[ *[TC]\d+\])? ?")  # with a printk caller id
_KMSG = re.compile(r"^\d+,\d+,\d+,[^;]*;")


def strip_prefix(line: str) -> tuple[bool, str]:
    """(whether the line carried a record prefix of its source, the message)."""
    rest, had = _LINENO.sub("", line, count=1), False
    for pat in (_TALOS, _DECODE, _ISO, _SYSLOG, _KERNEL, _CTIME, _DMESG, _KMSG):
        m = pat.match(rest)
        if m:
            rest, had = rest[m.end():], True
    return had, rest


def records(text: str, fmt: str) -> list[list[str]]:
    """The excerpt's kernel records, each the list of its lines (the first, then continuations)."""
    lines = [ln for ln in text.splitlines() if not _WALL.match(ln)]
    prefixed = fmt != "plain" and any(strip_prefix(ln)[0] for ln in lines)
    out: list[list[str]] = []
    for ln in lines:
        had, msg = strip_prefix(ln)
        if prefixed and not had and out:  # a continuation line of the record before (indented by dmesg)
            out[-1].append(msg.strip())
        elif msg.strip() or not prefixed:
            out.append([msg.rstrip()])
    return [r for r in out if any(x.strip() for x in r)]


def convert(recs: list[list[str]], fmt: str) -> str:
    out = []
    for i, rec in enumerate(recs):
        usec = 100_012_345 + i * 1_000  # a millisecond apart: the lines of one incident come together
        t = BOOT_EPOCH + usec / 1e6
        if fmt == "dmesg":
            out.append(f"[{usec / 1e6:12.6f}] {rec[0]}" + "".join(f"\n{' ' * 15}{c}" for c in rec[1:]))
        elif fmt == "dmesg -T":
            stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(t))
            out.append(f"[{stamp}] {rec[0]}" + "".join(f"\n{' ' * 27}{c}" for c in rec[1:]))
        elif fmt == "journal JSON":
            out.append(json.dumps({"__REALTIME_TIMESTAMP": str(int(t * 1e6)), "__MONOTONIC_TIMESTAMP": str(usec),
                                   "_BOOT_ID": "5ad0c1e1a2b34c5d8e9f0a1b2c3d4e5f", "_TRANSPORT": "kernel",
                                   "PRIORITY": "4", "SYSLOG_FACILITY": "0", "SYSLOG_IDENTIFIER": "kernel",
                                   "_HOSTNAME": "spark", "MESSAGE": "\n".join(rec)}))
        else:  # /dev/kmsg: non-printable characters (a newline too) escaped as \xNN
            body = "\n".join(rec)
            body = "".join(f"\\x{ord(c):02x}" if ord(c) < 32 or c == "\\" else c for c in body)
            out.append(f"4,{3964 + i},{usec},-;{body}")
    return "\n".join(out) + "\n"


def counted(data: dict) -> dict:
    evs = data["events"]
    xids = [e["xid"] for e in evs if e["kind"] == "xid"]
    counts = data["counts"]
    sev = data.get("severities") or {s: sum(1 for e in evs if e["kind"] == "aer" and e.get("severity") == s)
                                     for s in ("fatal", "non-fatal", "corrected")}
    return {"xid": xids, "oom_kill": counts["oom_kill"], "aer_fatal": sev["fatal"],
            "aer_nonfatal": sev["non-fatal"], "aer_corrected": sev["corrected"],
            "nv_no_memory": counts["nv_no_memory"], "soft_lockup": counts["soft_lockup"],
            # the README: fallen off the bus "with or without an Xid 79" is a GPU lost
            "gpu_lost": counts.get("gpu_lost", 0) > 0 or 79 in xids,
            "oom_victims": [e["name"] for e in evs if e["kind"] == "oom_kill"],
            "cgroup_oom": any(e.get("cgroup") is True for e in evs if e["kind"] == "oom_kill")}


def expected(exp: dict) -> dict:
    return {"xid": list(exp.get("xid", [])), "oom_kill": exp.get("oom_kill", 0), "aer_fatal": exp.get("aer_fatal", 0),
            "aer_nonfatal": exp.get("aer_nonfatal", 0), "aer_corrected": exp.get("aer_corrected", 0),
            "nv_no_memory": exp.get("nv_no_memory", 0), "soft_lockup": exp.get("soft_lockup", 0),
            "gpu_lost": bool(exp.get("gpu_lost", False)), "oom_victims": list(exp.get("oom_victims", [])),
            "cgroup_oom": bool(exp.get("cgroup_oom", False))}


def status_for(want: dict) -> Status:
    if want["xid"] or want["oom_kill"] or want["aer_fatal"] or want["nv_no_memory"] or want["soft_lockup"] \
            or want["gpu_lost"]:
        return Status.FAIL
    return Status.WARN if want["aer_nonfatal"] else Status.OK


def judged(data: dict):
    return g11.judge(Readings({"kernel_log": Reading("kernel_log", data, source="file")}), Config())


def test_the_corpus_holds_at_least_50_excerpts_each_with_its_source():
    assert len(EXCERPTS) >= 50
    for e in EXCERPTS:
        assert (CORPUS / e["file"]).is_file(), e["file"]
        assert str(e.get("source", "")).strip(), f"{e['file']}: no source"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("entry", EXCERPTS, ids=[e["file"][:40] for e in EXCERPTS])
def test_each_excerpt_in_each_format_is_counted_and_judged_as_a_person_reads_it(tmp_path, entry, fmt):
    text = (CORPUS / entry["file"]).read_text(encoding="utf-8")
    path = tmp_path / "kernel.log"
    path.write_text(convert(records(text, entry["format"]), fmt), encoding="utf-8")
    r = kl.read_file(str(path))
    assert r.data is not None, r.error
    want = expected(entry["expect"])
    assert counted(r.data) == want, entry["note"]
    assert set(r.data["formats"]) == {fmt}, r.data["formats"]  # each line's format detected on the line
    v = judged(r.data)
    assert v.status is status_for(want), v.summary
    if v.status is Status.OK:
        assert "none of Xid" in v.summary
    for name in want["oom_victims"][:1]:
        assert f"killed {name} (pid" in v.summary  # the summary leads with the incident naming the process
    if want["cgroup_oom"]:
        assert "--memory" in v.fix


AS_FOUND_NOT_A_FORMAT = {"068-diagnosetools107-hard-lockup-panic-line-numbers-3.10.log"}  # editor line numbers
READABLE_AS_FOUND = {"dmesg", "dmesg -T", "syslog", "journalctl", "kmsg", "dmesg --time-format iso",
                     "dmesg --decode --time-format iso", "dmesg -r", "talosctl dmesg"}


AS_FOUND = [e for e in EXCERPTS if e["format"] in READABLE_AS_FOUND and e["file"] not in AS_FOUND_NOT_A_FORMAT]


@pytest.mark.parametrize("entry", AS_FOUND, ids=[e["file"][:40] for e in AS_FOUND])
def test_each_excerpt_saved_as_its_source_printed_it_is_read_too(entry):
    """`--kernel-log` on the text as the source shows it (syslog, journal short form, dmesg variants)."""
    r = kl.read_file(str(CORPUS / entry["file"]))
    assert r.data is not None, r.error
    want = expected(entry["expect"])
    assert counted(r.data) == want, entry["note"]
    assert judged(r.data).status is status_for(want)


def test_a_plain_excerpt_without_times_is_refused_with_the_reason():
    plain = [e for e in EXCERPTS if e["format"] == "plain"
             and not (CORPUS / e["file"]).read_text(encoding="utf-8").lstrip().startswith("kernel:")]
    assert plain
    r = kl.read_file(str(CORPUS / plain[0]["file"]))
    assert r.data is None and "is not a kernel log this reader knows" in (r.error or "")
    v = g11.judge(Readings({"kernel_log": r}), Config())
    assert v.status is Status.UNKNOWN and "journalctl -k -b -o json" in v.summary
