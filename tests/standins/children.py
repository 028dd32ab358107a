"""Real child processes whose argv imitates inference servers and training jobs (argv[0]
included): each is a Python interpreter sleeping. G5's gates and G6's scan judge only their own
children, since tests running in parallel start servers of their own. The ``kids`` fixture is in
tests/conftest.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

SLEEP = "import time; time.sleep(60)"


class Children:
    """Real child processes. ``run(prog, *args)`` starts an executable script named ``prog`` (a
    shebang to this Python that sleeps), so the command line reads ``python .../prog args`` exactly
    as a Python console script such as ``vllm`` or ``torchrun`` does. ``titled(title)`` starts one
    whose argv[0] is replaced, as setproctitle'd workers (``VLLM::EngineCore``) show."""

    def __init__(self, bindir) -> None:
        self.bindir = bindir
        self.procs: list[subprocess.Popen] = []
        self.extra_pids: list[int] = []

    def _spawn(self, args: list[str], expect: list[str], env=None, executable=None) -> subprocess.Popen:
        p = subprocess.Popen(args, executable=executable, env={**os.environ, **(env or {})},
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.procs.append(p)
        _wait_cmdline(p.pid, expect)
        return p

    def run(self, prog: str, *args: str, env: dict[str, str] | None = None, code: str = SLEEP) -> subprocess.Popen:
        path = self.bindir / prog
        path.write_text(f"#!{sys.executable}\n{code}\n")
        path.chmod(0o755)
        return self._spawn([str(path), *args], [sys.executable, str(path), *args], env)

    def module(self, dotted: str, *args: str) -> subprocess.Popen:
        """``python -m dotted args``, with a stand-in module that sleeps."""
        root = self.bindir.parent / "mods"
        path = root.joinpath(*dotted.split("."))
        for parent in [root.joinpath(*dotted.split(".")[:i]) for i in range(1, dotted.count(".") + 1)]:
            parent.mkdir(parents=True, exist_ok=True)
            (parent / "__init__.py").write_text("")
        path.with_suffix(".py").write_text(SLEEP + "\n")
        argv = [sys.executable, "-m", dotted, *args]
        return self._spawn(argv, argv, env={"PYTHONPATH": str(root)})

    def titled(self, title: str, code: str = SLEEP) -> subprocess.Popen:
        args = [title, "-c", code]
        return self._spawn(args, args, executable=sys.executable)

    def close(self) -> None:
        for pid in self.extra_pids:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        for p in self.procs:
            p.kill()
            p.wait()


def _wait_cmdline(pid: int, args: list[str]) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).cmdline() == args:
                return
        except psutil.NoSuchProcess:
            pass
        time.sleep(0.005)
    raise AssertionError(f"child {pid} never showed {args}")
