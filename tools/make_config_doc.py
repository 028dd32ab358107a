"""Generate docs/config.md from the code that reads the config (src/sparktui/core/config.py).

Every section, key, type, default, description and "used by" comes from the config dataclasses
(``describe_settings`` and the field metadata); where the file is looked up comes from
``default_config_path`` & co.; the flag table is found by parsing each flag with the real parser
and seeing which setting it changes; the error messages and the exit code are those of real
``sparktui`` runs against broken files. Only the example values below are written by hand, and
they are checked against the loader (tests/test_config_doc.py).

    python tools/make_config_doc.py           rewrite docs/config.md
    python tools/make_config_doc.py --check   exit 1 if docs/config.md is out of date
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, Iterator
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sparktui.cli import main as cli  # noqa: E402
from sparktui.core import config as C  # noqa: E402

DOC = ROOT / "docs" / "config.md"
TOOL = "tools/make_config_doc.py"

# The example file: realistic values, every one different from its default (the test checks).
# Keys not listed appear commented out with their default.
EXAMPLE: dict[str, Any] = {
    "target.python": "/home/me/envs/train/bin/python",
    "target.timeout_s": 120.0,
    "scan.paths": ["~/runs", "~/configs"],
    "pins.image": "ngc-pytorch-25.09",
    "memory.available_floor_gib": 12.0,
    "thermal.window_min": 15.0,
    "telemetry.interval_s": 2.0,
    "playbooks.slugs": ["vllm"],
    "playbooks.commands": ["vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.5"],
    "fleet.peers": ["spark-2"],
    "fleet.peer_command": "~/.venv/bin/sparktui",
    "run.slow_ratio": 0.6,
    "notify.min_status": "warn",
}
# What a commented-out key with no default (an omitted string) shows instead.
UNSET_HINTS: dict[str, str] = {
    "pins.file": "~/train/constraints.txt",
    "driver.known_bad": "~/.config/sparktui/known_bad.toml",
    "hardware.gpu_name_hint": "NVIDIA GB10",
    "fleet.ssh_config": "~/.ssh/spark_config",
    "run.log": "~/runs/sft/train.log",
    "run.stall_after_s": 1800.0,
    "notify.webhook": "https://ntfy.sh/my-spark-runs",
    "guard.target": "vllm-server",
    "guard.audit_log": "~/.local/state/sparktui/guard.jsonl",
}
# Stand-ins for paths in the doc (the generator must not depend on who runs it).
SHOWN_CONFIG_DIR = "~/.config/sparktui"


# ----------------------------------------------------------------------------- the code's view


def sections() -> list[tuple[str, type]]:
    """(name, dataclass) of every config section, in the code's order."""
    return [(f.name, f.default_factory) for f in fields(C.Config) if f.default_factory is not MISSING]


def settings() -> list[dict[str, Any]]:
    """One dict per key: describe_settings' (key, type, default, help) plus the field metadata."""
    meta = {}
    for name, cls in sections():
        for f in fields(cls):
            meta[f"{name}.{f.name}"] = f.metadata
    out = []
    for key, type_name, default, help_ in C.describe_settings():
        m = meta[key]
        check = m.get("check")
        out.append({
            "key": key, "section": key.split(".")[0], "name": key.split(".", 1)[1], "type": type_name,
            "default": default, "help": help_, "used_by": m.get("used_by", ""),
            # what the loader says about an out-of-range value, e.g. "must be greater than 0"
            "constraint": (check(-1.0) or "") if check else "",
        })
    return out


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {v!r}")


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


@contextlib.contextmanager
def environ(**values: str | None) -> Iterator[None]:
    """os.environ with these set (None: removed), restored afterwards."""
    with mock.patch.dict(os.environ):
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield


def looked_up() -> dict[str, str]:
    """The default paths as the code builds them, with and without the XDG variables."""
    from sparktui.playbooks.github import ClientSettings
    from sparktui.probes.state import bandwidth_path

    def both(fn) -> tuple[str, str]:
        with environ(HOME="~", XDG_CONFIG_HOME=None, XDG_STATE_HOME=None, XDG_CACHE_HOME=None):
            plain = str(fn())
        with environ(XDG_CONFIG_HOME="$XDG_CONFIG_HOME", XDG_STATE_HOME="$XDG_STATE_HOME",
                     XDG_CACHE_HOME="$XDG_CACHE_HOME"):
            xdg = str(fn())
        return xdg, plain

    out = {}
    for name, fn in (("config", C.default_config_path), ("state", C.default_state_dir), ("cache", C.default_cache_dir),
                     ("bandwidth", bandwidth_path), ("github", lambda: ClientSettings().resolved_cache_dir())):
        out[name], out[name + "_home"] = both(fn)
    return out


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _flat(cfg: C.Config) -> dict[str, Any]:
    return {s["key"]: getattr(getattr(cfg, s["section"]), s["name"]) for s in settings()}


