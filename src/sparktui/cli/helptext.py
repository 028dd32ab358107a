"""What each command's ``--help`` says beyond its options: what the command does (first), real
command lines to copy, and the exit codes it uses (their meanings from cli/common.py). Kept in one
place so every command's help has the same shape; tests/test_help.py checks each has one."""

from __future__ import annotations

import argparse
import shutil
import textwrap
from dataclasses import dataclass, field

from sparktui.cli.common import (EXIT_BROKEN_PIPE, EXIT_CONFIG, EXIT_FAIL, EXIT_HANGUP, EXIT_INTERNAL, EXIT_INTERRUPTED,
                                 EXIT_IOERR, EXIT_TERMINATED,
                                 EXIT_MEANING, EXIT_OK, EXIT_REFUSED, EXIT_UNAVAILABLE, EXIT_UNKNOWN, EXIT_USAGE,
                                 EXIT_WARN)
from sparktui.gotchas import IDS

ALL_CHECKS = f"{IDS[0]}-{IDS[-1]}"  # every check, first to last, from the registry

MAX_WIDTH = 100  # description and exit codes are laid out as given (RawDescriptionHelpFormatter), so
# they are wrapped here, to the terminal as argparse measures it, and never wider than this
VERDICT_EXITS = (EXIT_OK, EXIT_WARN, EXIT_FAIL, EXIT_UNKNOWN)
OUTPUT_EXITS = (EXIT_IOERR, EXIT_BROKEN_PIPE)  # every command writes stdout (or a file)
ERROR_EXITS = (EXIT_USAGE, EXIT_CONFIG, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_HANGUP,  # a command that reads the config
               EXIT_TERMINATED) + OUTPUT_EXITS
ENDS_ON_SIGTERM = tuple(c for c in ERROR_EXITS if c != EXIT_TERMINATED)  # record, export: SIGTERM is a normal stop (0)
OFFLINE_EXITS = (EXIT_USAGE, EXIT_INTERNAL) + OUTPUT_EXITS  # one that reads no config and probes nothing


@dataclass(frozen=True)
class Help:
    about: str  # one or two sentences: what the command does
    examples: tuple[str, ...]
    exits: tuple[int, ...] = VERDICT_EXITS
    meaning: dict[int, str] = field(default_factory=dict)  # where a code means something else here
    errors: tuple[int, ...] = ERROR_EXITS

    def description(self, width: int) -> str:
        return textwrap.fill(" ".join(self.about.split()), width, break_on_hyphens=False)

    def epilog(self, width: int) -> str:
        """Examples one to a line, never wrapped (a command is copied whole), then the exit codes,
        each meaning wrapped under itself."""
        codes = sorted(set(self.exits + self.errors))
        meanings = [textwrap.fill(self.meaning.get(c) or EXIT_MEANING[c], width, initial_indent=f"  {c:<4} ",
                                  subsequent_indent=" " * 7, break_on_hyphens=False) for c in codes]
        return "\n".join(["Examples:"] + [f"  {e}" for e in self.examples] + ["", "Exit codes:"] + meanings)


def help_width() -> int:
    """The width argparse formats the options to (the terminal's, or COLUMNS, less 2), at most MAX_WIDTH."""
    return max(min(shutil.get_terminal_size().columns - 2, MAX_WIDTH), 40)


TRAIN_PY = "~/venvs/train/bin/python"

