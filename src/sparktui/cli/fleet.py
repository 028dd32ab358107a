"""`sparktui peers`, `export`, `report` and `preflight`: the commands that look beyond one box.

Exit codes follow docs/cli.md. ``peers`` exits on the comparison (2 when something that must
match differs, 3 when it could not be compared, 1 when only advisory rows differ). ``preflight``
exits 2 on any failed check (or a required mismatch with a peer), 3 on an unknown that a broken
input caused (the target interpreter missing, hung or without torch; scan paths or a pins file
that do not exist) or when no check could be decided at all, and 0 otherwise: it never passes on
nothing. ``--allow-unknown`` lets those unknowns pass; with ``--strict`` a warning exits 1 and
every unknown 3, so only an all-clear starts the job. The summary lists what was not checked.
``report`` exits 0 once the report is written. ``export`` runs until stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

COMMANDS = ("peers", "export", "report", "preflight")


def add_parsers(sub, common) -> None:
    from sparktui.cli.common import positive_minutes

    p = sub.add_parser("peers", help="compare this machine with its peers over ssh (what must match for DDP/FSDP)")
    p.add_argument("ids", nargs="*", metavar="ID", help="checks shown side by side (default all)")
    p.add_argument("--json", action="store_true", help="print a JSON document instead of a table")
    p.add_argument("--snapshot", metavar="FILE", help="use a saved snapshot as this machine's column")
    p.add_argument("--differences", action="store_true", help="show only rows that differ or could not be compared")
    common(p)

    e = sub.add_parser("export", help="serve telemetry and verdicts as Prometheus metrics")
    e.add_argument("ids", nargs="*", metavar="ID", help="checks to export (default all; G10 left out when run from /)")
    e.add_argument("--listen", default=None, metavar="HOST:PORT", help="address to serve on (default 127.0.0.1:9400)")
    e.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --listen address (no auth: put a proxy in front)")
    e.add_argument("--host-label", metavar="NAME", help="value of the 'host' label (default: this machine's hostname)")
    e.add_argument("--textfile", metavar="DIR", help="write the verdicts to DIR/sparktui.prom for node_exporter's "
                                                     "textfile collector (atomically) instead of serving HTTP")
    e.add_argument("--once", action="store_true", help="with --textfile: judge once, write, exit (for a cron job or timer)")
    e.add_argument("--every", type=float, default=None, metavar="S", help="with --textfile: rewrite every S seconds (default 60)")
    common(e)

    r = sub.add_parser("report", help="write a Markdown report for an issue (tokens scrubbed; --redact for paths)")
    r.add_argument("ids", nargs="*", metavar="ID", help="checks to include (default all; with --replay, all that the recording answers)")
    r.add_argument("-o", "--output", default="-", metavar="FILE", help="where to write it (default: stdout)")
    r.add_argument("--redact", action="store_true", help="replace home paths, the user name and host names with placeholders")
    r.add_argument("--replay", metavar="FILE", default=argparse.SUPPRESS, help="report on a recording instead of this machine")
    r.add_argument("--snapshot", metavar="FILE", help="report on a saved snapshot instead of this machine")
    r.add_argument("--kernel-log", metavar="FILE", help="G11 on a saved kernel log (dmesg, dmesg -T, journalctl -k -o "
                                                        "json, /dev/kmsg records) instead of this boot's")
    r.add_argument("--watch", type=positive_minutes, metavar="MIN", help="sample telemetry this many minutes first (default: a few seconds)")
    common(r)

    f = sub.add_parser("preflight", help="run the non-intrusive checks; exit non-zero on a failure (for launch scripts)")
    f.add_argument("ids", nargs="*", metavar="ID", help="checks to run (default every non-intrusive one)")
    f.add_argument("--strict", action="store_true", help="warnings (exit 1) and every unknown (exit 3) block too")
    f.add_argument("--allow-unknown", action="store_true",
                   help="let unknowns pass, even those a broken input caused (a missing or hung --python, no torch); "
                        "they are still listed as not checked")
    f.add_argument("--snapshot", metavar="FILE", help="judge a saved snapshot instead of this machine")
    f.add_argument("--replay", metavar="FILE", default=argparse.SUPPRESS,
                   help="judge a recording instead of this machine (every check it answers, by default)")
    f.add_argument("--json", action="store_true", help="print a JSON document instead of the summary")
    common(f)


def run(args: argparse.Namespace) -> int:
    return {"peers": cmd_peers, "export": cmd_export, "report": cmd_report, "preflight": cmd_preflight}[args.cmd](args)


# -- shared --------------------------------------------------------------------------------------

def _local(cfg, snapshot: str | None):
    """(readings, host facts, source) of this machine, or of a saved snapshot."""
    from sparktui.core.readings import read_snapshot
    from sparktui.runner import collect, probe_names

    if snapshot:
        readings, host, _ = read_snapshot(snapshot)
        return readings, host, f"snapshot {snapshot}"
    from sparktui.cli.common import interruptibly

    # in a thread, so Ctrl-C reaches us while a hung --python runs: the first judges what was read
    readings = interruptibly(lambda cancel: collect(probe_names(), cfg, cancel=cancel))
    return readings, dict(readings.data("host") or {}), "live"


def _peer_specs(cfg):
    from sparktui.cli.common import UsageError
    from sparktui.fleet.peers import specs_from_config, validate_host

    for h in cfg.fleet.peers:
        bad = validate_host(h)
        if bad:
            raise UsageError(f"sparktui: {bad}")
    return specs_from_config(cfg)


def _with_peers(cfg, ids, local_fn):
    """Run ``local_fn()`` while the peers are fetched; returns (local result, peer results)."""
    from sparktui.fleet.peers import fetch_peers

    specs = _peer_specs(cfg)
    if not specs:
        return local_fn(), []
    print(f"sparktui: asking {len(specs)} peer(s) over ssh: {', '.join(s.host for s in specs)} "
          f"(up to {cfg.fleet.peer_timeout_s:g} s) ...", file=sys.stderr)
    from sparktui.cli.common import was_interrupted

    box: dict[str, Any] = {}
    cancel = threading.Event()
    t = threading.Thread(target=lambda: box.setdefault("peers", fetch_peers(specs, cfg, ids, cancel=cancel)), daemon=True)
    t.start()
    local = local_fn()
    if was_interrupted():  # Ctrl-C cut the local look short: stop the peers' ssh too, not wait them out
        cancel.set()
    t.join()
    return local, box["peers"]


def _comparison(readings, verdicts, peers):
    from sparktui.fleet.compare import compare
    from sparktui.fleet.peers import local_machine

    machines = [local_machine(readings, verdicts)] + [p.machine() for p in peers]
    return compare(machines), machines


def _write_json(doc: dict) -> None:
    json.dump(doc, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


# -- peers -----------------------------------------------------------------------------------------

def cmd_peers(args: argparse.Namespace) -> int:
    from sparktui.cli.common import EXIT_FOR, UsageError, parse_ids, config_from_args
    from sparktui.fleet.compare import checklists, format_comparison
    from sparktui.runner import run_checks

    cfg = config_from_args(args)
    ids = parse_ids(args.ids)
    if not cfg.fleet.peers:
        raise UsageError("sparktui peers: no peers: give --peer HOST (repeatable) or set [fleet] peers in the config")
    (readings, host, source), peers = _with_peers(cfg, ids, lambda: _local(cfg, args.snapshot))
    verdicts, _ = run_checks(ids, cfg, readings)
    cmp, machines = _comparison(readings, verdicts, peers)
    for p in peers:
        for note in p.notes:
            print(f"sparktui: {p.host}: {note}", file=sys.stderr)
    if args.json:
        _write_json({"schema": 1, "kind": "sparktui-peers", "generated_at": time.time(), "status": cmp.status.value,
                     "local": {"source": source, "host": host, "checks": [v.to_dict() for v in verdicts]},
                     "peers": [p.to_dict() for p in peers], "comparison": cmp.to_dict()})
    else:
        sys.stdout.write(format_comparison(cmp, checklists(machines, ids), all_rows=not args.differences))
    return EXIT_FOR[cmp.status]


# -- export ----------------------------------------------------------------------------------------

def cmd_export(args: argparse.Namespace) -> int:
    from sparktui.cli.common import parse_ids, config_from_args
    from sparktui.fleet.exporter import DEFAULT_LISTEN, run_export

    from sparktui.cli.common import UsageError

    cfg = config_from_args(args)
    ids = parse_ids(args.ids) if args.ids else None
    if args.textfile is None:
        for flag, given in (("--once", args.once), ("--every", args.every is not None)):
            if given:
                raise UsageError(f"sparktui export: {flag} goes with --textfile DIR")
        return run_export(cfg, args.listen or DEFAULT_LISTEN, args.allow_remote, ids, args.host_label)
    if args.listen or args.allow_remote:
        raise UsageError("sparktui export: --textfile writes a file and serves nothing; --listen/--allow-remote do not apply")
    if args.every is not None and not 1.0 <= args.every <= 86400.0:  # NaN fails both
        raise UsageError("sparktui export: --every must be between 1 and 86400 seconds")
    if args.once and args.every is not None:
        raise UsageError("sparktui export: --once writes one file and exits; --every does not apply")
    from sparktui.fleet.exporter import TEXTFILE_EVERY_S, run_textfile

    return run_textfile(cfg, args.textfile, ids, args.host_label, once=args.once,
                        every_s=args.every if args.every is not None else TEXTFILE_EVERY_S)


# -- report ----------------------------------------------------------------------------------------

def cmd_report(args: argparse.Namespace) -> int:
    from sparktui import __version__
    from sparktui.cli.common import EXIT_IOERR, EXIT_OK, config_from_args, kernel_log_readings, parse_ids
    from sparktui.core.atomic import write_text_atomic
    from sparktui.fleet.compare import checklists
    from sparktui.fleet.report import Redaction, ReportInput, render_report
    from sparktui.runner import run_checks

    cfg = config_from_args(args)
    peers: list = []
    replay = _replay_arg(args, cfg)
    if replay:
        from sparktui.live.recorder import replay_ids_for

        rec, readings = _recording(replay)
        ids = parse_ids(args.ids) if args.ids else replay_ids_for(readings)
        if getattr(args, "kernel_log", None):
            readings = kernel_log_readings(args.kernel_log, ids, cfg, readings)
        verdicts, _ = run_checks(ids, cfg, readings)
        name = Path(replay).name
        inp = ReportInput(verdicts, readings, dict(rec.header.get("host") or {}),
                          f"recording {name} ({rec.samples_seen} samples over {rec.duration_s / 60:.1f} min)",
                          __version__, time.time(), samples=rec.samples, samples_source=f"recording {name}",
                          problems=list(rec.problems) + ([rec.thinning_note()] if rec.thinning_note() else []),
                          stack=readings.data("target") is not None)
    else:
        ids = parse_ids(args.ids)
        if args.watch:
            print(f"sparktui: sampling telemetry for {args.watch:g} min ...", file=sys.stderr)
        (readings, host, source), peers = _with_peers(cfg, ids, lambda: _local(cfg, args.snapshot))
        if getattr(args, "kernel_log", None):
            readings = kernel_log_readings(args.kernel_log, ids, cfg, readings)
            source += f", kernel log {args.kernel_log}"
        verdicts, _ = run_checks(ids, cfg, readings)
        from sparktui.core.recording import _is_number, sample_problem

        tel = readings.data("telemetry") or {}
        raw_samples = tel.get("samples")
        # a snapshot's samples are not checked when it is read: keep those of the sampler's shape
        samples = [s for s in (raw_samples if isinstance(raw_samples, list) else [])
                   if isinstance(s, dict) and sample_problem(s) is None]
        window = tel.get("window_s")
        inp = ReportInput(verdicts, readings, host, source, __version__, time.time(), samples=samples,
                          samples_source=(f"{source}, {window:g} s window" if _is_number(window) else source) if tel else source)
        if peers:
            inp.comparison, machines = _comparison(readings, verdicts, peers)
            inp.checklist = checklists(machines, ids)
    redaction = None
    if args.redact:
        extra = [inp.host.get("hostname") or ""]
        for p in peers:
            extra += [p.host.split("@")[-1], p.host_facts.get("hostname") or ""]
        redaction = Redaction.current(extra_hostnames=[x for x in extra if x])
    text = render_report(inp, redaction)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        try:
            write_text_atomic(args.output, text)
        except OSError as e:  # atomic: an earlier report at that path is still whole
            print(f"sparktui: cannot write {args.output}: {e.strerror or e}", file=sys.stderr)
            return EXIT_IOERR
        print(f"wrote {args.output}: {len(verdicts)} checks" + (" (redacted)" if args.redact else ""), file=sys.stderr)
    return EXIT_OK


def _replay_arg(args: argparse.Namespace, cfg) -> str | None:
    """--replay (given before or after the subcommand), refused beside --snapshot or --peer."""
    from sparktui.cli.common import UsageError

    replay = getattr(args, "replay", None)
    if replay and getattr(args, "snapshot", None):
        raise UsageError(f"sparktui {args.cmd}: --replay and --snapshot are alternatives; give one")
    if replay and getattr(args, "peer", None):
        raise UsageError(f"sparktui {args.cmd}: --peer compares live machines; it does not go with --replay")
    return replay


def _recording(path: str):
    """(recording, readings) of a recording file; a bad file is a usage error with the reason."""
    from sparktui.cli.record import load_recording
    from sparktui.core.recording import readings_from_recording

    rec = load_recording(path)
    return rec, readings_from_recording(rec)


# -- preflight -------------------------------------------------------------------------------------

def _fitted(lines: list[tuple[str, str]]) -> list[str]:
    """(lead, text) pairs, never cut. On a terminal, or wherever COLUMNS is set, each wraps to that
    width (cli/render.py), continuation lines hanging under the text after a lead (two spaces in
    without one); into a pipe or a log without COLUMNS each stays one whole line, so a launch
    script's grep sees a problem whole."""
    from sparktui.cli.render import output_width, wrap, wraps_lines

    if not wraps_lines():
        return [lead + " ".join(text.split()) for lead, text in lines]
    width = output_width()
    return [out for lead, text in lines for out in wrap(text, width, lead, " " * len(lead) if lead else "  ")]


