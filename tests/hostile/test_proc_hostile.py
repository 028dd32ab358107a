"""Every /proc and /sys parser sparktui has, fed anything (issue 15, item 5).

/proc/meminfo and /proc/pressure/memory (probes/host.py), /proc/<pid>/stat and cmdline, /proc/stat's
btime and the memory caps read from a server's argv, environment and config file
(probes/processes.py), /proc/1/cgroup, /proc/self/mountinfo and the container markers
(probes/container.py), kernel log lines and journal records (probes/kernel_log.py), and the
ConnectX-7's sysfs files (probes/link.py): arbitrary bytes, truncated lines, huge and negative
numbers and missing fields give no exception, values no kernel writes are left out or named as
errors (never zeros, never taken as readings), and the time spent is bounded.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core.config import Config
from sparktui.probes import container, host, kernel_log, link, processes
from tests.gotchas.builders import HALVES, make_nic

# Bytes as /proc files could hold them: real-looking tokens in any order, plus anything at all.
TOKENS = [b"MemTotal:", b"MemAvailable:", b"MemFree:", b"SwapTotal:", b"HugePages_Total:", b" ", b"\t", b"\n",
          b"kB", b"-1", b"0", b"7", b"131072000", b"99999999999999999999999", b"1e308", b"nan", b"inf", b"-5",
          b"some", b"full", b"avg10=", b"avg60=", b"total=", b"=", b"btime", b"(", b")", b"S", b"\x00", b"\xff",
          b"0::/", b"docker", b"kubepods", b" - ", b"overlay", b"/", b"NVRM: Xid (PCI:0000:01:00): ", b"79",
          b", pid=", b"'<unknown>'", b"6,1,", b",-;", b"[", b".5]", b"Out of memory: Killed process ",
          b"anon-rss:", b"oom-kill:", b",task=", b"AER: ", b"Corrected", b"9" * 400]
BLOBS = st.one_of(st.lists(st.sampled_from(TOKENS), max_size=60).map(b"".join), st.binary(max_size=500),
                  st.text(max_size=300).map(lambda s: s.encode("utf-8", "surrogatepass")))


def plain(x) -> None:
    """Readings are JSON (snapshots, recordings): no NaN, no infinity, no bytes."""
    json.dumps(x, allow_nan=False)


# --- /proc/meminfo and PSI ---------------------------------------------------------------------------


@settings(max_examples=200)
@given(BLOBS)
def test_meminfo_of_any_bytes_is_non_negative_integers(blob):
    mem = host.parse_meminfo(blob.decode("ascii", "replace"))
    plain(mem)
    assert all(type(v) is int and 0 <= v < host.MAX_MEMINFO * 1024 for v in mem.values())


def test_meminfo_values_no_kernel_writes_are_left_out_and_said(tmp_path):
    assert host.parse_meminfo("MemAvailable: -1 kB\nMemFree: 99999999999999999999999 kB\nSwapFree: 5 kB\n") == {
        "SwapFree": 5120}
    for text, said in (("MemTotal: 0 kB\nMemAvailable: 100 kB\n", "MemTotal 0 bytes"),
                       ("MemTotal: 100 kB\nMemAvailable: 200 kB\n", "MemAvailable 204800 bytes > MemTotal 102400")):
        path = tmp_path / "meminfo"
        path.write_text(text)
        r = host.read_meminfo(Config(), str(path), str(tmp_path / "no-psi"))
        assert r.error == f"impossible values in {path} (left out): {said}"
        assert said.split()[0] not in r.data


@settings(max_examples=200)
@given(BLOBS)
def test_psi_of_any_bytes_is_finite_figures_or_says_unreadable(blob):
    try:
        psi = host.parse_psi(blob.decode("ascii", "replace"))
    except ValueError as e:
        assert str(e).startswith("no 'some' or 'full' line")
        return
    plain(psi)
    assert set(psi) <= {"some", "full"} and all(math.isfinite(v) for d in psi.values() for v in d.values())


def test_psi_with_a_blank_line_is_read():
    text = "some avg10=1.00 avg60=2.00 avg300=3.00 total=4\n\nfull avg10=0.50 avg60=0 avg300=0 total=1\n"
    assert host.parse_psi(text) == {"some": {"avg10": 1.0, "avg60": 2.0, "avg300": 3.0, "total": 4.0},
                                    "full": {"avg10": 0.5, "avg60": 0.0, "avg300": 0.0, "total": 1.0}}


# --- /proc/<pid>/stat, cmdline, /proc/stat ----------------------------------------------------------


def stat_line(pid: int, comm: str, ppid: str = "1", flags: str = "4194304", ticks: str = "500") -> str:
    return f"{pid} ({comm}) S {ppid} 1 1 0 -1 {flags} " + "0 " * 12 + ticks + " 0" * 30


@settings(max_examples=200)
@given(BLOBS)
def test_a_stat_line_of_any_bytes_is_its_fields_or_none(blob):
    parsed = processes.parse_stat(blob.decode("utf-8", "replace"))
    assert parsed is None or (isinstance(parsed[0], str) and min(parsed[1:]) >= 0)


def test_negative_fields_make_no_process():
    for field in ("ppid", "flags", "ticks"):
        assert processes.parse_stat(stat_line(5, "x", **{field: "-3"})) is None
    assert processes.parse_stat(stat_line(5, "a) (b")) == ("a) (b", 1, 4194304, 500)  # the last ')' ends the name


def fake_proc(root: Path, btime: bytes, entries: dict[str, tuple[bytes, bytes]]) -> Path:
    (root / "self").mkdir(parents=True)
    (root / "self" / "stat").write_text(stat_line(1, "self"))
    (root / "stat").write_bytes(b"cpu 1 2 3\n" + btime + b"\n")
    for name, (stat, cmdline) in entries.items():
        (root / name).mkdir()
        (root / name / "stat").write_bytes(stat)
        (root / name / "cmdline").write_bytes(cmdline)
    return root


NAMES = st.sampled_from(["100", "101", "²", "٣", "1x", "0"])


@settings(max_examples=150)
@given(BLOBS, st.dictionaries(NAMES, st.tuples(st.one_of(BLOBS, st.just(stat_line(7, "python3").encode())), BLOBS),
                              max_size=4))
def test_a_fake_proc_of_any_bytes_lists_plain_rows(tmp_path, btime, entries):
    root = fake_proc(Path(tempfile.mkdtemp(dir=tmp_path)), b"btime " + btime, entries)
    rows, skipped = processes.ProcLister(str(root)).list()
    plain(rows)
    assert {r["pid"] for r in rows} <= {int(n) for n in entries if n.isascii() and n.isdigit()}
    assert all(r["ppid"] >= 0 and isinstance(r["name"], str) and all(isinstance(a, str) for a in r["cmdline"])
               for r in rows)
    assert sum(skipped.values()) + len(rows) == sum(1 for n in entries if n.isascii() and n.isdigit())


def test_a_btime_that_is_no_time_and_digit_lookalike_pids_do_not_stop_the_scan(tmp_path):
    for btime in (b"btime", b"btime x", b"btime nan", b"btime -5"):
        root = fake_proc(Path(tempfile.mkdtemp(dir=tmp_path)), btime, {
            "²": (stat_line(9, "odd").encode(), b"x\0"),
            "100": (stat_line(100, "python3").encode(), b"python3\0-m\0vllm.entrypoints.openai.api_server\0"),
            "101": (b"101 (broken) S -1 1", b"")})
        lister = processes.ProcLister(str(root))
        rows, skipped = lister.list()
        assert [(r["pid"], r["server"]) for r in rows] == [(100, "vllm")]
        assert skipped == {"vanished": 0, "denied": 0, "unreadable": 1}


@settings(max_examples=200)
@given(st.binary(max_size=400), st.text(max_size=20))
def test_any_argv_is_split_and_classified(raw, name):
    cmd = processes._split_cmdline(raw)
    assert all(isinstance(a, str) for a in cmd)
    kind, server, label = processes.classify(name, cmd)
    assert kind in ("server", "training", "other", "") and isinstance(label, str)


CAP_FLAGS = ["--gpu-memory-utilization", "--mem-fraction-static", "--kv_cache_free_gpu_memory_fraction",
             "--cuda-memory-fraction", "--config", "-ngl", "--ctx-size"]
CAP_VALUES = ["0.5", "50", "nan", "inf", "-1", "0", "1e308", "150", "", "x", "1", "0.0001", "-0"]


@settings(max_examples=300)
@given(st.sampled_from(["vllm", "sglang", "trtllm", "tgi", "nim", "ollama", "llamacpp", "triton", "other"]),
       st.lists(st.one_of(st.sampled_from(CAP_FLAGS), st.sampled_from(CAP_VALUES), st.text(max_size=8)), max_size=8),
       st.dictionaries(st.sampled_from(["NIM_GPU_MEM_FRACTION", "NIM_KVCACHE_PERCENT", "CUDA_MEMORY_FRACTION"]),
                       st.one_of(st.sampled_from(CAP_VALUES), st.text(max_size=8)), max_size=3),
       st.one_of(st.none(), st.just("permission denied")))
def test_a_memory_cap_from_any_argv_and_environment_is_a_share_or_not_set(server, tokens, env, env_error):
    cap = processes.parse_cap(server, tokens, env, env_error)
    plain(cap)
    assert cap["state"] in ("set", "default", "none", "unreadable", "n/a")
    assert cap["fraction"] is None or 0 < cap["fraction"] <= 1
    assert cap["state"] != "set" or cap["fraction"] is not None


def test_a_cap_given_as_no_share_is_unreadable_never_the_default():
    for v in ("nan", "inf", "-1", "0", "150", "1e308", "half"):
        cap = processes.parse_cap("vllm", ["vllm", "serve", "m", "--gpu-memory-utilization", v], None, None)
        assert (cap["state"], cap["fraction"]) == ("unreadable", None), (v, cap)
        assert cap["source"] == f"--gpu-memory-utilization {v}: not a share of memory (0 < x <= 1, or a percentage)"
    cap = processes.parse_cap("nim", [], {"NIM_GPU_MEM_FRACTION": "nan"}, None)
    assert cap["state"] == "unreadable"


def within(seconds: float, fifos: list[Path], fn):
    """``fn()``'s result if it returns within ``seconds``; else the FIFOs it is blocked on are opened
    for writing (so its thread ends) and the test fails."""
    out: list = []
    worker = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    blocked = worker.is_alive()
    if blocked:
        for fifo in fifos:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
    assert not blocked, f"blocked for more than {seconds} s"
    return out[0]


def test_a_config_file_that_is_a_fifo_is_not_waited_on(tmp_path):
    fifo = tmp_path / "cfg.yaml"
    os.mkfifo(fifo)
    cap = within(5.0, [fifo], lambda: processes.parse_cap("vllm", ["vllm", "serve", "m", "--config", str(fifo)], None, None))
    assert cap["state"] == "default"


# --- container markers, /proc/1/cgroup, mountinfo -----------------------------------------------------


@settings(max_examples=150)
@given(BLOBS, BLOBS, BLOBS, BLOBS)
def test_container_files_of_any_bytes_give_plain_checks(tmp_path, cgroup, mountinfo, containerenv, comm):
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    for rel, blob in (("proc/1/cgroup", cgroup), ("proc/self/mountinfo", mountinfo),
                      ("run/.containerenv", containerenv), ("proc/1/comm", comm)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(blob)
    data = container.inspect(root, {})
    plain(data)
    assert data["in_container"] in (True, None) and all(isinstance(c["seen"], str) for c in data["checks"])
    plain(processes.detect_container((), str(root / "proc")))


def test_a_marker_that_is_a_fifo_is_seen_but_never_read(tmp_path):
    fifos = [tmp_path / ".dockerenv", tmp_path / "run" / ".containerenv"]
    (tmp_path / "run").mkdir()
    for fifo in fifos:
        os.mkfifo(fifo)
    data = within(5.0, fifos, lambda: container.inspect(tmp_path, {}))
    assert data["runtime"] == "docker"
    assert data["checks"][0]["seen"] == "present (not a regular file: not read)"


# --- kernel log lines and journal records -------------------------------------------------------------


@settings(max_examples=200)
@given(st.lists(BLOBS.map(lambda b: b.decode("utf-8", "replace")), max_size=12),
       st.one_of(st.none(), st.floats(0, 2e9)))
def test_kernel_log_lines_of_any_bytes_give_plain_events(lines, boot):
    events = list(kernel_log.parse_lines(lines, boot))
    plain(events)
    assert all(e["t"] is None or math.isfinite(e["t"]) for e in events)
    assert all(len(e["text"]) <= kernel_log.MAX_TEXT for e in events)


def test_a_timestamp_of_400_digits_is_no_time():
    for line in ("6,1," + "9" * 400 + ",-;NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=x",
                 "[" + "9" * 400 + ".5] NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=x"):
        ev = kernel_log.parse_line(line, 1.0)
        assert ev is not None and (ev["kind"], ev["xid"], ev["t"]) == ("xid", 79, None)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                           lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                           max_leaves=12)


@settings(max_examples=200)
@given(st.one_of(st.fixed_dictionaries({}, optional={"MESSAGE": JSON_VALUES, "__REALTIME_TIMESTAMP": JSON_VALUES,
                                                     "_BOOT_ID": JSON_VALUES}), JSON_VALUES))
def test_a_journal_record_of_any_shape_is_a_message_or_nothing(rec):
    got = kernel_log.journal_record(json.dumps(rec))
    assert got is None or (isinstance(got[0], str) and (got[1] is None or math.isfinite(got[1]))
                           and (got[2] is None or isinstance(got[2], str)))


def test_journalctl_output_with_times_no_float_holds_is_read(tmp_path):
    lines = [{"MESSAGE": "NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=x", "__REALTIME_TIMESTAMP": t}
             for t in (1e308, "9" * 400, -5, [1], "1700000000000000")]
    out = tmp_path / "journal.json"
    out.write_text("\n".join(json.dumps(x) for x in lines) + "\n[1,2]\n{\"MESSAGE\": 5}\n" + "{" * 100_000 + "\n")
    col, note = kernel_log.read_journal(("cat", str(out)), timeout_s=30)
    data = col.data("boot", note)
    plain(data)
    assert [e["t"] for e in data["events"]] == [None, None, None, None, 1.7e9]


# --- the ConnectX-7's sysfs files -----------------------------------------------------------------------


@settings(max_examples=120)
@given(st.lists(BLOBS, min_size=7, max_size=7), st.sampled_from(["1", "²", "x", "01"]))
def test_sysfs_files_of_any_bytes_give_a_plain_link_reading(tmp_path, blobs, port):
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    name, pci, rdma = HALVES[0]
    make_nic(root, name, pci, rdma)
    net = root / "sys" / "class" / "net" / name
    p = root / "sys" / "class" / "infiniband" / rdma / "ports" / "1"
    for f, blob in zip((net / "mtu", net / "speed", net / "carrier", p / "counters" / "port_rcv_data",
                        p / "counters" / "port_xmit_data", p / "gids" / "0", p / "state"), blobs):
        f.write_bytes(blob)
    if port != "1":
        p.rename(p.parent / port)
    data, err = link.scan(str(root), {})
    assert err is None
    plain(data)
    iface = data["interfaces"][0]
    assert all(iface[k] is None or iface[k] >= 0 for k in ("mtu", "carrier", "speed_mbps"))
    assert all(v >= 0 for q in iface["rdma"] for v in q["counters"].values())
    reader = link.RdmaReader(str(root))
    for now in (1.0, 2.0):
        got, why = reader.read(now)
        assert got is None or why is None  # figures, or why not: never both
        plain(got)


NCCL_TOKENS = ["NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_IB_GID_INDEX", "=", ":", " ", "\n", "\"", "'", "export ",
               "ENV ", "-e ", "#", "//", ",", "}", "]", "mlx5_0", "$", "\x00", "\ufffd"]


@settings(max_examples=150)
@given(st.dictionaries(st.sampled_from(list(link.NCCL_VARS) + ["X"]), st.text(max_size=20), max_size=3),
       st.lists(st.lists(st.sampled_from(NCCL_TOKENS), max_size=40).map("".join) | st.text(max_size=200), max_size=3))
def test_nccl_settings_from_any_environment_and_launch_file_are_strings(env, texts):
    got = link.nccl_settings(env, [(f"f{i}.sh", t) for i, t in enumerate(texts)])
    plain(got)
    assert set(got) <= set(link.NCCL_VARS)
    assert all(isinstance(e["value"], str) for v in got.values() for e in v)


def test_negative_counters_and_sizes_are_not_readings(tmp_path):
    name, pci, rdma = HALVES[0]
    make_nic(tmp_path, name, pci, rdma)
    net = tmp_path / "sys" / "class" / "net" / name
    counters = tmp_path / "sys" / "class" / "infiniband" / rdma / "ports" / "1" / "counters"
    (net / "mtu").write_text("-9000\n")
    (counters / "port_rcv_data").write_text("-5\n")
    data, _ = link.scan(str(tmp_path), {})
    iface = data["interfaces"][0]
    assert iface["mtu"] is None
    assert "port_rcv_data" not in iface["rdma"][0]["counters"] and "port_rcv_data_bytes" not in iface["rdma"][0]
    got, why = link.RdmaReader(str(tmp_path)).read(1.0)
    assert got is None and why.endswith("unreadable: not a number")


def test_a_port_folder_named_with_a_digit_lookalike_is_kept_by_name(tmp_path):
    name, pci, rdma = HALVES[0]
    make_nic(tmp_path, name, pci, rdma)
    ports = tmp_path / "sys" / "class" / "infiniband" / rdma / "ports"
    (ports / "1").rename(ports / "²")
    (ports / "²" / "gids" / "٣").write_text("fe80::1")
    data, _ = link.scan(str(tmp_path), {})
    assert [q["port"] for q in data["interfaces"][0]["rdma"]] == ["²"]


# --- bounded ----------------------------------------------------------------------------------------


def test_megabyte_inputs_are_parsed_in_bounded_time(tmp_path):
    junk = ("MemTotal: 1 kB some avg10=1 (x) NVRM: Xid (PCI:0000:01:00): 79, pid=" * 20_000)[:1 << 20]
    t0 = time.thread_time()
    host.parse_meminfo(junk)
    try:
        host.parse_psi(junk)
    except ValueError:
        pass
    processes.parse_stat(junk)
    list(kernel_log.parse_lines([junk] * 50))
    big = tmp_path / "speed"
    big.write_bytes(b"1" * (8 << 20))
    assert link._int(big) is None or link._int(big) >= 0  # one page read, not 8 MB
    assert time.thread_time() - t0 < 2.0