def flag_overrides() -> tuple[list[dict[str, Any]], list[str]]:
    """Which setting each flag sets, found by parsing it with the real parser (no config file present).

    Returns the rows and the commands that read the config (those with ``--config``)."""
    top = cli.build_parser()
    parsers = {"sparktui": top, **{f"sparktui {n}": p for n, p in _subparsers(top).items()}}
    parsers = {n: p for n, p in parsers.items() if any("--config" in a.option_strings for a in p._actions)}
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp, environ(XDG_CONFIG_HOME=tmp):
        base = _flat(cli.config_from_args(top.parse_args([])))
        assert base == _flat(C.Config()), "the flag probe must start from the defaults"
        for cmd, p in parsers.items():
            required = []
            for a in p._actions:
                if a.required and a.option_strings:
                    required += [a.option_strings[0], "-"]
            for a in p._actions:
                if (not a.option_strings or a.dest == "config" or a.option_strings[0] in required
                        or isinstance(a, (argparse._HelpAction, argparse._VersionAction))):
                    continue
                flag = max(a.option_strings, key=len)
                given = "VALUE" if a.type in (None, str) else "7"  # float, int, or a checked number (--watch)
                given = sys.executable if flag == "--python" else given  # --python must name an executable
                argv = required + ([flag] if a.nargs == 0 else [flag, given])
                try:  # through the top parser, as the shell would: `sparktui CMD ... FLAG VALUE`
                    cfg = cli.config_from_args(top.parse_args(cmd.split()[1:] + argv))
                except (cli.UsageError, SystemExit, AttributeError):
                    continue
                changed = {k: v for k, v in _flat(cfg).items() if v != base[k]}
                if not changed:
                    continue
                row = rows.setdefault(flag, {"flag": flag, "metavar": a.metavar, "nargs0": a.nargs == 0,
                                             "append": isinstance(a, argparse._AppendAction), "commands": [],
                                             "sets": changed, "given": given})
                row["commands"].append(cmd)
    return list(rows.values()), list(parsers)


