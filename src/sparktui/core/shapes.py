"""The declared shape of every probe's reading: what the probe builds and what the judge reads.

A probe's data crosses two boundaries as plain JSON-able dicts (probe -> judge, and live ->
snapshot/recording -> replay), so its keys are the contract. Each reading's data is declared here
as a ``TypedDict``; mypy (run in CI by tests/test_types.py) then checks both sides against the
same declaration, and tests/test_types.py checks at run time that what the probes really build
stays inside it.

Three states, never to be confused (principle 1, "a verdict never lies"):

* **failed**: the probe could not read. ``Reading.data is None`` and ``Reading.error`` says why.
  A failure is never an empty list or dict: ``{"rows": []}`` means "looked, found nothing", so a
  probe that could not look must not return it.
* **partial**: ``data`` is present *and* ``error`` is set (meminfo without MemAvailable, a
  telemetry window whose NVML init failed): what was read is there, what was not is absent or None.
* **read**: ``data`` present, ``error`` None.

Inside data, a field that could not be read is absent or ``None`` with its reason next to it (an
``errors`` map, an ``error`` key, ``{"value": None, "error": ...}``). N/A is ``None``, never 0.

Keys are optional (``total=False``) wherever a probe can legitimately leave them out: an older
recording, a kernel without the field, a failed stage. A judge must then handle the key being
absent (``.get``), which is exactly the check this declaration makes mypy enforce. Required
keys use a required base class (Python 3.10 has no ``typing.Required``).

At the bottom, one typed key per reading (``MEMINFO = Key("meminfo", MemInfoReading)``): a probe
declares the key it fills (probes/*.py ``PROBES``), a judge reads through it (``r.data(MEMINFO)``
is a ``MemInfoReading | None`` to mypy), and ``SHAPES`` is derived from the keys.

This module is pure typing: no I/O, no imports from probes or gotchas, importable by both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Mapping, TypedDict, TypeVar

# --------------------------------------------------------------------------- host, meminfo


class HostData(TypedDict, total=False):
    """Probe "host" (probes/host.py ``read``)."""

    hostname: str
    system: str
    kernel: str
    machine: str  # "aarch64" on a Spark
    cpu_count: int | None
    os_release: str | None  # PRETTY_NAME of /etc/os-release
    dmi_product: str | None  # /sys/class/dmi/id/product_name
    mem_total_bytes: int | None


class MemInfo(TypedDict, total=False):
    """Probe "meminfo" (probes/host.py ``read_meminfo``), and a telemetry sample's ``mem``.

    /proc/meminfo in **bytes** (the kernel's kB times 1024), except the HugePages_* counts, which
    are numbers of pages. A key the kernel does not print is absent, never 0. Shmem (tmpfs,
    /dev/shm) is part of Cached and is not reclaimable: page cache that drop_caches can free is
    about Cached - Shmem (proc(5)).
    """

    MemTotal: int
    MemFree: int
    MemAvailable: int  # absent on kernels before 3.14: the reading is then partial (error set)
    Buffers: int
    Cached: int
    SReclaimable: int
    KReclaimable: int
    Shmem: int
    AnonPages: int
    Mapped: int
    Dirty: int
    Unevictable: int
    Mlocked: int
    CmaTotal: int
    CmaFree: int
    SwapTotal: int
    SwapFree: int
    SwapCached: int
    HugePages_Total: int  # pages
    HugePages_Free: int  # pages
    HugePages_Rsvd: int  # pages
    HugePages_Surp: int  # pages
    Hugepagesize: int  # bytes
    Hugetlb: int  # bytes


class MemInfoReading(MemInfo, total=False):
    """Probe "meminfo": the fields above, and when it comes from samples (core/recording.py
    ``readings_from_samples``) which sample it is."""

    t: float  # the sample's time (from samples only)
    t0: float  # the first sample's time (the lowest-MemAvailable pick of a review)
    series: list[list[Any]]  # [[t, MemAvailable, MemFree or None], ...]: the recent samples (live)
    skipped_implausible: int  # samples not picked: MemAvailable outside 0..MemTotal
    review: bool  # the pick is the worst moment of a whole recording
    low_free: dict[str, Any]  # review: the figures (and "t") of the moment MemFree was lowest, when another sample
    psi: dict[str, PsiLine]  # /proc/pressure/memory: "some" and/or "full" (one-shot read only; not in samples)
    psi_error: str  # why PSI was not read (absent: kernel without PSI or psi=0; unreadable; garbage)


class PsiLine(TypedDict, total=False):
    """One line of /proc/pressure/memory (probes/host.py ``parse_psi``): the share of wall time in
    percent that some (or all, for "full") non-idle tasks were stalled on memory, averaged over 10 s,
    60 s and 300 s; ``total`` in microseconds since boot. A value the kernel did not print is absent."""

    avg10: float
    avg60: float
    avg300: float
    total: float


# --------------------------------------------------------------------------- NVML static facts


class NvmlStrField(TypedDict, total=False):
    """One NVML answer (probes/nvml.py ``Field.to_dict``): ``value`` None with ``error`` when the
    driver did not answer (NOT_SUPPORTED is GB10's answer for device memory and power limits)."""

    value: str | None
    error: str


class NvmlIntField(TypedDict, total=False):
    value: int | None
    error: str


class NvmlFloatField(TypedDict, total=False):
    value: float | None
    error: str


class NvmlCapabilityField(TypedDict, total=False):
    value: list[int] | None  # [12, 1] on GB10
    error: str


class NvmlMemory(TypedDict):
    total: int
    free: int
    used: int


class NvmlMemoryField(TypedDict, total=False):
    value: NvmlMemory | None
    error: str


class NvmlDevice(TypedDict, total=False):
    index: int
    name: NvmlStrField
    uuid: NvmlStrField
    compute_capability: NvmlCapabilityField
    memory: NvmlMemoryField
    power_limit_w: NvmlFloatField
    power_default_limit_w: NvmlFloatField
    max_sm_mhz: NvmlFloatField  # nvmlDeviceGetMaxClockInfo(SM): the clock plot's scale
    # dcgm-exporter's labels (fleet/dcgm.py): nvmlDeviceGetPciInfo's busId, nvmlDeviceGetMinorNumber
    pci_bus_id: NvmlStrField  # "0000000F:01:00.0"
    minor_number: NvmlIntField  # the device node: /dev/nvidia<minor>
    # nvmlDeviceGetClock(GRAPHICS / MEM, APP_CLOCK_TARGET / APP_CLOCK_DEFAULT): G4's clocks set by hand
    app_clock_gr_mhz: NvmlFloatField
    default_app_clock_gr_mhz: NvmlFloatField
    app_clock_mem_mhz: NvmlFloatField
    default_app_clock_mem_mhz: NvmlFloatField


class NvmlStatic(TypedDict, total=False):
    """Probe "nvml" (probes/nvml.py ``static_info``), also a recording header's and a telemetry
    reading's ``static``. When NVML could not start, a header's static is only ``{"error": ...}``
    (and the "nvml" reading is failed: data None)."""

    driver_version: NvmlStrField
    cuda_driver_version: NvmlStrField  # "13.0"
    nvml_version: NvmlStrField
    devices: list[NvmlDevice]
    error: str  # set when the session opened but a later call (device count) failed


# --------------------------------------------------------------------------- telemetry


class _GpuRowBase(TypedDict):
    index: int


class GpuRow(_GpuRowBase, total=False):
    """One GPU in a telemetry sample (probes/sampler.py ``GpuReader.read``; core/telemetry.py).

    Every field is None when unread, with its reason in ``errors[field]``. A GPU whose whole read
    failed has only ``index`` and ``errors["all"]``. The counters are cumulative nanoseconds since
    driver load and are read at their own, slower cadence; between reads a sample carries the
    last value read."""

    temp_c: int | None
    power_w: float | None
    power_limit_w: float | None
    energy_mj: int | None  # nvmlDeviceGetTotalEnergyConsumption: mJ since the driver loaded (a counter)
    sm_mhz: int | None
    gr_mhz: int | None
    mem_mhz: int | None
    util_gpu: int | None
    util_mem: int | None
    reasons_mask: int | None  # nvmlClocksEventReason* bits, instantaneous
    reasons: list[str] | None  # the mask decoded (core/telemetry.py REASON_BITS)
    # nvidia-smi's five "Clocks Event Reasons Counters" (NVML field values): field ids 74, 76, 269, 270, 271
    sw_power_cap_ns: int | None
    sync_boost_ns: int | None
    sw_thermal_ns: int | None
    hw_thermal_ns: int | None  # HW thermal slowdown: power-fault evidence
    hw_power_brake_ns: int | None  # HW power brake: power-fault evidence
    thermal_policy_ns: int | None  # field 75, the older thermal policy counter: only where 269 fails
    # recordings made before the five counters (core/telemetry.py LEGACY_COUNTERS)
    power_viol_ns: int | None  # = sw_power_cap_ns (field 74)
    thermal_viol_ns: int | None  # = thermal_policy_ns (field 75), not nvidia-smi's SW thermal slowdown
    mem_used: int | None  # bytes; NOT_SUPPORTED on GB10
    mem_total: int | None
    errors: dict[str, str]  # field -> reason it is None


class _SampleBase(TypedDict):
    t: float  # unix time


class Sample(_SampleBase, total=False):
    """One telemetry sample (core/telemetry.py documents it; the same live, recorded or replayed)."""

    gpus: list[GpuRow]
    mem: MemInfo  # the sampled subset of /proc/meminfo (core/telemetry.py MEM_FIELDS)
    errors: dict[str, str]  # "nvml", "meminfo": why a whole source is missing from this sample


class TelemetryData(TypedDict, total=False):
    """Probe "telemetry" (probes/sampler.py ``gather``; core/recording.py when replaying)."""

    samples: list[Sample]
    window_s: float  # the span the samples really cover
    requested_window_s: float | None  # None: a whole recording
    interval_s: float | None  # None: a recording whose header did not say
    counters_read_t: list[float]  # times of the samples that read the counters afresh (live only)
    static: NvmlStatic
    source: str  # "live", or where a replay came from
    review: bool  # True when the samples are a whole recording under review, not a live window


# --------------------------------------------------------------------------- processes


class ProcessCap(TypedDict):
    """A server's memory cap (probes/processes.py ``parse_cap``).

    ``state``: "set" (flag, env or config), "default" (flag absent: the server's default applies),
    "none" (the server has no fractional cap), "unreadable" (the environment holding it was
    denied), "n/a" (a helper process without GPU memory)."""

    state: str
    fraction: float | None  # of the whole pool; None when the server has none or it is unknown
    source: str
    detail: str


class ProcessRowContainer(TypedDict, total=False):
    """The container a process runs in (probes/processes.py ``parse_cgroup`` + ``container_name``)."""

    runtime: str  # "docker" | "containerd" | "cri-o" | "podman" | "kubepods"
    id: str  # the container's id as its cgroup path names it
    name: str | None  # from docker's/podman's store; None: unknown (the UI shows the short id)


class _ProcessRowBase(TypedDict):
    pid: int


class ProcessRow(_ProcessRowBase, total=False):
    """One process of interest (probes/processes.py ``describe``/``scan``)."""

    ppid: int | None
    user: str | None
    kind: str  # "server" | "training" | "gpu-process" | "other"
    server: str | None  # "vllm" | "sglang" | "llamacpp" | "ollama" | "trtllm" | "nim" | "triton" | "tgi"
    name: str
    process_name: str
    command: str  # secrets scrubbed, at most 400 characters
    gpu_mem_bytes: int | None  # what NVML shows it holding; None: not listed, or N/A (never 0)
    on_gpu: bool  # listed by NVML
    gpu_list: str  # "compute" | "graphics"
    rss_bytes: int | None  # host RSS: does not show what it holds on the GPU
    age_s: float | None
    cap: ProcessCap | None
    env: dict[str, str] | str  # memory-relevant variables, or "unreadable"
    group: int  # pid of the instance's top process (a launcher and its workers share it)
    started: float | None  # create time (epoch s): with the pid, the process's identity (a signal checks it)
    cpu_pct: float | None  # % of one core since the last scan; None on a process's first scan (n/a, never 0)
    gpu_util: int | None  # SM % from NVML's per-process samples; None where NVML gives none (n/a, never 0)
    container: ProcessRowContainer | None  # from /proc/PID/cgroup; None: not in one


class NvmlProcessSummary(TypedDict):
    ok: bool  # at least one NVML process list was read
    error: str | None
    count: int  # pids NVML listed


class ProcessContainer(TypedDict, total=False):
    """Does the scanner run in a container (probes/processes.py ``detect_container``)? Inside one,
    NVML's process list is empty: an empty list there means "cannot see", not "nothing runs"."""

    inside: bool | None  # None: cannot tell
    markers: list[str]
    cgroup_words: list[str]
    pid1: str | None


class ProcessSkipped(TypedDict):
    vanished: int
    denied: int


class ProcessSnapshot(TypedDict, total=False):
    """One process scan (probes/processes.py ``scan``); a recording keeps these at a lower rate."""

    rows: list[ProcessRow]
    nvml: NvmlProcessSummary
    container: ProcessContainer
    skipped: ProcessSkipped
    own_excluded: int  # sparktui's own children and probe scripts, left out: never the user's workload
    scanned: int  # processes listed
    t: float
    scan_error: str  # the listing failed: then there is no "rows" at all (and the reading has the error)
    others: list[ProcessRow]  # every other process, kind "other": only while the dashboard lists them all
    all: bool  # whether "others" was asked for
    mem_total_bytes: int | None  # MemTotal: the pool a row's share ((GPU memory + RSS) / MemTotal) is of
    gpu_util_error: str | None  # why NVML gave no per-process utilisation; None when it gave some


class ProcessesData(ProcessSnapshot, total=False):
    """Probe "processes": the latest scan; under review, every scan of the recording too."""

    history: list[ProcessSnapshot]  # oldest first (recordings under review)
    review: bool


# --------------------------------------------------------------------------- target interpreter


class StageInfo(TypedDict, total=False):
    """How one stage of target_script.py went (probes/target.py ``_run_mode``)."""

    status: str  # "done" | "error" | "skipped" | "crashed" | "hung" | "cancelled" | "not reached"
    seconds: float | None
    warnings: list[str]
    error_type: str | None  # "ImportError" ...
    error: str | None
    signal: str | None  # "SIGSEGV" when the stage killed the process


class Crash(TypedDict, total=False):
    """A run of target_script.py that did not end cleanly (probes/target.py ``_crash_of``)."""

    mode: str  # "env" | "torch" | "bandwidth"
    stage: str | None
    returncode: int | None
    stderr_tail: str
    kind: str  # "signal" | "hung" | "cancelled" | "no-output" | "exit"
    seconds: float  # hung: the timeout it ran into
    signal: str | None


class PythonFacts(TypedDict, total=False):
    executable: str
    version: str  # "3.12.3"
    implementation: str
    prefix: str
    base_prefix: str
    machine: str
    system: str
    env: dict[str, str]  # CUDA/NGC-relevant variables that are set (target_script.py ENV_KEYS)


class CudartLoad(TypedDict, total=False):
    """A ctypes load of one libcudart soname in the target interpreter."""

    loaded: bool
    paths: list[str]
    runtime_version: int | None  # cudaRuntimeGetVersion: 13000 for 13.0
    runtime_version_error: str
    error: str  # why the load failed


class TorchInfo(TypedDict, total=False):
    version: str | None
    cuda: str | None  # the CUDA torch was built against; None for a CPU build
    hip: str | None
    git_version: str | None
    file: str | None
    cudnn: int | None
    cudnn_error: str
    nccl: str
    nccl_error: str


class TorchDevice(TypedDict):
    index: int
    name: str
    capability: list[int]  # [12, 1] on GB10


class TorchCuda(TypedDict, total=False):
    available: bool
    arch_list: list[str]  # ["sm_80", ..., "sm_120"]
    arch_list_error: str
    device_count: int
    devices: list[TorchDevice]


class FlashAttnInfo(TypedDict, total=False):
    version: str | None
    file: str | None


class CudaSmoke(TypedDict, total=False):
    ran: bool
    reason: str  # why it did not run
    gated: bool  # not run: MemAvailable under G3's floor (probes/target.py smoke_gate)
    mem_available_bytes: int  # the figure the gate read
    floor_gib: float  # memory.available_floor_gib
    value: float
    seconds: float


class TargetData(TypedDict, total=False):
    """Probe "target" (probes/target.py ``probe_interpreter`` + ``read``).

    A stage that did not complete leaves its key None (``torch`` is None when ``import torch``
    failed); ``stages[name]`` says why. A target that could not be started at all is a failed
    reading (data None), never a TargetData."""

    stages: dict[str, StageInfo]  # "python", "packages", "cudart", "import torch", "torch.cuda", ...
    crashes: list[Crash]
    python: PythonFacts | None
    packages: dict[str, str | None] | None  # distribution -> version (None: not installed); None: unread
    packages_unread: dict[str, str]  # distribution -> why its version could not be read
    packages_error: str  # why there is no package list at all (packages is None)
    cudart: dict[str, CudartLoad] | None  # soname -> load result
    torch: TorchInfo | None
    torch_cuda: TorchCuda | None
    flash_attn: FlashAttnInfo | None
    cuda_smoke: CudaSmoke | None
    interpreter: str
    selected_by: str


# --------------------------------------------------------------------------- cudalibs, container, pins


class LdconfigEntry(TypedDict):
    soname: str  # "libcudart.so.13"
    major: str | None  # "13"
    flags: str  # "libc6,AArch64"
    path: str


class CudalibsData(TypedDict):
    """Probe "cudalibs" (probes/cudalibs.py): ``ldconfig -p`` lines for libcudart."""

    libcudart: list[LdconfigEntry]


class NgcInfo(TypedDict):
    product: str | None
    release: str | None  # "25.11"
    build_id: str | None
    pytorch_build_version: str | None
    cuda_version: str | None
    env: dict[str, str]  # the variables that said so


class ContainerCheck(TypedDict):
    check: str  # what was looked at
    seen: str  # what it showed
    matched: bool


class _ContainerSeen(TypedDict):
    in_container: bool | None
    runtime: str | None
    name: str | None
    image: str | None
    ngc: NgcInfo | None
    hints: list[str]
    checks: list[ContainerCheck]


class ContainerEngine(TypedDict):
    """docker or podman (probes/container.py ``host_runtime``)."""

    name: str  # "docker" | "podman"
    path: str | None  # where on PATH; None: not on PATH
    version: str | None  # first line of `<name> --version` ("Docker version 28.3.3, build 980b856")
    error: str | None  # why the version was not read


class DaemonJson(TypedDict):
    """/etc/docker/daemon.json as it bears on the NVIDIA runtime."""

    path: str
    state: str  # "absent" | "read" | "unreadable" | "malformed"
    error: str | None
    nvidia_runtime: bool | None  # "runtimes" has "nvidia" (False when the file is absent); None: unreadable, malformed
    default_runtime: str | None  # "default-runtime"


class CdiSpecs(TypedDict):
    specs: list[str]  # NVIDIA CDI specs found (/etc/cdi/nvidia*.yaml|json, /var/run/cdi/nvidia*)
    errors: list[str]  # folders that exist but could not be listed (absent is not an error)


class HostRuntime(TypedDict):
    """Can a container with the GPU run here (probes/container.py ``host_runtime``)."""

    root: str
    engines: list[ContainerEngine]
    tools: dict[str, str | None]  # nvidia-ctk, nvidia-container-runtime(-hook) -> path on PATH or None
    daemon_json: DaemonJson
    cdi: CdiSpecs


class ContainerData(_ContainerSeen, total=False):
    """Probe "container" (probes/container.py ``inspect``). ``in_container`` is True or None
    (cannot tell), never False: every trace can be hidden. ``host_runtime`` (issue 14, from ``read``):
    whether docker/podman and the NVIDIA container runtime are set up here."""

    host_runtime: HostRuntime


class Pin(TypedDict):
    name: str  # canonical distribution name
    spec: str  # "==2.9.0", ">=1,<2"
    marker: str | None
    extras: list[str]
    file: str
    line: int


class PinSkipped(TypedDict):
    where: str  # "file:line"
    text: str
    why: str


class PinsData(TypedDict):
    """Probe "pins" (probes/pins.py): a pins file that had any error is a failed reading."""

    origin: str  # "file" | "shipped"
    image: str | None  # the shipped set's name
    path: str
    files: list[str]  # the file and its includes
    meta: dict[str, str]  # "# sparktui: key=value" lines
    pins: list[Pin]
    skipped: list[PinSkipped]
    shipped_sets: list[str]


# --------------------------------------------------------------------------- tpscan


class ScanRoot(TypedDict, total=False):
    path: str  # as given
    abs: str
    status: str  # "scanned" | "missing" | "permission denied" | "already scanned" | "skipped: <why>" ...
    kind: str  # "folder" | "file"
    files_read: int
    max_depth: int  # bounds of a default scan (no paths named; probes/tpscan.py): folders entered
    max_files: int  # to this depth below it, files seen before it stops,
    max_seconds: float  # and the time bound


class _TpMatchBase(TypedDict):
    status: str  # "set" (> 1) | "unresolved" (a variable it could not resolve) | "unreadable" (a value
    # not understood: 1.5, 0, "two", [2]); "one" only as a sample
    value: str  # as written
    degree: int | None  # None: unresolved, unreadable, or tp_plan="auto"


class TpMatch(_TpMatchBase, total=False):
    via: str | None  # how a variable was resolved
    line: int
    key: str
    text: str  # the line, at most 200 characters
    key_path: str  # YAML/TOML parents, "vllm_cfg.tensor_parallel_size"
    scope: str  # "generation": the TP of an inference engine inside a training job; "dcn": MaxText's TP
    # across the data-centre network (across nodes by definition)
    judged_in: str  # the key in `files` whose context judges it: a launcher that sources this file, a config
    # whose `defaults:` chain takes it, or "script (called by launcher:line)"; absent: its own file's
    file: str


class FileContext(TypedDict, total=False):
    """What a file with findings describes (probes/tpscan.py ``file_context``)."""

    context: str  # "training" | "serving" | "unknown"
    training_markers: list[str]
    serving_markers: list[str]
    nodes: str  # "multi" | "single" | "unknown"
    node_count: int | None
    node_markers: list[str]
    node_lines: list[int]  # the line of each node marker in this file (empty for markers lent by a launcher)
    node_unresolved: list[str]
    gpus_per_node: int  # the smallest GPUs-per-node count written, where one is
    gpus_per_node_marker: str  # and where (`trainer.n_gpus_per_node=8 (line 4)`)
    lines_cut: int  # lines longer than tpscan.MAX_MATCH_LINE, matched on their start only
    context_chars: int  # present when the context was read on the file's first this many characters only
    kind: str  # "yaml" | "json" | "toml" | "shell" | "env" | "python" | "dockerfile" | "any"
    launched_by: list[str]  # launch scripts that lent it their context
    defaults_from: list[str]  # YAML/Hydra `defaults:` files whose settings it takes
    sourced: list[str]  # files a script sources (`source env.sh`), read for its variables


class TpSkippedSample(TypedDict):
    path: str
    reason: str


class TpscanData(TypedDict):
    """Probe "tpscan" (probes/tpscan.py ``scan``): findings and what was not read."""

    paths: list[ScanRoot]
    cwd: str | None
    files_read: int
    files_considered: int
    other_files: int
    dirs_walked: int
    bytes_read: int
    prefilter_hits: int
    matches: list[TpMatch]  # at most MAX_MATCHES
    matches_total: int
    matches_dropped: int
    at_one: int  # settings found at 1: proof that the configs were seen
    at_one_sample: list[str]
    files: dict[str, FileContext]  # only files with findings
    skipped: dict[str, int]  # reason -> count
    skipped_sample: list[TpSkippedSample]
    truncated: str | None  # the scan stopped early, and why
    max_file_bytes: int
    scan_s: float


# --------------------------------------------------------------------------- bandwidth (G5)


class BandwidthResult(TypedDict, total=False):
    """Probe "bandwidth" (probes/bandwidth.py ``measure``) and "bandwidth_last" (the last ok one,
    kept on disk). ``status`` "ok" carries the figures; "unknown" and "refused" carry ``reason``.
    A figure above the device's spec (GB10: 273 GB/s) is a measurement error, not a result."""

    status: str  # "ok" | "unknown" | "refused"
    reason: str
    hint: str
    stderr_tail: str
    python: str
    measured_at: float
    seconds: float
    source: str
    device: str
    capability: list[int]
    torch: str
    buffer_bytes: int
    iterations: int
    repeats: int
    copy_gbs: float  # median; bytes read + written per second, GB = 1e9 bytes
    copy_gbs_all: list[float]
    read_gbs: float
    read_gbs_all: list[float]
    spread_pct: float | None
    convention: str
    gate_notes: list[str]  # what the G5 gates noted when they let it run (sparktui.flows.bandwidth)


# --------------------------------------------------------------------------- playbook issues (G8)


class PlaybookSuggestion(TypedDict):
    slug: str
    why: str


class PlaybookMatch(TypedDict, total=False):
    """One open issue that names what the user follows (playbooks/matching.py ``Match.to_dict``)."""

    number: int
    title: str
    url: str
    created_at: str | None
    updated_at: str | None
    comments: int
    score: int
    reasons: list[str]
    slugs: list[str]
    commands: list[str]
    body_excerpt: str


class RateLimit(TypedDict):
    limit: int | None
    remaining: int | None
    reset_at: float | None
    limited: bool
    status: int | None


class PlaybookIssuesData(TypedDict, total=False):
    """Probe "playbook_issues" (probes/playbooks.py ``read``). Nothing configured: no request, only
    ``configured`` False, what was configured and ``suggestions``. A fetch that found no issue list
    (not even cached) has ``issues_checked`` None and the reading carries the error."""

    configured: bool
    repo: str
    api_url: str  # without user name or password
    api_host: str
    slugs: list[str]
    commands: list[str]
    unknown_slugs: list[str]
    suggestions: list[PlaybookSuggestion]
    suggestions_error: str  # the process scan could not run: no suggestion is not "none running"
    url_problem: str
    issues_checked: int | None  # None: no list was read
    issues_unreadable: int
    pull_requests_skipped: int
    truncated: bool
    matches: list[PlaybookMatch]
    matches_total: int
    source: str | None  # "network" | "cache-fresh" | "cache-304" | "stale-cache" (playbooks/github.py)
    fetched_at: float | None
    checked_at: float
    age_s: float | None
    error: str | None
    rate_limit: RateLimit | None
    requests: int
    auth: str
    folders: dict[str, dict[str, Any]]  # slug -> {last_commit, sha, error, exists: False when it is no playbook}
    cache_error: str | None


# --------------------------------------------------------------------------- G13: driver flavour


class KnownBadEntry(TypedDict):
    """One validated [[entry]] of sparktui/data/known_bad.toml."""

    id: str
    status: str  # "warn" | "fail"
    what: str
    source: str  # URL or issue id
    added: str  # ISO date
    confirmed: bool
    fix: str  # "open-module" | "kernel" | "driver" | "" (which fix text the judge gives)
    match: dict[str, Any]  # module_flavour, driver_branch (list[int]), driver_min, driver_below, kernel_release, kernel_flavour, architecture, gpu


class KnownBadData(TypedDict):
    """The known-bad table as loaded: ``error`` set (and no entries) when the file is unusable."""

    path: str
    updated: str | None  # ISO date of the data
    entries: list[KnownBadEntry]
    error: str | None


class DriverFlavourData(TypedDict):
    """Probe "driver_flavour" (probes/driver_flavour.py ``read``). A field that could not be read
    is None and ``errors[field]`` says why; ``sources[field]`` says where a value was read."""

    root: str
    module_loaded: bool | None  # /sys/module/nvidia or /proc/driver/nvidia/version present
    flavour: str | None  # "open" | "proprietary"
    nvrm_line: str | None  # the "NVRM version:" line as read
    driver_version: str | None  # "580.95.05"
    driver_branch: int | None  # 580
    module_taint: str | None  # /sys/module/nvidia/taint ("P" = proprietary licence; "" = taints nothing)
    gpu_name: str | None  # /proc/driver/nvidia/gpus/*/information Model:
    kernel_release: str | None  # "6.17.0-1008-nvidia"
    kernel_flavour: str | None  # "nvidia"
    architecture: str | None  # "aarch64"
    bios_version: str | None
    bios_date: str | None
    errors: dict[str, str]
    sources: dict[str, str]
    known_bad: KnownBadData
    installed_version: str | None  # `modinfo nvidia` version: the module installed for the running kernel
    installed_flavour: str | None  # from its license: "Dual MIT/GPL" open, "NVIDIA" proprietary
    installed_license: str | None
    kernels_installed: list[str] | None  # /lib/modules/*/ with a kernel/ folder, oldest first
    reboot_required: bool | None  # /var/run/reboot-required present
    reboot_required_pkgs: list[str] | None  # the package names in /var/run/reboot-required.pkgs


# --------------------------------------------------------------------------- link (G12)


class LinkGid(TypedDict, total=False):
    index: int
    gid: str
    type: str | None  # "RoCE v2" | "IB/RoCE v1"; None when unreadable
    ndev: str | None


class LinkRdmaPort(TypedDict, total=False):
    """/sys/class/infiniband/<device>/ports/<port>/: the RDMA side of one ConnectX-7 netdev."""

    device: str  # "rocep1s0f1", "mlx5_0"
    port: int | str | None
    error: str  # no ports dir
    state: str | None  # "4: ACTIVE"
    phys_state: str | None  # "5: LinkUp"
    rate: str | None  # "200 Gb/sec (4X HDR)"
    link_layer: str | None  # "Ethernet" (RoCE) | "InfiniBand"
    gids: list[LinkGid]  # non-empty slots only
    gids_error: str
    counters: dict[str, int]  # raw; port_xmit_data / port_rcv_data in 4-byte words
    port_xmit_data_bytes: int
    port_rcv_data_bytes: int
    hw_counters: dict[str, int]


class LinkInterface(TypedDict, total=False):
    name: str  # "enp1s0f1np1"
    driver: str | None  # "mlx5_core"
    pci: str | None  # "0000:01:00.1"
    vendor: str | None  # "0x15b3"
    device_id: str | None  # "0x1021" (ConnectX-7)
    mtu: int | None
    operstate: str | None  # "up" | "down" | ...
    carrier: int | None
    speed_mbps: int | None  # None while down (the kernel says -1), never 0
    rdma: list[LinkRdmaPort]


class NcclSetting(TypedDict, total=False):
    value: str
    source: str  # "environment" or a file path
    line: int


class LinkData(TypedDict, total=False):
    """Probe "link" (probes/link.py ``scan``). ``interfaces == []`` with ``reason``: no ConnectX-7
    here (a reading); a /sys that cannot be read is a failed reading instead."""

    root: str
    interfaces: list[LinkInterface]
    reason: str
    rdma_seen: bool  # /sys/class/infiniband exists
    unattached_rdma: list[LinkRdmaPort]
    netdevs: list[str]  # every name in /sys/class/net (lo, docker0 ...): what NCCL_SOCKET_IFNAME can select
    rdma_devices: dict[str, list[int | str]]  # /sys/class/infiniband/<hca>/ports/<n>: what NCCL_IB_HCA can name
    nccl: dict[str, list[NcclSetting]]  # variable -> where set, the environment first
    nccl_files: list[str]
    nccl_scan: "LinkNcclScan"  # present when the probe walked G10's scan paths itself
    read_at: float  # time.time(), for rates()


class LinkNcclScan(TypedDict, total=False):
    paths: list[str]  # [scan] paths walked for launch files
    files: int  # launch files that mention NCCL_
    stopped: str | None  # why the walk ended early (time or entry bound); None: it saw everything


# --------------------------------------------------------------------------- G11: the kernel log


class KernelLogEvent(TypedDict, total=False):
    """One incident in the kernel log (probes/kernel_log.py ``Parser``). ``kind`` is one of "xid",
    "nv_no_memory", "oom_kill", "aer", "soft_lockup", "gpu_lost"; the other fields belong to some kinds only."""

    kind: str
    t: float | None  # unix time; None where the line carried no usable time (a saved file)
    t_boot: float  # seconds since boot, where the line said it but no unix time is known (a saved dmesg)
    t_text: str  # the line's syslog stamp as printed ("Sep 22 09:59:09": no year, so no unix time)
    text: str  # the line, at most 500 characters
    xid: int  # xid
    pci: str | None  # xid: "0000:01:00"; aer: the device the error was reported for, "0000:01:00.0"; gpu_lost
    pid: int | None  # xid, oom_kill (the victim), soft_lockup (the task on the stuck CPU)
    name: str | None  # process name, same kinds as pid
    rss_kb: int | None  # oom_kill: anon+file+shmem RSS of the victim (None: only the summary line seen)
    anon_rss_kb: int | None  # oom_kill
    cgroup: bool  # oom_kill: a memory cgroup's limit was hit (a container's), not the whole pool
    memcg: str | None  # oom_kill: the cgroup whose limit was hit, where the log names it
    severity: str  # aer: "fatal" | "non-fatal" | "corrected" | "unknown"
    device: str  # "GPU (nvidia)" | "ConnectX-7 (mlx5)" | "PCIe port" | another driver's name | "unknown"
    driver: str | None  # aer: the driver bound at ``pci`` as the log showed it
    reporter: str | None  # aer: the port that reported it ("0000:00:00.0")
    cpu: int | None  # soft_lockup (None: a hard lockup known only from its panic line)
    stuck_s: int | None  # soft_lockup (None for a hard lockup)
    hard: bool  # soft_lockup: a hard lockup (NMI watchdog)
    reason: str  # gpu_lost: "fallen off the bus" | "RmInitAdapter failed" | ...


class KernelLogData(TypedDict, total=False):
    """The kernel log since boot (probes/kernel_log.py ``read``), or a saved one (``read_file``)."""

    source: str  # "kmsg" | "journalctl" | "dmesg" | "file"
    boot_id: str | None  # /proc/sys/kernel/random/boot_id (dashes removed) or the journal's _BOOT_ID
    lines_read: int
    events: list[KernelLogEvent]  # bounded per kind (core/xids.py EventKeeper), in log order
    truncated: bool  # more events happened than are kept (see counts)
    counts: dict[str, int]  # kind -> events seen, kept or not
    severities: dict[str, int]  # AER severity -> events seen, kept or not
    not_kept: int  # events counted but not kept
    note: str | None  # sources tried before this one and why they failed; records overwritten while reading
    first_seq: int | None  # kmsg sequence number of the first record read (> 0: the ring buffer wrapped)
    lost_records: int  # kmsg records missing between those read (gaps in the sequence numbers)
    first_boot_s: float | None  # the first line's time since boot, where the lines carry one
    formats: dict[str, int]  # line format ("kmsg", "dmesg", "dmesg -T", "journal JSON", "syslog", "iso") -> lines


class RunPoint(TypedDict, total=False):
    """One progress line of the run's log (probes/run_progress.py), as parsed."""

    t: float | None  # unix time the line was seen (followed live) or printed (a time in the line); None in a saved log without times
    step: int | None  # the step (or batch, or iteration) reached
    total: int | None  # of how many, where the line says
    epoch: float | None
    rate: float | None  # as printed, in rate_unit
    rate_unit: str | None  # "it/s" | "s/it" | "samples/s" | "tokens/s" | "ms/step" | ...
    step_s: float | None  # seconds per step: from the printed rate where it converts, else None
    elapsed_s: float | None  # the run's elapsed time where the line prints it (tqdm's [01:23<...])
    loss: float | None  # finite only: a non-finite loss is a RunEvent of kind "nonfinite"
    grad_norm: float | None
    format: str  # which log format matched: "tqdm" | "hf" | "lightning" | "keras" | "megatron" | ... | "plain"


class RunEvent(TypedDict, total=False):
    """A line of the run's log that is not progress: a non-finite loss, the error it ended with, its end."""

    kind: str  # "nonfinite" | "error" | "finished"
    t: float | None
    step: int | None  # the step the line names, or the last step seen before it
    field: str  # nonfinite: "loss" | "grad_norm"
    value: str  # nonfinite: "nan" | "inf" | "-inf"
    error: str  # error: "cuda_oom" | "nccl_timeout" | "traceback" | "segfault" | "killed" | ...
    text: str  # the line (cut; shown inert)


class RunLogSource(TypedDict, total=False):
    """Where the run's log was read from, or why it could not be."""

    kind: str  # "fd" (the run's redirected stdout/stderr) | "tmux" (its pane) | "named" (--run-log / [run] log)
    path: str | None  # the file (fd, named)
    pane: str | None  # the tmux pane id (tmux)
    error: str | None  # why it could not be read
    size: int | None
    mtime: float | None  # the file's last write: the age of its last line when the lines carry no time


class RunData(TypedDict, total=False):
    """The training run beside sparktui (probes/run_log.py, followed live by live/run.py)."""

    found: bool  # a run was found (training processes, or a named log)
    why: str | None  # why there is no run or no log, and how to name it
    pids: list[int]  # the run's processes (a launcher and its ranks)
    command: str | None  # the launcher's command (secrets scrubbed, cut)
    alive: bool | None  # its processes live; None where unknown (a saved log read alone)
    started_at: float | None
    log: RunLogSource | None
    progress: list[RunPoint]  # bounded: the latest points, oldest first
    first: RunPoint | None  # the first progress point seen (kept when progress is cut)
    points_seen: int  # progress lines seen, kept or not
    events: list[RunEvent]  # bounded: non-finite values, errors, the end
    error: RunEvent | None  # the last error the log printed
    finished: RunEvent | None  # the log says the run finished
    lines_read: int
    cut_lines: int  # lines longer than the parser reads (cut, counted)
    formats: dict[str, int]  # format -> progress lines
    last_line_t: float | None  # when the last line was seen (live) or the file last written
    read_at: float  # when this reading was made


# --------------------------------------------------------------------------- the pool beyond meminfo (G3)


class PoolTmpfs(TypedDict, total=False):
    """A memory-backed mount (tmpfs, ramfs) of /proc/mounts, measured with statvfs."""

    mountpoint: str
    fstype: str  # "tmpfs" | "ramfs"
    size_option_bytes: int | None  # its size= option; None: absent (tmpfs default: half of memory)
    size_bytes: int | None  # statvfs: what it may grow to; None: unmeasured (error says why)
    used_bytes: int | None  # statvfs: what its files hold now, all of it in the pool
    error: str


class PoolHugepages(TypedDict, total=False):
    """One hugepage size (/sys/kernel/mm/hugepages/hugepages-NkB): page counts, None when unread."""

    size_bytes: int
    total: int | None
    free: int | None
    reserved: int | None  # promised to a mapping, not yet faulted in
    surplus: int | None


class PoolSwap(TypedDict, total=False):
    """One line of /proc/swaps."""

    name: str
    type: str
    size_bytes: int
    used_bytes: int
    priority: int
    zram: bool  # a zram device: what it stores is compressed into the pool itself


class PoolZram(TypedDict, total=False):
    """/sys/block/zramN: disksize and mm_stat's first three figures (bytes)."""

    name: str
    disksize_bytes: int | None
    orig_data_bytes: int
    compr_data_bytes: int
    mem_used_bytes: int  # what zram takes of the pool


class PoolData(TypedDict, total=False):
    """Probe "pool" (probes/pool.py ``read``): a part that could not be read is absent, its reason in ``errors``."""

    tmpfs: list[PoolTmpfs]
    shm: PoolTmpfs | None  # /dev/shm (inside a container: its --shm-size)
    inside_container: bool | None
    hugepages: list[PoolHugepages]
    swaps: list[PoolSwap]
    zram: list[PoolZram]
    errors: dict[str, str]
    read_at: float


# --------------------------------------------------------------------------- typed keys, by reading name

D_co = TypeVar("D_co", bound=Mapping[str, Any], covariant=True)  # a reading's data shape (a TypedDict above)


@dataclass(frozen=True)
class Key(Generic[D_co]):
    """A reading's name and the TypedDict its data has: ``readings.data(MEMINFO)`` is then a
    ``MemInfoReading | None`` to mypy, so a judge's reads are checked against the probe's shape.
    A probe declares the key it fills (probes/*.py ``PROBES``); the names below are the only ones."""

    name: str
    shape: type[D_co]


HOST: Key[HostData] = Key("host", HostData)
MEMINFO: Key[MemInfoReading] = Key("meminfo", MemInfoReading)
NVML: Key[NvmlStatic] = Key("nvml", NvmlStatic)
TELEMETRY: Key[TelemetryData] = Key("telemetry", TelemetryData)
PROCESSES: Key[ProcessesData] = Key("processes", ProcessesData)
TARGET: Key[TargetData] = Key("target", TargetData)
CUDALIBS: Key[CudalibsData] = Key("cudalibs", CudalibsData)
CONTAINER: Key[ContainerData] = Key("container", ContainerData)
PINS: Key[PinsData] = Key("pins", PinsData)
TPSCAN: Key[TpscanData] = Key("tpscan", TpscanData)
BANDWIDTH: Key[BandwidthResult] = Key("bandwidth", BandwidthResult)  # a measurement's result, made on request (no probe)
BANDWIDTH_LAST: Key[BandwidthResult] = Key("bandwidth_last", BandwidthResult)
PLAYBOOK_ISSUES: Key[PlaybookIssuesData] = Key("playbook_issues", PlaybookIssuesData)
KERNEL_LOG: Key[KernelLogData] = Key("kernel_log", KernelLogData)
DRIVER_FLAVOUR: Key[DriverFlavourData] = Key("driver_flavour", DriverFlavourData)
LINK: Key[LinkData] = Key("link", LinkData)
RUN: Key[RunData] = Key("run", RunData)
POOL: Key[PoolData] = Key("pool", PoolData)

KEYS: tuple[Key[Any], ...] = (
    HOST, MEMINFO, NVML, TELEMETRY, PROCESSES, TARGET, CUDALIBS, CONTAINER, PINS, TPSCAN,
    BANDWIDTH, BANDWIDTH_LAST, PLAYBOOK_ISSUES, KERNEL_LOG, DRIVER_FLAVOUR, LINK, RUN, POOL,
)
"""Every reading a judge can read, once each."""

RESULT_ONLY = frozenset({BANDWIDTH.name})
"""Keys no probe fills: a measurement made on request (``sparktui bandwidth``, the dashboard's b key)."""

SHAPES: dict[str, type] = {k.name: k.shape for k in KEYS}
"""Reading name -> the TypedDict its data has (tests check the probes against it at run time)."""
