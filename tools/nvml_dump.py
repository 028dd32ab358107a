"""Dump what this machine's NVML answers, field by field, as JSON (for building fakes from real
answers and for bug reports). Never raises: each failure is recorded with its NVML error."""

import json
import sys

import pynvml as nv


def call(fn, *a):
    try:
        v = getattr(nv, fn)(*a)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}", "code": getattr(e, "value", None)}
    if isinstance(v, bytes):
        v = v.decode()
    if hasattr(v, "_fields_"):
        v = {k: (getattr(v, k).decode() if isinstance(getattr(v, k), bytes) else getattr(v, k)) for k, _ in v._fields_}
    if isinstance(v, list):
        v = [({k: getattr(x, k) for k, _ in x._fields_} if hasattr(x, "_fields_") else x) for x in v]
    return v


def main():
    nv.nvmlInit()
    out = {"driver": call("nvmlSystemGetDriverVersion"), "cuda": call("nvmlSystemGetCudaDriverVersion_v2"),
           "nvml": call("nvmlSystemGetNVMLVersion"), "count": call("nvmlDeviceGetCount"), "devices": []}
    for i in range(out["count"] if isinstance(out["count"], int) else 0):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        d = {}
        for fn in ("nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetMemoryInfo",
                   "nvmlDeviceGetPowerUsage", "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementDefaultLimit",
                   "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetCurrentClocksEventReasons",
                   "nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceGetSupportedClocksEventReasons",
                   "nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses",
                   "nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetPerformanceState", "nvmlDeviceGetFanSpeed"):
            d[fn] = call(fn, h)
        d["temp_gpu"] = call("nvmlDeviceGetTemperature", h, nv.NVML_TEMPERATURE_GPU)
        for name, c in (("sm", nv.NVML_CLOCK_SM), ("graphics", nv.NVML_CLOCK_GRAPHICS), ("mem", nv.NVML_CLOCK_MEM)):
            d[f"clock_{name}"] = call("nvmlDeviceGetClockInfo", h, c)
            d[f"maxclock_{name}"] = call("nvmlDeviceGetMaxClockInfo", h, c)
        for name in ("NVML_PERF_POLICY_POWER", "NVML_PERF_POLICY_THERMAL", "NVML_PERF_POLICY_SYNC_BOOST"):
            d[f"violation_{name}"] = call("nvmlDeviceGetViolationStatus", h, getattr(nv, name))
        out["devices"].append(d)
    nv.nvmlShutdown()
    json.dump(out, sys.stdout, indent=1, default=str)


if __name__ == "__main__":
    main()