# Inputs the user gives that a check cannot do without, and the checks each one feeds. An unknown
# in such a check while its input is broken is "not checked because of a broken input": it blocks
# preflight (unless --allow-unknown). A check that reads an input only to enrich its verdict
# (``Gotcha.enriched_by``: G8 reads the scan to match issues against commands) is not fed by it,
# so a missing scan path does not explain its unknown.
_INPUT_NAMES = {"target": "the target interpreter (--python / [target] python)",
                "pins": "the pins file (--pins / [pins] file)",
                "tpscan": "the scan paths (--path / [scan] paths)"}
_UNFINISHED = ("hung", "cancelled")


def _target_broken(readings) -> str | None:
    """Why the target interpreter's reading is no evidence (not run, hung, cancelled, never started
    its stages, without torch), or None. Only when the reading exists: a recording without one
    is not a broken input."""
    from sparktui.gotchas.g01_cuda_abi import torch_not_installed

    if "target" not in readings:
        return None
    tr = readings.get_reading("target")
    t = tr.data
    if not isinstance(t, dict):
        return f"it could not be run: {tr.error or 'no data'}"
    raw_stages = t.get("stages")
    stages: dict[str, Any] = raw_stages if isinstance(raw_stages, dict) else {}
    for name, st in stages.items():
        if isinstance(st, dict) and st.get("status") in _UNFINISHED:
            return f"'{name}' {st['status']}: {st.get('error') or 'no reason given'}"
    for name in ("python", "import torch"):
        st = stages.get(name)
        if not isinstance(st, dict):
            st = {}
        if st.get("status") in (None, "not reached"):
            return f"'{name}' never ran" + (f": {st['error']}" if st.get("error") else "")
    if torch_not_installed(t) and not (t.get("packages") or {}).get("torch"):
        return f"no torch installed in {t.get('interpreter') or 'it'}"
    return None