def error_cases() -> list[tuple[str, str, str]]:
    """(what, file text or flags, stderr line) from real ``sparktui check`` runs; the exit code must be 78."""
    cases = [
        ("unknown section", "[thermals]\nhot_c = 80\n"),
        ("unknown key", "[thermal]\nhot = 80\n"),
        ("wrong type", '[target]\ntimeout_s = "90"\n'),
        ("wrong type in a list", "[scan]\npaths = \"~/runs\"\n"),
        ("value out of range", "[memory]\ncache_warn_fraction = 1.5\n"),
        ("value out of range", "[telemetry]\ninterval_s = 0\n"),
        ("a section that is not a table", 'target = "/usr/bin/python3"\n'),
        ("not TOML", "[target]\npython /usr/bin/python3\n"),
        ("not UTF-8", b"[target]\npython = \"\xff\"\n"),
        ("`--config FILE` that does not exist", None),
    ]  # a numeric flag out of range is refused as it is parsed (usage error 64, docs/cli.md)
    out = []
    with tempfile.TemporaryDirectory() as tmp, environ(XDG_CONFIG_HOME=str(Path(tmp) / "xdg")):
        path = Path(tmp) / "config.toml"
        for what, content in cases:
            if content is None:
                argv, shown = ["check", "--config", str(Path(tmp) / "nope.toml"), "G10"], "`--config ~/.config/sparktui/nope.toml`"
            else:
                (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
                argv = ["check", "--config", str(path), "G10"]
                text = content.decode("utf-8", "backslashreplace") if isinstance(content, bytes) else content
                shown = "`" + text.strip().replace("\n", "` `") + "`"
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = cli.main(argv)
            line = err.getvalue().strip()
            if rc != cli.EXIT_CONFIG or "\n" in line:
                raise RuntimeError(f"{what}: expected one line and exit {cli.EXIT_CONFIG}, got {rc}: {line!r}")
            line = line.replace(tmp, SHOWN_CONFIG_DIR)
            head, sep, _ = line.partition("not valid TOML: ")
            if sep:  # the parser's own wording differs between Python versions
                line = head + sep + "<the TOML parser's message, with line and column>"
            out.append((what, shown, line))
    return out


# ----------------------------------------------------------------------------- the document


def example_toml() -> str:
    known = {s["key"] for s in settings()}
    for k in list(EXAMPLE) + list(UNSET_HINTS):
        if k not in known:
            raise KeyError(f"{TOOL}: example key {k} is not a setting")
    lines = [f"# {SHOWN_CONFIG_DIR}/config.toml: lines starting with # show the default"]
    by_section: dict[str, list[dict]] = {}
    for s in settings():
        by_section.setdefault(s["section"], []).append(s)
    for section, rows in by_section.items():
        lines += ["", f"[{section}]"]
        for s in rows:
            if s["key"] in EXAMPLE:
                lines.append(f"{s['name']} = {toml_value(EXAMPLE[s['key']])}")
            elif s["default"] is None:
                if s["key"] not in UNSET_HINTS:
                    raise KeyError(f"{TOOL}: {s['key']} has no default: add it to EXAMPLE or UNSET_HINTS")
                lines.append(f"# {s['name']} = {toml_value(UNSET_HINTS[s['key']])}   (unset by default)")
            else:
                lines.append(f"# {s['name']} = {toml_value(s['default'])}")
    return "\n".join(lines) + "\n"


def render() -> str:
    from sparktui.playbooks.github import ENV_API_URL
    from sparktui.probes.pins import shipped_sets

    paths = looked_up()
    rows = settings()
    flags, config_cmds = flag_overrides()
    out: list[str] = []
    w = out.append
    w("# Configuration")
    w("")
    w(f"<!-- Generated by {TOOL} from src/sparktui/core/config.py. Do not edit: change the code, then run")
    w(f"     `python {TOOL}`. tests/test_config_doc.py fails when this file is out of date. -->")
    w("")
    w("sparktui runs without a config file: every setting has a default. A file changes only what it names. "
      "A bad value is an error that names the file, the key and what was expected; it is never silently "
      "replaced by the default.")
    w("")
    w("## Where the file is looked up")
    w("")
    w(f"1. `--config FILE`, on every command that reads the config ({', '.join(f'`{c}`' for c in config_cmds)}). "
      "The file must exist.")
    w(f"2. Otherwise `{paths['config']}`; with `XDG_CONFIG_HOME` unset, `{paths['config_home']}`. "
      "This file may be absent: then every setting is its default.")
    w("")
    w("One file is read, never merged with another. Precedence, lowest first: the defaults below, the file, "
      "command-line flags. Files sparktui writes itself are not configured here; they follow the XDG variables:")
    w("")
    w("| what | where | without the XDG variable |")
    w("|---|---|---|")
    w(f"| state: the last G5 bandwidth result | `{paths['bandwidth']}` | `{paths['bandwidth_home']}` |")
    w(f"| cache: G8's GitHub responses (ETags) | `{paths['github']}` | `{paths['github_home']}` |")
    w("")
    w("## Settings")
    w("")
    w("Types are what the loader accepts: *a number* is an integer or a float, *(or omitted)* means the key "
      "has no default value (TOML has no null: leave the key out). A list of strings must be a TOML array even "
      "for one entry.")
    for name, cls in sections():
        w("")
        w(f"### [{name}]")
        w("")
        w(cls.__doc__.strip())
        w("")
        w("| key | type | default | meaning | used by |")
        w("|---|---|---|---|---|")
        for s in (r for r in rows if r["section"] == name):
            typ = s["type"] + (f", {s['constraint']}" if s["constraint"] else "")
            default = "unset" if s["default"] is None else f"`{toml_value(s['default'])}`"
            w(f"| `{s['name']}` | {cell(typ)} | {default} | {cell(s['help'])} | {cell(s['used_by'])} |")
        if name == "pins":
            w("")
            w("Shipped pin sets: " + ", ".join(f"`{n}`" for n in shipped_sets()) + ".")
        if name == "playbooks":
            w("")
            w(f"`api_url` left at its default gives way to the environment variable `{ENV_API_URL}` when that is set.")
    w("")
    w("## Example")
    w("")
    w("Every key, in the code's order. The uncommented lines differ from the defaults; a `#` line shows the "
      "default (for a key without one, an example value).")
    w("")
    w("```toml")
    out.extend(example_toml().rstrip("\n").split("\n"))
    w("```")
    w("")
    w("## Command-line flags")
    w("")
    w("A flag that is given wins over the file; one that is not given leaves the file's value. A repeatable "
      "flag's values replace the file's whole list, they are not added to it. Flag values are checked like "
      "file values.")
    w("")
    w("| flag | sets | on |")
    w("|---|---|---|")
    for f in flags:
        shown = f"`{f['flag']}" + ("" if f["nargs0"] else f" {f['metavar']}") + "`" + (" (repeatable)" if f["append"] else "")
        sets = []
        for key, v in f["sets"].items():
            if f["nargs0"]:
                sets.append(f"`{key} = {toml_value(v)}`")
            elif isinstance(v, float) and f["given"] != "VALUE" and v != float(f["given"]):
                sets.append(f"`{key}` = {f['metavar']} × {v / float(f['given']):g}")
            else:
                sets.append(f"`{key}`")
        on = "every command above" if f["commands"] == config_cmds else ", ".join(f"`{c}`" for c in f["commands"])
        w(f"| {shown} | {', '.join(sets)} | {on} |")
    w("")
    w("## Errors")
    w("")
    w(f"A config that cannot be used stops the command: one line on stderr, "
      f"`sparktui: config error: ` and the message, and exit code **{cli.EXIT_CONFIG}** (`EX_CONFIG`). "
      "The first problem found is reported. The message names the file and the key, says what was expected "
      "and repeats the value given; an unknown key or section lists the known ones. A value from a flag is "
      "named by that flag.")
    w("")
    w("| problem | file content or command line | stderr |")
    w("|---|---|---|")
    for what, shown, line in error_cases():
        w(f"| {cell(what)} | {cell(shown)} | `{cell(line)}` |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/config.md is out of date")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC.relative_to(ROOT)} is out of date: run python {TOOL}", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
