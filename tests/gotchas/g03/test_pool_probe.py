"""probes/pool.py (issue 26, item 3): tmpfs sizes, hugepages of every size, swap and zram, parsed
from real public text.

Sources of the text below:
- /proc/mounts lines of a host's /dev/shm and /tmp: coreos/bugs #2629
  (https://github.com/coreos/bugs/issues/2629): ``tmpfs /dev/shm tmpfs rw,seclabel,nosuid,nodev 0 0``.
- A Docker container's /dev/shm, the 64 MiB default of ``--shm-size`` (df shows ``tmpfs 64M ... /dev/shm``
  in moby/moby #6758, https://github.com/moby/moby/issues/6758): the kernel prints the limit as
  ``size=65536k`` (mm/shmem.c ``shmem_show_options``).
- /proc/swaps with a zram device and ``zramctl`` of it (DATA 4K, COMPR 80B, TOTAL 12K): Fedora's
  QA:Testcase_SwapOnZRAM_disable (https://fedoraproject.org/wiki/QA:Testcase_SwapOnZRAM_disable);
  mm_stat's first fields are orig_data_size, compr_data_size, mem_used_total in bytes
  (https://docs.kernel.org/admin-guide/blockdev/zram.html).
- Hugepages per size under /sys/kernel/mm/hugepages/hugepages-<N>kB/{nr,free,resv,surplus}_hugepages
  (https://docs.kernel.org/admin-guide/mm/hugetlbpage.html).
"""

from __future__ import annotations

from pathlib import Path

from sparktui.core.config import Config
from sparktui.core.readings import checked
from sparktui.probes import pool

COREOS_MOUNTS = ("rootfs / rootfs rw 0 0\n"
                 "tmpfs /dev/shm tmpfs rw,seclabel,nosuid,nodev 0 0\n"
                 "tmpfs /tmp tmpfs rw,seclabel,nosuid,nodev 0 0\n"
                 "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n")
DOCKER_SHM = "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n"
FEDORA_SWAPS = ("Filename                                Type            Size            Used            Priority\n"
                "/dev/zram0                              partition       8388604         0               100\n")
FEDORA_MM_STAT = "    4096       80    12288        0    12288        0        0        0\n"


def test_mounts_keep_only_memory_backed_file_systems():
    got = pool.parse_mounts(COREOS_MOUNTS)
    assert got == [{"mountpoint": "/dev/shm", "fstype": "tmpfs", "size_option_bytes": None},
                   {"mountpoint": "/tmp", "fstype": "tmpfs", "size_option_bytes": None}]


def test_a_containers_default_shm_size_is_64_mib():
    assert pool.parse_mounts(DOCKER_SHM) == [{"mountpoint": "/dev/shm", "fstype": "tmpfs",
                                              "size_option_bytes": 64 * 1024 * 1024}]


def test_size_options_and_escaped_mount_points():
    assert pool.size_option("rw,size=2g,mode=1777") == 2 << 30
    assert pool.size_option("rw,size=50%") is None  # not what the kernel prints: no size, never a guess
    assert pool.size_option("rw,nosuid") is None
    got = pool.parse_mounts("tmpfs /run/user/1000/my\\040dir tmpfs rw,size=1024k 0 0\n")
    assert got[0]["mountpoint"] == "/run/user/1000/my dir" and got[0]["size_option_bytes"] == 1 << 20


def test_a_mount_stacked_on_the_same_point_hides_the_one_below():
    got = pool.parse_mounts("tmpfs /dev/shm tmpfs rw 0 0\n" + DOCKER_SHM)
    assert len(got) == 1 and got[0]["size_option_bytes"] == 64 << 20


def test_swaps_with_zram():
    assert pool.parse_swaps(FEDORA_SWAPS) == [{"name": "/dev/zram0", "type": "partition", "size_bytes": 8388604 * 1024,
                                               "used_bytes": 0, "priority": 100, "zram": True}]
    assert pool.parse_swaps("Filename Type Size Used Priority\n/swap.img file 10 20 -2\n") == []  # used > size
    assert pool.parse_swaps("Filename Type Size Used Priority\n/swap.img file x 0 -2\n") == []