def broken_inputs(readings, cfg) -> dict[str, str]:
    """probe name -> why, for each input the user gave that could not be used: the target
    interpreter, a pins file named by the user, a scan path that could not be scanned."""
    out: dict[str, str] = {}
    why = _target_broken(readings)
    if why:
        out["target"] = why
    if cfg.pins.file and "pins" in readings and readings.data("pins") is None:
        out["pins"] = readings.get_reading("pins").error or "unreadable"
    scan = readings.data("tpscan") if "tpscan" in readings else None
    roots = scan.get("paths") if isinstance(scan, dict) else None
    if not isinstance(roots, list):
        roots = []
    gone = [p for p in roots if isinstance(p, dict) and p.get("status") not in ("scanned", "already scanned")]
    if gone:  # a typo in one --path hides that folder's configs as surely as in the only one
        out["tpscan"] = "; ".join(f"{p.get('path')}: {p.get('status')}" for p in gone)
    return out


def not_checked(verdicts, readings, cfg) -> list[dict]:
    """One entry per unknown verdict: its id, why, and whether a broken input caused it (those block
    preflight). When no check at all was decided, every unknown blocks: a gate that saw nothing
    must not pass."""
    from sparktui.core.verdict import Status
    from sparktui.gotchas import REGISTRY

    broken = broken_inputs(readings, cfg)
    decided = any(v.status in (Status.OK, Status.WARN, Status.FAIL) for v in verdicts)
    out = []
    for v in verdicts:
        if v.status is not Status.UNKNOWN:
            continue
        feeds = [p for p in REGISTRY[v.id].required if p in broken]
        if feeds:
            cause, why = "broken input", f"{_INPUT_NAMES[feeds[0]]}: {broken[feeds[0]]}"
        elif not decided:
            cause, why = "nothing checked", v.summary
        else:
            cause, why = "not visible here", v.summary
        out.append({"id": v.id, "cause": cause, "why": why, "blocks": cause != "not visible here"})
    return out


