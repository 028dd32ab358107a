"""``sparktui link-test``: G12's opt-in measurement, nccl-tests' all_reduce_perf across this Spark and
a peer over the ConnectX-7 link, behind a confirmation (flows/nccl_test.py plans, runs and parses it).

Without all_reduce_perf or mpirun here it runs nothing: it prints the exact command to run by hand
and exits 4 (refused). It never runs without --yes when stdin is not a terminal."""

from __future__ import annotations

import argparse
import json
import socket
import sys
from typing import Any, Callable

from sparktui.cli.bandwidth import confirm_tty
from sparktui.cli.common import EXIT_FOR, EXIT_REFUSED, UsageError, config_from_args
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.flows import nccl_test
from sparktui.gotchas.g12_two_spark_link import FIX, ID

SOURCE = "nccl-tests all_reduce_perf (mpirun, one rank per Spark)"


def add_parser(sub, add_sub_common_options) -> None:
    t = sub.add_parser("link-test", help="G12: measure the two-Spark link's NCCL bus bandwidth (intrusive: asks first)")
    t.add_argument("--yes", action="store_true", help="do not ask for confirmation (required when stdin is not a terminal)")
    t.add_argument("--json", action="store_true", help="print the result as JSON")
    t.add_argument("--binary", metavar="PATH", default=nccl_test.DEFAULT_BINARY,
                   help="nccl-tests' all_reduce_perf, built with MPI=1 at the same path on both Sparks (default: on PATH)")
    add_sub_common_options(t)  # --peer HOST is one of them


def verdict_of(result: dict[str, Any]) -> Verdict:
    """The G12 verdict for one run (or refusal) of the measurement; never ``ok`` without a figure."""
    st = result.get("status")
    ev = [Evidence("command", SOURCE, result.get("command"))]
    if result.get("busbw_gbs") is not None:
        ev.append(Evidence("bus bandwidth (GB/s)", SOURCE, result["busbw_gbs"]))
    if st in ("ok", "warn"):
        return Verdict(ID, Status(st), str(result.get("summary")), tuple(ev), fix=FIX if st == "warn" else "")
    if st in ("not run", "refused"):
        return Verdict(ID, Status.SKIP, f"not measured: {result.get('summary') or result.get('reason')}", tuple(ev))
    return Verdict(ID, Status.UNKNOWN, str(result.get("summary") or "no result"), tuple(ev))


def measure(peers: list[str], binary: str, yes: bool, json_out: bool,
            confirm: Callable[[str], bool] = confirm_tty, link_data: dict | None = None,
            cfg=None) -> tuple[dict[str, Any], bool]:
    """(result, refused). Reads the link probe for the NCCL settings, plans, asks, runs."""
    if link_data is None:
        from sparktui import runner

        reading = runner.read("link", cfg)
        link_data = reading.data if reading.ok and isinstance(reading.data, dict) else {}
    settings = nccl_test.suggested_settings(link_data)
    try:
        argv = nccl_test.plan([socket.gethostname() or "localhost", *peers], settings, binary=binary)
    except ValueError as e:
        raise UsageError(f"sparktui link-test: {e}") from None
    cmd = nccl_test.command_line(argv)
    missing = [p for p in dict.fromkeys([argv[0], binary]) if not nccl_test._exists(p)]
    if missing:
        return {"status": "refused", "command": cmd,
                "summary": f"{', '.join(missing)} not found here: build nccl-tests (make MPI=1) on both Sparks "
                           f"and run by hand:\n{cmd}"}, True
    text = (f"G12 link test: all_reduce_perf across {len(peers) + 1} Sparks ({nccl_test.DEFAULT_BYTES} "
            f"message; loads the GPUs and the link for up to {nccl_test.TIMEOUT_S:g} s):\n  {cmd}")
    if not json_out:
        print(text, file=sys.stderr)
    if not yes:
        if not sys.stdin or not sys.stdin.isatty():
            return {"status": "refused", "command": cmd,
                    "summary": "stdin is not a terminal: give --yes to run it from a script"}, True
        if not confirm(text):
            return {"status": "refused", "command": cmd, "summary": "not confirmed (or --yes for scripts)"}, True
    return nccl_test.run(argv, binary=binary), False


def cmd_link_test(args: argparse.Namespace) -> int:
    from sparktui.cli import render

    cfg = config_from_args(args)
    peers = list(cfg.fleet.peers or [])  # --peer, else [fleet] peers
    if not peers:
        raise UsageError("sparktui link-test: give the other Spark with --peer HOST")
    result, refused = measure(peers, args.binary, args.yes, args.json, cfg=cfg)
    verdict = verdict_of(result)
    if args.json:
        json.dump({"verdict": verdict.to_dict(), "result": result}, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render.table([verdict], verbose=True))
        if refused:
            print(f"sparktui link-test: {result['summary']}", file=sys.stderr)
    return EXIT_REFUSED if refused else EXIT_FOR[verdict.status]