def test_mm_stat_of_the_fedora_zram_device():
    assert pool.parse_mm_stat(FEDORA_MM_STAT) == {"orig_data_bytes": 4096, "compr_data_bytes": 80,
                                                  "mem_used_bytes": 12288}
    assert pool.parse_mm_stat("12 x") is None and pool.parse_mm_stat("") is None


def _tree(tmp_path: Path) -> dict[str, str]:
    mounts = tmp_path / "mounts"
    shm = tmp_path / "shm"
    shm.mkdir()
    mounts.write_text(f"shm {shm} tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n" + COREOS_MOUNTS)
    swaps = tmp_path / "swaps"
    swaps.write_text(FEDORA_SWAPS)
    huge = tmp_path / "hugepages"
    for size, nr, free, resv in (("2048kB", 1024, 1000, 24), ("1048576kB", 0, 0, 0)):
        d = huge / f"hugepages-{size}"
        d.mkdir(parents=True)
        for name, v in (("nr_hugepages", nr), ("free_hugepages", free), ("resv_hugepages", resv),
                        ("surplus_hugepages", 0)):
            (d / name).write_text(f"{v}\n")
    block = tmp_path / "block"
    (block / "zram0").mkdir(parents=True)
    (block / "zram0" / "disksize").write_text("8589930496\n")
    (block / "zram0" / "mm_stat").write_text(FEDORA_MM_STAT)
    (block / "sda").mkdir()
    return {"mounts": str(mounts), "swaps": str(swaps), "hugepages": str(huge), "block": str(block), "shm": str(shm)}


def test_read_measures_tmpfs_and_reads_every_part(tmp_path):
    paths = _tree(tmp_path)
    r = pool.read(Config(), paths["mounts"], paths["swaps"], paths["hugepages"], paths["block"])
    assert r.error is None and checked(r).error is None  # the declared shape (core/shapes.py PoolData)
    d = r.data
    first = d["tmpfs"][0]
    assert first["mountpoint"] == paths["shm"] and first["size_option_bytes"] == 64 << 20
    assert first["size_bytes"] > 0 and first["used_bytes"] >= 0  # statvfs of a real directory
    assert d["hugepages"] == [{"size_bytes": 1 << 30, "total": 0, "free": 0, "reserved": 0, "surplus": 0},
                              {"size_bytes": 2 << 20, "total": 1024, "free": 1000, "reserved": 24, "surplus": 0}]
    assert d["swaps"][0]["zram"] is True
    assert d["zram"] == [{"name": "zram0", "disksize_bytes": 8589930496, "orig_data_bytes": 4096,
                          "compr_data_bytes": 80, "mem_used_bytes": 12288}]
    assert d["errors"] == {}


def test_what_cannot_be_read_is_named_never_an_empty_list(tmp_path):
    missing = str(tmp_path / "nope")
    r = pool.read(Config(), missing, missing, missing, missing)
    assert r.data is None and "cannot read" in r.error
    paths = _tree(tmp_path)
    r = pool.read(Config(), missing, paths["swaps"], paths["hugepages"], paths["block"])
    assert "tmpfs" not in r.data and r.data["errors"]["mounts"].startswith("cannot read")


def test_a_mount_that_cannot_be_measured_says_why(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text(f"tmpfs {tmp_path / 'gone'} tmpfs rw 0 0\n")
    r = pool.read(Config(), str(mounts), str(tmp_path), str(tmp_path), str(tmp_path))
    row = r.data["tmpfs"][0]
    assert row["size_bytes"] is None and row["error"].startswith("statvfs: ")


def test_the_probe_is_declared():
    from sparktui import probes

    assert "pool" in probes.names()