def cmd_preflight(args: argparse.Namespace) -> int:
    from sparktui.cli.common import EXIT_FOR, EXIT_INTERRUPTED, EXIT_OK, config_from_args, was_interrupted
    from sparktui.core.verdict import Status, worst
    from sparktui.fleet.peers import PeerState
    from sparktui.core.inert import visible  # summaries and peers' names quote outside text
    from sparktui.runner import run_checks

    cfg = config_from_args(args)
    replay = _replay_arg(args, cfg)
    rec = readings = None
    source = ""
    if replay:
        rec, readings = _recording(replay)
        source = f"recording {Path(replay).name}"
    ids = _preflight_ids(args.ids, readings)
    if rec is not None:
        host, peers = dict(rec.header.get("host") or {}), []
    else:
        (readings, host, source), peers = _with_peers(cfg, ids, lambda: _local(cfg, args.snapshot))
    verdicts, _ = run_checks(ids, cfg, readings)
    allow = getattr(args, "allow_unknown", False)
    missing = not_checked(verdicts, readings, cfg)
    cmp = None
    # a peer named for the job that cannot even be reached: a multi-node launch would hang at
    # rendezvous, so that blocks (a peer reached but without sparktui only cannot be compared)
    down = [p.host for p in peers if p.state is PeerState.UNREACHABLE]
    if peers:
        cmp, _ = _comparison(readings, verdicts, peers)
    gate = _Gate(args.strict, allow, {m["id"] for m in missing if m["blocks"]})
    blockers = [v.id for v in verdicts if gate.blocks(v.status, v.id)]
    blocking = [v.status for v in verdicts if v.id in blockers]
    peer_status = None if cmp is None else Status.FAIL if down else cmp.status
    if down:
        blockers += [f"peer {h} unreachable" for h in down]
    elif peer_status is not None and gate.blocks(peer_status):
        blockers.append("peers")
    if peer_status is not None and (down or "peers" in blockers):  # down: peers were compared
        blocking.append(peer_status)
    code = EXIT_FOR[worst(blocking)] if blocking else EXIT_OK
    if was_interrupted():  # Ctrl-C cut the look short: `preflight && torchrun` must not launch
        code = EXIT_INTERRUPTED
    if args.json:
        _write_json({"schema": 1, "kind": "sparktui-preflight", "generated_at": time.time(), "source": source,
                     "host": host, "strict": args.strict, "allow_unknown": allow, "passed": code == EXIT_OK,
                     "exit_code": code, "blockers": blockers, "not_checked": missing,
                     "checks": [v.to_dict() for v in verdicts],
                     "peers": cmp.to_dict() if cmp is not None else None})
        return code
    out = [(f"{v.id:<4} {v.status.glyph} {v.status.value:<7} ", v.summary)
           for v in verdicts if v.status not in (Status.OK, Status.SKIP)]
    if cmp is not None:
        out += _peer_lines(cmp)
    out += _not_checked_lines(missing, allow)
    counts = {s: sum(1 for v in verdicts if v.status is s) for s in Status}
    tally = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    details = [f"sparktui check -v {' '.join(v.id for v in verdicts if v.id in blockers)}"] if any(
        v.id in blockers for v in verdicts) else []
    if cmp is not None and len(details) < len(blockers):
        details.append("sparktui peers --differences")
    checks = f"{len(verdicts)} check{'' if len(verdicts) == 1 else 's'}"
    verdict_line = (f"preflight: PASSED ({checks}: {tally})" if code == EXIT_OK else
                    "preflight: interrupted: not checked (Ctrl-C stopped the checks; what they had read is "
                    "above, and nothing was verified)" if code == EXIT_INTERRUPTED else
                    f"preflight: FAILED: {_blocked_by(blockers, verdicts)} ({checks}: {tally}); "
                    f"details: {'; '.join(details)}")
    statuses = [v.status for v in verdicts] + ([peer_status] if peer_status else [])
    if code == EXIT_OK and any(s in (Status.WARN, Status.UNKNOWN) for s in statuses):
        verdict_line += "; " + _passed_despite(args.strict, allow)
    sys.stdout.write("\n".join(visible(line) for line in _fitted(out + [("", verdict_line)])) + "\n")
    return code