HELP: dict[str | None, Help] = {
    None: Help(
        "A terminal dashboard that checks an NVIDIA DGX Spark (GB10) for its recurring failure modes\n"
        f"({ALL_CHECKS}) during long training runs: the evidence behind each verdict, and the fix. Without a command it\n"
        "opens the dashboard (on a terminal); the commands below run the same checks headless.",
        ("sparktui", f"sparktui --python {TRAIN_PY}", "sparktui --replay src/sparktui/data/gb10-demo.jsonl --speed 0",
         "sparktui check --json", "sparktui preflight && torchrun --nproc-per-node 1 train.py", "sparktui explain G4",
         "sparktui COMMAND --help"),
        VERDICT_EXITS + (EXIT_REFUSED, EXIT_UNAVAILABLE),
        {EXIT_OK: "every check ok (or skipped); the dashboard was closed"}),
    "check": Help(
        "Run the non-intrusive checks on this machine (or a saved snapshot, or a recording) and print\n"
        "each verdict with its evidence. The exit code is the worst verdict, so a script can act on it.",
        ("sparktui check", f"sparktui check G1 G9 G10 --python {TRAIN_PY}", "sparktui check -v G4 --watch 15",
         "sparktui check --json > verdicts.json", "sparktui check --snapshot spark-1.json",
         "sparktui check --replay run.jsonl", "sparktui check G1 G9 G10 || [ $? -eq 3 ]")),
    "snapshot": Help(
        "Save every raw probe reading of this machine as one JSON file, to be judged later or on another\n"
        "machine with `sparktui check --snapshot FILE` (docs/snapshot.md). Nothing is judged here.",
        ("sparktui snapshot -o spark-1.json", f"sparktui snapshot -o spark-1.json --python {TRAIN_PY}",
         "sparktui snapshot --json | gzip > spark-1.json.gz", "sparktui check --snapshot spark-1.json"),
        (EXIT_OK,), {EXIT_OK: "the snapshot was written", EXIT_IOERR: "the snapshot cannot be written (a full disk, "
                                                                   "no permission); an earlier one at -o FILE is left whole"}),
    "explain": Help(
        "Print a gotcha's card: its symptom, cause, how sparktui checks it, the fix, and where it was\n"
        "seen. Reads nothing from this machine. Rendered for a terminal (its width, or COLUMNS);\n"
        "into a pipe or a file it is Markdown wrapped to COLUMNS (else 100), code kept as written.",
        ("sparktui explain G4", "sparktui explain g10"),
        (EXIT_OK,), {EXIT_OK: "the card was printed", EXIT_USAGE: f"usage error: not a gotcha id ({IDS[0]} ... {IDS[-1]})"},
        OFFLINE_EXITS),
    "bandwidth": Help(
        "G5: measure memory bandwidth with a copy loop in the training interpreter. Intrusive: it first\n"
        "checks that the machine is idle with memory to spare, says what it will load, and asks.",
        ("sparktui bandwidth", f"sparktui bandwidth --python {TRAIN_PY} --size 2",
         "sparktui bandwidth --yes --json > bandwidth.json"),
        VERDICT_EXITS + (EXIT_REFUSED,)),
    "list": Help(
        f"List the gotchas, {ALL_CHECKS}, with their titles; the intrusive one is marked.",
        ("sparktui list", "sparktui list | grep -v intrusive"),
        (EXIT_OK,), {EXIT_OK: "the list was printed"}, OFFLINE_EXITS),
    "record": Help(
        "Append live telemetry, process scans and each check's readings to a JSON-lines recording until\n"
        "Ctrl-C or --duration. Watch it with `sparktui --replay FILE`, judge it with `check --replay`.",
        ("sparktui record -o run.jsonl", "sparktui record -o run.jsonl --interval 1 --duration 3600",
         "sparktui check --replay run.jsonl", "sparktui --replay run.jsonl --speed 60"),
        (EXIT_OK,), {EXIT_OK: "the recording was written (SIGTERM, or Ctrl-C without --duration, ends it)",
                     EXIT_INTERRUPTED: "Ctrl-C before --duration was up; the recording is whole up to then"},
        ENDS_ON_SIGTERM),
    "peers": Help(
        "Compare this machine with its peers over ssh, side by side: what must match for DDP/FSDP\n"
        "(driver, CUDA, torch, NCCL, ...) and each check's verdict (docs/fleet.md).",
        ("sparktui peers --peer spark-2", "sparktui peers --peer spark-2 --peer spark-3 --differences",
         "sparktui peers --peer admin@spark-2 --peer-command '~/.venv/bin/sparktui' --json"),
        VERDICT_EXITS,
        {EXIT_OK: "everything that must match does", EXIT_WARN: "only advisory rows differ",
         EXIT_FAIL: "something that must match differs", EXIT_UNKNOWN: "something could not be compared",
         EXIT_USAGE: "usage error: no peers given, a bad host name, a bad option"}),
    "export": Help(
        "Serve this machine's telemetry and verdicts as Prometheus metrics until stopped (default\n"
        "127.0.0.1:9400, loopback only unless --allow-remote; docs/fleet.md).",
        ("sparktui export", "sparktui export --listen 127.0.0.1:9500 G3 G4 G6",
         "sparktui export --listen 0.0.0.0:9400 --allow-remote --host-label spark-1"),
        (EXIT_OK, EXIT_UNAVAILABLE),
        {EXIT_OK: "stopped (Ctrl-C or SIGTERM)", EXIT_USAGE: "usage error: a bad or non-loopback --listen address (see --allow-remote)"},
        ENDS_ON_SIGTERM),
    "report": Help(
        "Write a Markdown report to attach to an issue: host, stack, every verdict with its evidence and\n"
        "recent telemetry. Tokens are always scrubbed; --redact also hides home paths, user and hosts.",
        ("sparktui report -o report.md", "sparktui report --redact --replay run.jsonl -o report.md",
         "sparktui report --peer spark-2 --watch 10 -o report.md"),
        (EXIT_OK,), {EXIT_OK: "the report was written", EXIT_IOERR: "the report cannot be written (a folder that is not there, "
                                                       "a full disk); an earlier report at that path is left whole"}),
    "preflight": Help(
        "Go/no-go for launch scripts: run every non-intrusive check and exit non-zero when the job\n"
        "should not start. It lists what could not be checked and why, and never passes on nothing.",
        ("sparktui preflight && torchrun --nproc-per-node 1 train.py",
         f"sparktui preflight --strict G1 G9 G10 --python {TRAIN_PY}",
         "sparktui preflight --peer spark-2 --json > preflight.json", "sparktui preflight --replay run.jsonl"),
        VERDICT_EXITS,
        {EXIT_OK: "passed: nothing blocks", EXIT_WARN: "--strict: a warning",
         EXIT_FAIL: "a failure, a required mismatch with a peer, or a peer that cannot be reached",
         EXIT_UNKNOWN: "an unknown that blocks: a broken input (--python, --path, --pins), nothing checked "
                       "at all, or any unknown with --strict",
         EXIT_INTERRUPTED: "Ctrl-C: 'interrupted: not checked'; never PASSED, so `&& torchrun` does not start"}),
    "link-test": Help(
        "G12: measure the two-Spark link with nccl-tests' all_reduce_perf over mpirun (one rank per Spark)\n"
        "and judge its bus bandwidth. Intrusive: it shows the command and asks first; without the tools it prints it.",
        ("sparktui link-test --peer spark-2", "sparktui link-test --peer spark-2 --yes --json > link.json",
         "sparktui link-test --peer spark-2 --binary ~/nccl-tests/build/all_reduce_perf"),
        (EXIT_OK, EXIT_WARN, EXIT_UNKNOWN, EXIT_REFUSED),
        {EXIT_OK: "the bus bandwidth is at the ~23.7 GB/s reported reachable",
         EXIT_WARN: "the bus bandwidth is below it (e.g. ~3 GB/s on NCCL's default settings)",
         EXIT_UNKNOWN: "the run failed, or its output gave no usable figure",
         EXIT_REFUSED: "not run: all_reduce_perf or mpirun missing (the command is printed), not confirmed, "
                       "or no --yes without a terminal",
         EXIT_USAGE: "usage error: no --peer, a bad host name, a bad option"}),
    "guard": Help(
        "The memory guard (opt-in): when MemAvailable stays under [guard] floor_gib, confirmed by PSI, act on\n"
        "[guard] target. A dry run unless --act or act = true; every decision goes to an audit log (docs/guard.md).",
        ("sparktui guard", "sparktui guard --once", "sparktui guard --act --config /etc/sparktui/guard.toml"),
        (EXIT_OK, EXIT_FAIL, EXIT_UNKNOWN),
        {EXIT_OK: "stopped (SIGTERM or Ctrl-C); --once: nothing to do (over the floor, or not confirmed by PSI)",
         EXIT_FAIL: "--once: it triggered (it acted, or in a dry run would have)",
         EXIT_UNKNOWN: "--once: MemAvailable could not be read, or stopped before the hold was over",
         EXIT_CONFIG: "config error: a bad [guard] setting (e.g. stop-container without a target)"},
        ENDS_ON_SIGTERM),
    "history": Help(
        "List the dashboard sessions kept on this machine, newest first: start, duration, size, host,\n"
        "samples and the worst verdict seen. Each is a recording: replay or judge it by its ID.",
        ("sparktui history", "sparktui history --json", "sparktui --replay 20261204T1815",
         "sparktui check --replay 20261204T1815"),
        (EXIT_OK,), {EXIT_OK: "the list was printed"}, OFFLINE_EXITS),
}


def document(parser: argparse.ArgumentParser, command: str | None) -> None:
    """Give ``parser`` its description and its examples and exit codes as an epilog, laid out as
    written. A command without an entry keeps what it has (the test names it)."""
    text = HELP.get(command)
    if text is None:
        return
    width = help_width()
    parser.description, parser.epilog = text.description(width), text.epilog(width)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
