"""NVIDIA Xid codes: what each means and what to do. One table for the kernel-log probe (which
names an event) and G11's judge (which says what to do): both import it from here."""

from __future__ import annotations

# Xid -> (meaning, action): NVIDIA "Xid Errors" documentation, abridged; 169 from GB10 field reports
# (Start9Labs #3465, #3693: the proprietary module fails on GB10, the -open flavour is required).
XIDS: dict[int, tuple[str, str]] = {
    13: ("graphics engine exception", "usually the application: rerun it under compute-sanitizer or with CUDA_LAUNCH_BLOCKING=1"),
    31: ("GPU memory page fault", "usually the application (a bad pointer); across many applications, suspect the driver"),
    43: ("GPU stopped processing (channel reset after a fault)", "the process faulted: read its own errors; the GPU stays usable"),
    45: ("preemptive cleanup (a process was killed or crashed)", "it follows another error or a kill: read the events before it"),
    48: ("double-bit ECC error", "drain the GPU and reboot; if it repeats, hardware service"),
    61: ("internal micro-controller breakpoint", "update the driver; reboot if it repeats"),
    62: ("internal micro-controller halt", "reboot and update the driver; if it repeats, report it to NVIDIA"),
    63: ("ECC page retirement / row remapping recorded", "informational unless frequent: nvidia-smi -q -d ROW_REMAPPER"),
    64: ("ECC page retirement / row remapping failed", "drain and reboot; if it repeats, hardware service"),
    68: ("video processor exception", "update the driver; reboot if the GPU stays unusable"),
    69: ("graphics engine class error", "update the driver (a driver or application bug)"),
    74: ("NVLink / chip-to-chip link error", "reboot; if it repeats, hardware service"),
    79: ("GPU has fallen off the bus", "reboot; check power and temperature and the AER lines around it"),
    92: ("high single-bit ECC error rate", "watch it; if it grows, schedule service"),
    94: ("contained ECC error (one application affected)", "restart the affected application"),
    95: ("uncontained ECC error (all applications affected)", "drain the GPU and reboot"),
    109: ("context switch timeout", "often an application hang; update the driver if it repeats"),
    119: ("GSP RPC timeout", "reboot and update the driver; if it repeats, report it with nvidia-bug-report.sh"),
    120: ("GSP error", "reboot and update the driver; if it repeats, report it with nvidia-bug-report.sh"),
    154: ("GPU recovery action required", "do what the message says: reset the GPU or reboot"),
    169: ("GB10: the proprietary kernel module failed to initialise the GPU (RmInitAdapter failed)",
          "install the -open flavour of the kernel module, same driver branch, and reboot"),
}