def _preflight_ids(named: list[str], readings) -> list[str]:
    """The checks preflight runs: those ``named``, else every non-intrusive one (of a recording's
    ``readings``: those it answers). An intrusive check named is a usage error: preflight never runs it."""
    from sparktui.cli.common import UsageError, parse_ids
    from sparktui.gotchas import REGISTRY
    from sparktui.gotchas.base import Feed

    everything = list(REGISTRY)
    if readings is not None:  # a recording
        from sparktui.live.recorder import replay_ids_for

        everything = replay_ids_for(readings)
    ids = parse_ids(named) if named else [g for g in everything if not REGISTRY[g].intrusive]
    intrusive = [g for g in ids if REGISTRY[g].intrusive]
    if intrusive:
        command = "bandwidth" if any(REGISTRY[g].feed is Feed.ON_REQUEST for g in intrusive) else "check"
        raise UsageError(f"sparktui preflight: {', '.join(intrusive)} is intrusive; preflight never runs it "
                         f"(use `sparktui {command}` on an idle machine)")
    return ids


class _Gate:
    """What blocks: a failure always; a warning with --strict; an unknown with --strict, or when a
    broken input (or seeing nothing at all) caused it; --allow-unknown lets every unknown pass."""

    def __init__(self, strict: bool, allow_unknown: bool, broken_ids: set[str]) -> None:
        self.strict, self.allow, self.broken = strict, allow_unknown, broken_ids

    def blocks(self, status, gid: str | None = None) -> bool:
        from sparktui.core.verdict import Status

        if status is Status.FAIL:
            return True
        if status is Status.WARN:
            return self.strict
        if status is Status.UNKNOWN:
            return not self.allow and (self.strict or gid in self.broken)
        return False


def _blocked_by(blockers: list[str], verdicts) -> str:
    """What blocked, each by what it is: `failed on G1; unknown: G2, G7` (an unknown is no failure),
    `warned on G3` (--strict), then the peers."""
    status = {v.id: v.status.value for v in verdicts}
    parts = []
    for word, label in (("fail", "failed on"), ("warn", "warned on"), ("unknown", "unknown:")):
        ids = [b for b in blockers if status.get(b) == word]
        if ids:
            parts.append(f"{label} {', '.join(ids)}")
    return "; ".join(parts + [b if b != "peers" else "peers differ" for b in blockers if b not in status])


def _passed_despite(strict: bool, allow: bool) -> str:
    if strict:
        return "unknowns do not block (--allow-unknown)"
    if allow:
        return "warnings do not block (use --strict to make them); unknowns do not block (--allow-unknown)"
    return "warnings and unknowns that no broken input caused do not block (use --strict to make them)"


def _peer_lines(cmp) -> list[tuple[str, str]]:
    out = []
    for m in cmp.machines:
        if not m.reachable:
            out.append(("", f"peer {m.name}: {m.reason or 'unreachable'}"))
    for r in cmp.differing():
        vals = ", ".join(f"{m.name} {c.text}" for m, c in zip(cmp.machines, r.cells))
        level = "✘ fail   " if r.required else "▲ warn   "
        out.append((f"peer {level}", f"{r.what} differs: {vals}"))
    for r in cmp.unknown():
        out.append(("", f"peer ? unknown {r.what} could not be compared"))
    return out


def _not_checked_lines(missing: list[dict], allow: bool) -> list[tuple[str, str]]:
    """`not checked: G1, G2, G9 (broken input: ...)`, one line per cause, the reason once."""
    lines = []
    for cause, verb in (("broken input", "blocks"), ("nothing checked", "blocks"), ("not visible here", "does not block")):
        group = [m for m in missing if m["cause"] == cause]
        if not group:
            continue
        if allow and verb == "blocks":
            verb = "accepted with --allow-unknown"
        elif verb == "blocks":
            verb = "blocks; --allow-unknown accepts it"
        ids = ", ".join(m["id"] for m in group)
        if cause == "broken input":
            reasons = list(dict.fromkeys(m["why"] for m in group))
            lines.append(("", f"not checked: {ids} ({verb}): {'; '.join(reasons)}"))
        elif cause == "nothing checked":
            lines.append(("", f"not checked: {ids} ({verb}): no check could be decided, so nothing was verified"))
        else:
            lines.append(("", f"not checked: {ids} ({verb}): cannot be seen here (reasons above)"))
    return lines
