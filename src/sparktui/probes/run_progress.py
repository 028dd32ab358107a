"""The training run's log, read line by line: progress (step, total, epoch, rate, loss, grad norm),
non-finite values, the error the run ended with, and its end (G14, issue 25).

``ProgressParser.feed`` takes one physical line of the run's stdout/stderr; ``RunLog`` keeps what the
``run`` reading shows (core/shapes.py ``RunData``'s log keys), bounded; ``parse_text`` reads a whole
saved log. Pure (no I/O) and linear: a line is split on "\\r" (tqdm's in-place updates; only the last
``MAX_SEGMENTS`` segments are parsed whole, earlier ones only searched for errors and non-finite
values), each segment cut to ``MAX_PARSE`` characters before any pattern runs, a substring check
before every pattern, every pattern anchored or run on that bounded window with bounded repeats.
Outside text is data: never evaluated, and nothing it holds makes the parser raise.

Formats, as the runs print them (real excerpts in tests/data/run_logs/, each with its source):
tqdm bars (``45%|###| 450/1000 [01:23<02:34, 3.2it/s, loss=2.31]``, and with no total
``17671it [1:05:34, 4.49it/s, loss=2.15]``), Hugging Face Trainer dict lines (``{'loss': 2.31,
'grad_norm': 1.2, 'learning_rate': 2e-05, 'epoch': 0.5}``: TRL, axolotl, LLaMA-Factory, Unsloth),
PyTorch Lightning (its tqdm bar ``Epoch 3: 45%|...``; "`Trainer.fit` stopped"), Keras
(``100/1000 [==>...] - ETA: 1:23 - loss: 0.5``, ``Epoch 3/10``), torchtitan (``step: 10  loss:
7.83 ... tps: 1,234``), Megatron-LM / NeMo (`` iteration  100/ 1000 | ... | lm loss: 2.3E+00``),
DeepSpeed (``steps: 10 loss: 2.3 iter time (s): 0.5``, ``[Rank 0] step=40, skipped=2``), nanoGPT
(``iter 100: loss 2.3456, time 123.45ms``), llm.c / llama2.c, MMEngine / mmcv
(``Epoch(train) [1][ 50/1000]  lr: ... time: 0.5 ... loss: 2.3``), ESPnet, and plain prints
(``step 5/100 loss=2.3``, ``Step: 4970, Loss: 0.18``, ``Train Epoch: 1 [400/2022 (20%)]\\tLoss: 0.02``).
Rank prefixes (``[rank0]:``, ``[default0]:``, ``0: ``, ``[1,0]<stdout>:``, ``rank 3:``) and ANSI
escapes are stripped first.

Rates: ``rate`` and ``rate_unit`` as printed; ``step_s`` (seconds per step) only where the unit
converts (it/s -> 1/rate, s/it -> rate, ms per step -> /1000); samples/s and tokens/s need the batch
size, so they leave ``step_s`` None. Numbers are finite: a loss or grad norm printed nan/inf is a
"nonfinite" event (also said in words: "Model diverged with loss = NaN"), the point's value None.

Errors (``ERROR_KINDS``): a Python traceback's last line (classified: cuda_oom, nccl_timeout,
nccl_error, assertion, child_failed, interrupted, else traceback), and lines that say it alone: CUDA
OOM, the NCCL watchdog's timeout, NCCL errors (also NCCL's own ``-> N`` error trace after a WARN),
a C++ ``terminate called`` report (its ``what():``; nccl_error when its frames are ProcessGroupNCCL's,
else abort), torchrun's ``exitcode : -11`` / ``Signal 9 (SIGKILL) received by PID``, "Segmentation
fault", bash's "Killed", SLURM's "CANCELLED". A log that printed several keeps the root cause
(``ERROR_RANK``): a rank's OOM, not its peers' NCCL timeouts nor the launcher's ChildFailedError.
The end ("finished"): the Trainer's summary dict or "Training completed", Lightning's "`Trainer.fit`
stopped", a train-metrics block, and at ``flush`` a bar left at its total (Keras: in its last epoch).
"""

from __future__ import annotations

import math
import re
import time as _time
from collections import deque
from typing import Any, Iterator

MAX_PARSE = 4096  # a line (each "\r" segment of it) is cut here before any pattern runs
MAX_TEXT = 300  # characters of a line kept in an event
MAX_SEGMENTS = 64  # "\r" segments of one line parsed whole (the last ones); earlier ones are only searched
EARLY_WORDS = ("nan", "NaN", "NAN", "inf", "Inf", "Error", "error", "Traceback", "out of memory", "NCCL",
               "Segmentation")  # what a segment not parsed whole is still searched for (an error, a nan)
_EARLY_RE = re.compile("|".join(re.escape(w) for w in EARLY_WORDS))
EARLY_LETTERS = ("n", "N", "r")  # every early word holds one: a bar's updates without any need no search
MAX_EARLY_HITS = 16  # earlier segments searched for errors / non-finite values, per line
MAX_TRACEBACKS = 64  # rank prefixes whose open traceback is remembered
TB_GAP_LINES = 100  # lines of other output after a traceback's body before its last line is no longer awaited

Event = dict[str, Any]

# --------------------------------------------------------------------------- text clean-up
_ANSI = re.compile(r"\x1b(?:\[[0-9;:?<=>]{0,64}[ -/]{0,4}[@-~]|\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = {c: None for c in range(32) if c not in (9,)}  # tab kept; "\b" (Keras' redraw) and the rest dropped
_CONTROL[127] = None
_RANK = re.compile(r"(?:\[(?:rank|default|Rank ?)?\d{1,6}\]:?|\[\d{1,6},\d{1,6}\]<std(?:out|err)>:?|[Rr]ank ?\d{1,6}:"
                   r"|\d{1,6}:(?= )|\d{1,3}(?:\.\d{1,3}){3}:|[a-z][\w.-]{0,62}-\d{1,4}:(?= )|\[\d{1,10}\](?= \[rank))"
                   r" ?")
_TIME = re.compile(r"(\d{4})[-/](\d\d)[-/](\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?"
                   r"|(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d):(\d\d)")

# --------------------------------------------------------------------------- numbers and fields
_NUM = r"[-+]?(?:\d{1,20}(?:\.\d{0,20})?|\.\d{1,20})(?:[eE][-+]?\d{1,4})?"
_NONFIN = r"[-+]?(?:[Nn]a[Nn]|NAN|[Ii]nf(?:inity)?|INF)(?![A-Za-z_])"
_VAL = r"(?:tensor\()?(" + _NUM + r"|" + _NONFIN + r")"
_LOSS = re.compile(r"(?<![\w.])(?:lm[ _]|train[_ /]|training[_ ]|reduced_train_|avg_|total[_ ]|[A-Z]{1,8}(?=Loss))?[Ll]oss(?:_step)?"
                   r"(?:\s{0,4}[:=]\s{0,4}|\s{1,4})" + _VAL)
_GRAD = re.compile(r"(?<![\w.])(?:grad[_ ]norm|gnorm|norm)(?:\s{0,4}[:=]\s{0,4}|\s{1,4})" + _VAL)
_EPOCH = re.compile(r"(?<![\w.])[Ee]poch(?:\s{0,4}[:=]\s{0,4}|\s{1,4}|(?=\[))\[?\s{0,4}(\d{1,9}(?:\.\d{1,9})?)(?:\s{0,4}/\s{0,4}(\d{1,9}))?")
_RATE = re.compile(r"(?<![\w.])(" + _NUM + r")\s{0,2}([kM]?)(it/s|s/it|ms/it|ms/step|s/step|us/step|ms/iter|"
                   r"samples/s(?:ec)?|tokens/s(?:ec)?|tok/s|steps?/s|batch(?:es)?/s|s/batch)(?![\w/])")
_MS_TIME = re.compile(r"(?<![\w.])(?:time|dt|step_time|iter_time|Time)\s{0,4}[:=]?\s{0,4}(" + _NUM + r")\s{0,2}ms")

# --------------------------------------------------------------------------- progress formats
_TQDM_RBAR = re.compile(r"\|\s{0,8}([\d.]{1,16}[kMGT]?)/([\d.]{1,16}[kMGT]?)\s{0,4}\[([^\]\[]{0,400})\]")
_RICH = re.compile(r"Epoch (\d{1,9})/(\d{1,9})\s{1,8}[\u2501\u2578\u257a\u2500 -]{1,200}\s{0,8}(\d{1,12})/(\d{1,12})"
                   r"\s{1,8}(\d{1,4}(?::\d{2}){1,2})\s{0,4}\u2022\s{0,4}[-\d:]{1,12}")
_RICH_RATE = re.compile(r"\s{1,8}(" + _NUM + r")\s?(it/s|s/it)")
_TQDM_NOBAR = re.compile(r"(?<![\w.])\d{1,3}% {1,4}([\d.]{1,16}[kMGT]?)/([\d.]{1,16}[kMGT]?) {0,4}\[([^\]\[]{0,400})\]")
_TQDM_NOTOTAL = re.compile(r"(?<![\w.])(\d{1,15})([a-zA-Z]{0,12}) \[(\d{1,4}(?::\d{2}){1,2}),\s{0,4}([^\]]{0,400})\]")
_ELAPSED = re.compile(r"\s{0,4}(?:(\d{1,4})d,\s?)?(?:(\d{1,4}):)?(\d{1,2}):(\d{2})(?=\s{0,4}(?:<|,|$))")
# tqdm's usual bracket, read in one match: "MM:SS<left," then a plain rate in it/s or s/it, then "," or the end
_TQDM_BRACKET = re.compile(r"(\d{1,2}):(\d{2})<[^,]{0,400},\s{0,4}(\d{1,20}(?:\.\d{1,20})?)([kMG]?)(it/s|s/it)\s{0,4}(,|\Z)")
_TQDM_RATE = re.compile(r"\s{0,4}(" + _NUM + r"|\?)\s{0,2}([kMG]?)([A-Za-z]{1,12}/s|s/[A-Za-z]{1,12})\s{0,4}$")
_POSTFIX = re.compile(r"\s{0,4}([\w/.-]{1,60})\s{0,2}=\s{0,2}([^,]{0,80})$")
_POSTFIX_LOSS = re.compile(r"\s{0,4}loss\s{0,2}=\s{0,2}(\d{1,20}(?:\.\d{1,20})?)\s{0,4}$")  # a lone postfix item, plain
_KERAS = re.compile(r"\s{0,16}(\d{1,12})/(\d{1,12}|Unknown)\s{1,8}(?:\[[=>.]{0,200}\]|[\u2501\u2578\u257a\u2500 ]{1,200}|-)")
_KERAS_ANY = re.compile(r"(?<![\w/.])(\d{1,12})/(\d{1,12}) \[[=>.]{0,200}\]")
_KERAS_EPOCH = re.compile(r"\s{0,8}Epoch (\d{1,9})/(\d{1,9})\s{0,8}$")
_KERAS_STEP_T = re.compile(r"(?<![\w.])(\d{1,9}(?:\.\d{1,6})?)(us|ms|s)/(?:step|sample)")
_HF_KV = re.compile(r"['\"]([A-Za-z_][\w/.-]{0,60})['\"]:\s{0,4}(?:np\.float\d{0,2}\(|tensor\()?['\"]?(" + _NUM + r"|" + _NONFIN + r")")
_MEGATRON = re.compile(r"\s{0,16}iteration\s{1,16}(\d{1,12})\s{0,4}/\s{0,16}(\d{1,12})\s{0,4}\|")
_MEG_MS = re.compile(r"elapsed time per iteration \(ms\):\s{0,8}(" + _NUM + r")")
_MEG_NAN_ITERS = re.compile(r"number of nan iterations:\s{0,8}(\d{1,9})")
_NEMO = re.compile(r"iteration\s{1,4}(\d{1,12})/(\d{1,12})\s{0,4}\|")
_NEMO_STEP_S = re.compile(r"train_step_timing in s:\s{0,4}(" + _NUM + r")")
_DS_STEPS = re.compile(r"(?<![\w.])steps:\s{0,8}(\d{1,12})\s{1,8}loss:")
_DS_ITER_S = re.compile(r"iter time \(s\):\s{0,8}(" + _NUM + r")")
_DS_SPS = re.compile(r"samples/sec:\s{0,8}(" + _NUM + r")")
_DS_RANK_STEP = re.compile(r"(?<![\w.])step=(\d{1,12}), skipped=(\d{1,12})")
_DS_TIMER = re.compile(r"(?:global_step=(\d{1,12})|\] (\d{1,12})/(\d{1,12})), (?:RunningAvg)?SamplesPerSec=(" + _NUM + r")")
_NANOGPT = re.compile(r"(?<![\w.])iter (\d{1,12}): loss (" + _NUM + r"|" + _NONFIN + r"), time (" + _NUM + r")\s{0,2}ms")
_NANOGPT_EVAL = re.compile(r"(?<![\w.])step (\d{1,12}): train loss (" + _NUM + r"|" + _NONFIN + r"), val loss")
_LLMC = re.compile(r"(?<![\w.])step\s{1,16}(\d{1,12})\s{0,4}/\s{0,4}(\d{1,12})\s{0,4}\|\s{0,4}(?:train )?loss\s{1,4}(" + _NUM + r"|" + _NONFIN + r")")
_LLMC_OLD = re.compile(r"(?<![\w.])step (\d{1,12}): train loss (" + _NUM + r"|" + _NONFIN + r") \(took (" + _NUM + r") ms")
_LLMC_MS = re.compile(r"\|\s{0,4}(" + _NUM + r")\s{0,2}ms\s{0,4}\|")
_LLMC_TOK = re.compile(r"(" + _NUM + r")\s{0,2}tok/s")
_LLAMA2C = re.compile(r"\s{0,8}(\d{1,12}) \| loss (" + _NUM + r"|" + _NONFIN + r") \| lr \S{1,32} \| (" + _NUM + r")ms")
_MMENGINE = re.compile(r"(?<![\w.])(?:Epoch|Iter)(?:\((train|val|test)\))?:?\s{0,16}(?:\[\s{0,12}(\d{1,9})\])?\s{0,16}"
                       r"\[\s{0,16}(\d{1,12})\s{0,4}/\s{0,4}(\d{1,12})\]")
_MM_TIME = re.compile(r"(?<![\w.])time:\s{0,4}(" + _NUM + r")")
_TITAN_STEP = re.compile(r"(?<![\w.])step:\s{0,8}(\d{1,12})\s{1,8}")
_TPS = re.compile(r"(?<![\w.])(?:tps|TPS)\s{0,4}[:=]?\s{0,4}(" + _NUM + r")")
_TITAN_TPS = re.compile(r"(?<![\w.])tps:\s{0,8}([\d,]{1,24})")
_ESPNET = re.compile(r"(?<![\w.])(\d{1,9})epoch:train:(\d{1,12})-(\d{1,12})batch:")
_PLAIN_STEP = re.compile(r"(?<![\w.])(?:[Ss]tep|STEP|[Ii]ter(?:ation)?|ITER|global_step|[Bb]atch)s?\s{0,4}[:=#]?\s{0,8}\[?\s{0,8}"
                         r"(\d{1,12})(?![\d.])(?:\s{0,4}(?:/|of)\s{0,4}(\d{1,12}))?")
_SLASH_STEP = re.compile(r"(?<![\w./:-])(\d{1,12})\s{0,2}/\s{0,2}(\d{1,12})(?![\w./:-])")
_SUMMARY_LOSS = re.compile(r"\s{0,8}(?:[Ff]inal |[Aa]verage )?[Tt]rain(?:ing)?[ _]loss\s{0,4}[:=]\s{0,4}" + _NUM + r"\s{0,8}$")
_BRACKET_STEP = re.compile(r"\[\s{0,8}(\d{1,12})\s{0,4}/\s{0,4}(\d{1,12})(?:\s{1,4}\(\s{0,4}\d{1,3}%\))?\]")

# --------------------------------------------------------------------------- errors and the end
_OOM = re.compile(r"(?:OutOfMemoryError|Error): CUDA (?:error: )?out of memory|CUDA error: out of memory"
                  r"|CUDA_ERROR_OUT_OF_MEMORY|HIP out of memory")
_TB_LAST = re.compile(r"([A-Za-z_][\w.]{0,200}(?:Error|Exception|Interrupt|Exit|Failure|Warning|Fault|Failed|Timeout))(?::\s?|\s{0,4}$)"
                      r"|([A-Za-z_][\w]{0,60}(?:\.[\w]{1,60}){1,8}\.[A-Z]\w{0,100}): ")
_EXITCODE = re.compile(r"exitcode\s{0,8}:\s{0,8}(-?\d{1,4})")
_SIGNAL = re.compile(r"Signal (\d{1,2}) \((SIG[A-Z]{2,8})\) received by PID (\d{1,10})")
_BASH_KILLED = re.compile(r"(?:^|\s)\d{1,10} (Killed|Segmentation fault|Aborted|Bus error)(?:\s|$)")
_NCCL_ERR = re.compile(r"NCCL error|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclRemoteError"
                       r"|ncclInvalidUsage|ncclInvalidArgument")
_NCCL_TRACE = re.compile(r"NCCL INFO \S{1,200}\.cc:\d{1,6} -> ([1-9]\d{0,2})\s{0,4}$")
_NONFINITE_TEXT = re.compile(r"(?:loss|Loss|LOSS)\s{0,4}(?:=|:|is|was|became|becomes|of)?\s{0,4}(nan|NaN|NAN|inf|Inf)(?![A-Za-z])"
                             r"|(?<![A-Za-z])(NaN|nan|NAN|Inf|inf) (?:loss|Loss)")
_RUN_TOTAL = re.compile(r"Total optimization steps = ([\d,]{1,18})|total steps (\d{1,15})|[Mm]ax(?:imum)? steps[:=]? {0,4}(\d{1,15})")
_FIT_STOPPED = re.compile(r"`Trainer\.fit` stopped: `(max_epochs|max_steps|max_time)")

SIGNAL_KINDS = {9: "killed", 11: "segfault", 6: "abort", 7: "bus_error", 15: "terminated", 2: "interrupted", 4: "illegal_instruction"}
# Which error a log "ended with" when it printed several: the root cause, not its echoes. A rank's CUDA
# OOM or crash (4) makes its peers' collectives time out (2) and the launcher report a failed child (0);
# a later error replaces the one kept unless it ranks lower.
ERROR_KINDS = ("cuda_oom", "nccl_timeout", "nccl_error", "traceback", "assertion", "segfault", "killed", "abort",
               "bus_error", "illegal_instruction", "terminated", "interrupted", "signal", "child_failed", "exit")
ERROR_RANK = {"child_failed": 0, "exit": 0, "terminated": 1, "interrupted": 1, "signal": 1, "abort": 1,
              "nccl_timeout": 2, "nccl_error": 2, "traceback": 3}  # any other kind: 4
_FINISHED_TEXT = ("Training completed", "training completed", "TRAINING COMPLETED", "[after training is done]",
                  "***** train metrics *****", "Training finished", "training finished", "Finished training",
                  "total average iteration time:")
_NOT_TRAINING = ("map", "load", "download", "generat", "tokeniz", "filter", "eval", "valid", "predict", "test",
                 "fetch", "process", "shard", "extract", "resolv", "convert", "sav", "upload", "compil", "sanity",
                 "inference", "sampling", "encod", "cach", "prepar", "pack", "group", "writ", "read")
# The words without which _error (outside a traceback or a C++ report), _standalone_error, _finish and the
# run-total check find nothing (one of each alternative: "CANCELLED" for "slurmstepd ... CANCELLED"), and
# the part of each searched for: one search of a segment spares a progress line those checks. A part starts
# with a character progress lines seldom hold (the search tries each part only where its first one is).
_NOTABLE_WORDS = ("terminate called after throwing", "Traceback (most recent call last)", "out of memory",
                  "OUT_OF_MEMORY", "NCCL", "ncc", "exitcode", "received by PID", "ChildFailedError",
                  "Segmentation fault", "SIGSEGV", "Killed", "Aborted (core dumped)", "Bus error (core dumped)",
                  "CANCELLED", "eceived SIGTERM", "Trainer.fit` stopped", "train_runtime",
                  "Total optimization steps", "total steps", "ax steps", "aximum steps") + _FINISHED_TEXT
_NOTABLE_PARTS = ("fter throwing", "Traceback", "f memory", "OUT_OF_MEMORY", "NCCL", "ncc", "xitcode", "PID",
                  "ChildFailedError", "Segmentation", "SIGSEGV", "Killed", "Aborted (", "Bus error (", "CANCELLED",
                  "SIGTERM", "Trainer.fit`", "_runtime", "Total optimization", "l steps", "x steps", "ximum steps",
                  "Training ", "completed", "TRAINING", "done]", "*****", "finished", "Finished", "verage iteration")
_NOTABLE = re.compile("|".join(re.escape(w) for w in _NOTABLE_PARTS))
_NOT_TRAINING_RE = re.compile("|".join(_NOT_TRAINING))
_GRAD_KEYS = ("grad_norm", "gnorm", "grad-norm", "train/grad_norm")  # a tqdm postfix's grad norm (lower case)
_STEP_UNITS = {"it/s": "it/s", "step/s": "it/s", "steps/s": "it/s", "batch/s": "it/s", "batches/s": "it/s", "ba/s": "it/s",
               "s/it": "s/it", "s/step": "s/it", "s/batch": "s/it", "s/ba": "s/it"}
_OTHER_UNITS = {"samples/s": "samples/s", "samples/sec": "samples/s", "tokens/s": "tokens/s", "tokens/sec": "tokens/s",
                "tok/s": "tokens/s", "ex/s": "samples/s", "examples/s": "samples/s", "img/s": "samples/s"}
_SCALE = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


_CHECKED = ("loss", "grad_norm", "rate", "step_s", "elapsed_s", "epoch")  # a point's numbers: finite or None


def _last(pattern: re.Pattern[str], text: str, lead: str) -> re.Match[str] | None:
    """The last match of ``pattern`` in ``text`` (a bounded segment), as ``finditer`` would give it:
    ``pattern`` matches no empty string and every match holds ``lead``, so where no ``lead`` follows
    a match there is no further one to look for."""
    m = pattern.search(text)
    while m is not None and text.find(lead, m.end()) >= 0:
        nxt = pattern.search(text, m.end())
        if nxt is None:
            break
        m = nxt
    return m


def _float(s: str | None) -> float | None:
    if s is None:
        return None
    try:
        return float(s.replace(",", "")) if "," in s else float(s)
    except (ValueError, OverflowError):
        return None


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _int(s: str | None) -> int | None:
    if not s:
        return None
    try:
        v = int(s)
    except ValueError:
        return None
    return v if v <= 2**53 else None


def _put_finite(p: Event, key: str, value: float | None) -> None:
    """``p[key]`` = ``value`` when finite (nan - nan and inf - inf are nan); else None, with the
    word the log used for it (nan, inf) under ``_nf_<key>``."""
    if value is not None and value - value == 0.0:
        p[key] = value
        return
    word = _nonfinite_word(value)
    if word:
        p["_nf_" + key] = word
    p[key] = None


def _nonfinite_word(v: float | None) -> str | None:
    if v is None or math.isfinite(v):
        return None
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def _scaled(num: str, prefix: str) -> int | None:
    """tqdm's unit_scale counts ("1.2k") as an int."""
    if not prefix and len(num) <= 15 and num.isdecimal():  # a plain count, below 2**53: exact as an int
        return int(num)
    v = _float(num[:-1] if num[-1:] in _SCALE else num)
    if v is None:
        return None
    v *= _SCALE.get(num[-1:] if num[-1:] in _SCALE else prefix, 1.0)
    return int(v) if math.isfinite(v) and 0 <= v <= 2**53 else None


def _early_hits(before: str) -> list[str]:
    """The updates in ``before`` (a line's earlier "\\r" segments) that hold an early word, the last
    MAX_EARLY_HITS: one search of them all first (none, mostly), then one per update. Every early word
    holds one of EARLY_LETTERS: updates holding none (a bar's, mostly) need no search at all."""
    if not ("n" in before or "N" in before or "r" in before) or _EARLY_RE.search(before) is None:
        return []
    return [seg for seg in before.split("\r") if seg and not seg.isspace() and _EARLY_RE.search(seg) is not None
            ][-MAX_EARLY_HITS:]


def _desc_epoch(desc: str) -> tuple[bool, float | None, int | None]:
    """(Lightning's bar, epoch, of how many) from a bar's description: Lightning names its bar
    ``Epoch 3``; a script's own bar ``Epoch 1/10`` (or ``[Epoch 2/5] train``) names the epochs."""
    if "poch" not in desc:
        return False, None, None
    em = _EPOCH.search(desc)
    if em is None:
        return False, None, None
    lightning = em.start() == 0 and em.group(2) is None and not desc[em.end():].strip(" :")
    return lightning, _float(em.group(1)), _int(em.group(2))


DescInfo = tuple[bool, float | None, int | None, bool]
_DESC_CACHE: dict[str, DescInfo] = {}  # a bar's description -> _desc_info's answer (a run prints few)
DESC_CACHE_MAX = 256  # descriptions remembered (each at most DESC_CACHE_LEN characters)
DESC_CACHE_LEN = 200


def _desc_info(desc: str) -> DescInfo:
    """(Lightning's bar, epoch, of how many, another loop's bar) of a bar's description; another
    loop's (data loading, evaluation, saving ...: ``_NOT_TRAINING``) unless it names an epoch.
    Remembered: a bar prints the same description at every update."""
    info = _DESC_CACHE.get(desc)
    if info is None:
        lightning, epoch, epochs = _desc_epoch(desc)
        info = (lightning, epoch, epochs, epoch is None and _NOT_TRAINING_RE.search(desc.lower()) is not None)
        if len(desc) <= DESC_CACHE_LEN:
            if len(_DESC_CACHE) >= DESC_CACHE_MAX:
                _DESC_CACHE.clear()
            _DESC_CACHE[desc] = info
    return info


def _line_time(text: str) -> float | None:
    """A time printed near the start of a line (ISO-like, or month/day/year), as unix time (local)."""
    m = _TIME.search(text, 0, 96)
    if m is None:
        return None
    g = m.groups()
    try:
        if g[0] is not None:
            y, mo, d, hh, mi, ss = int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5])
            frac = float("0." + g[6]) if g[6] else 0.0
        else:
            mo, d, y, hh, mi, ss = int(g[7]), int(g[8]), int(g[9]), int(g[10]), int(g[11]), int(g[12])
            frac = 0.0
        if not (1 <= mo <= 12 and 1 <= d <= 31 and hh < 24 and mi < 60 and ss < 61 and 1970 <= y <= 2200):
            return None
        return _time.mktime((y, mo, d, hh, mi, ss, 0, 0, -1)) + frac
    except (OverflowError, ValueError):
        return None


def clean(seg: str) -> tuple[str, str]:
    """(text, rank prefix) of one segment: ANSI escapes and control characters dropped, rank prefixes
    (``[rank0]:``, ``[default0]:``, ``0: ``, ``[1,0]<stdout>:``, ``rank 3:``, a host ``node-1:``) cut."""
    if "\x1b" in seg:
        seg = _ANSI.sub("", seg)
    if not seg.isprintable():
        seg = seg.translate(_CONTROL)
    prefix = ""
    first = seg[:1]
    if not (first == "[" or first == "R" or "a" <= first <= "z" or first.isdecimal()):
        return seg, prefix  # no rank prefix starts so (``\d`` is what isdecimal() says)
    for _ in range(3):
        m = _RANK.match(seg)
        if m is None or m.end() == 0:
            break
        prefix += m.group(0).strip()
        seg = seg[m.end():]
    return seg, prefix


class ProgressParser:
    """Turns a run's log lines into events (see the module docstring and G14-CONTRACT).

    State (bounded): the last step/total seen (an HF dict line names no step: the bar before it
    does; events carry the last step), Keras' current epoch, the training bar's total per
    description (a shorter inner bar, the Trainer's evaluation, is not the run's progress), and which
    rank prefixes are inside a Python traceback."""

    def __init__(self) -> None:
        self.cut = False  # the last line fed had a segment longer than MAX_PARSE
        self.last_step: int | None = None
        self.last_total: int | None = None
        self.last_point: Event | None = None
        self.epoch: float | None = None
        self.epochs: int | None = None
        self._bars: dict[str, tuple[int, int]] = {}  # description -> (total, last step) of its main bar
        self._tb: dict[str, tuple[int, int]] = {}  # rank prefix -> (body lines, other lines since) of its open traceback
        self._finished = False
        self._error_after_point = False
        self._epochs: int | None = None  # of the last point's bar ("Epoch 1/10")
        self.run_total: int | None = None  # the run's steps where a header says ("Total optimization steps = 460")
        self._cpp: tuple[str, str, int] | None = None  # an open C++ "terminate called" report: (line, what(), -)
        self._nccl_warn: str | None = None  # the last "NCCL WARN" line
        self._in_tb_body = False  # the segment being read is a line inside a traceback (code, not output)
        self._num_prefix: int | None = None  # the segment's prefix was a bare "N:" (srun -l's rank, or a step)
        self._point_seen = False  # the last _segments gave a progress point

    # ------------------------------------------------------------------ lines in
    def feed(self, line: str, t: float | None = None) -> list[Event]:
        """Events of one physical line (``\\n`` stripped or not)."""
        self.cut = False
        try:
            return self._feed(line, t)
        except Exception:  # pragma: no cover - outside text must never stop the reader
            return []

    def flush(self) -> list[Event]:
        """End of input: a training bar that reached its total with nothing after it is the run's end."""
        try:
            if self._cpp is not None:
                cpp, self._cpp = self._cpp, None
                return [self._error_event("abort", cpp[1] or cpp[0], None)]
            p = self.last_point
            if (p is None or self._finished or self._error_after_point or not p.get("total")
                    or p.get("step") != p.get("total")):
                return []
            fmt = p.get("format")
            if fmt == "keras":
                if not (self.epochs and self.epoch and int(self.epoch) >= self.epochs):
                    return []
            elif fmt not in ("tqdm", "llmc", "megatron", "nemo"):
                return []  # Lightning's, MMEngine's, plain prints' totals are an epoch's
            elif p.get("epoch") is not None and not (self._epochs and p["epoch"] >= self._epochs):
                return []
            self._finished = True
            return [{"kind": "finished", "t": p.get("t"), "step": p.get("step"),
                     "text": f"the progress reached its total ({p.get('step')}/{p.get('total')}) and the log ended"}]
        except Exception:  # pragma: no cover
            return []

    def _feed(self, line: str, t: float | None) -> list[Event]:
        if not isinstance(line, str) or not line:
            return []
        if "\r" not in line:
            return self._segments([line[:MAX_PARSE + 1].rstrip("\n")], [], t)
        if line[-1:] == "\n":
            line = line.rstrip("\n")
        # tqdm: many updates on one line. The last MAX_SEGMENTS non-empty segments (of at most
        # 4 x MAX_SEGMENTS looked at) are parsed whole; the earlier ones are only searched for what
        # must not be missed (an error, a nan).
        early: list[str] = []
        if len(line) <= MAX_PARSE and line.count("\r") < MAX_SEGMENTS:  # all of it parsed whole, none cut
            cut = line.rfind("\r")
            last, before = line[cut + 1:], line[:cut]
            if last and not last.isspace() and "{" not in last and before and not before.isspace():
                # the usual burst of bar updates: as below, without splitting the line first
                out = self._segments([last], _early_hits(before), t)
                if self._point_seen:
                    return out
                return self._segments([seg for seg in line.split("\r") if seg and not seg.isspace()], [], t)
            tail = [seg for seg in line.split("\r") if seg and not seg.isspace()]  # what strip() leaves
        else:
            tail, end = self._tail(line)
            if end > 0:
                early = self._early(line, end)
        # One line gives one point, its last update's: that update is parsed whole (with the bar before
        # it when it is a Trainer dict, whose rate is the bar's); the updates before it cost a keyword
        # scan, not a parse (a burst of a hundred tqdm updates is one parse, not a hundred). When the
        # last update is no point (other text glued after the bar), every update is parsed whole.
        k = max(0, len(tail) - (2 if "{" in tail[-1] else 1)) if tail else 0
        if k:
            out = self._segments(tail[k:], early + _early_hits("\r".join(tail[:k])), t)
            if self._point_seen:
                return out
        return self._segments(tail, early, t)

    @staticmethod
    def _tail(line: str) -> tuple[list[str], int]:
        """The last MAX_SEGMENTS non-empty segments (of at most 4 x MAX_SEGMENTS looked at), each cut
        to MAX_PARSE + 1, and where the segments before them end."""
        tail: list[str] = []
        end = len(line)
        looked = 0
        while end > 0 and len(tail) < MAX_SEGMENTS and looked < 4 * MAX_SEGMENTS:
            looked += 1
            start = line.rfind("\r", 0, end)
            seg = line[start + 1:min(end, start + 2 + MAX_PARSE)]
            if seg.strip():
                tail.append(seg)
            end = start if start >= 0 else 0
        tail.reverse()
        return tail, end

    @staticmethod
    def _early(line: str, end: int) -> list[str]:
        """Segments before ``end`` that hold an error or non-finite word, at most MAX_EARLY_HITS."""
        found: list[str] = []
        seen: set[int] = set()
        for word in EARLY_WORDS:
            pos = line.find(word, 0, end)
            while pos >= 0 and len(found) < MAX_EARLY_HITS:
                start = line.rfind("\r", 0, pos) + 1
                stop = line.find("\r", pos, end)
                stop = end if stop < 0 else stop
                if start not in seen:
                    seen.add(start)
                    found.append(line[start:min(stop, start + MAX_PARSE)])
                pos = line.find(word, stop, end) if stop < end else -1
            if len(found) >= MAX_EARLY_HITS:
                break
        return found

    def _segments(self, tail: list[str], early: list[str], t: float | None) -> list[Event]:
        out: list[Event] = []
        nonfinite: dict[str, Event] = {}  # one per field and line: the last segment's
        self._num_prefix = None
        for seg in early:  # only what must not be missed: errors and non-finite values, no progress
            text, prefix = clean(seg[:MAX_PARSE])
            for ev in self._events(text, prefix, t, progress=False):
                if ev["kind"] == "nonfinite":
                    nonfinite[ev["field"]] = ev
                else:
                    out.append(ev)
        point: Event | None = None
        self._point_seen = False
        for seg in tail:
            if len(seg) > MAX_PARSE:
                seg = seg[:MAX_PARSE]
                self.cut = True
            text, prefix = clean(seg)
            self._num_prefix = _int(prefix[:-1]) if prefix and prefix[-1] == ":" and prefix[:-1].isdigit() else None
            for ev in self._events(text, prefix, t, progress=True):
                if ev["kind"] == "progress":
                    if point is not None and ev["format"] == "hf" and ev["step"] is not None and \
                            ev["step"] == point["step"] and point["format"] == "tqdm":
                        for key in ("rate", "rate_unit", "step_s", "elapsed_s"):  # the bar's, same line and step
                            if ev[key] is None:
                                ev[key] = point[key]
                    point = ev  # the last segment that parses counts
                    if "_nf_loss" in ev or "_nf_grad_norm" in ev:
                        for nf in self._nonfinite_of(ev):
                            nonfinite[nf["field"]] = nf
                    else:
                        ev.pop("_text", None)
                    self._take(ev)  # a dict line after the bar's "\r" on the same line takes the bar's step
                else:
                    out.append(ev)
        if point is not None:
            out.append(point)
            self._point_seen = True
        if nonfinite:
            out += nonfinite.values()
        return out

    # ------------------------------------------------------------------ one segment
    def _events(self, text: str, prefix: str, t: float | None, progress: bool) -> list[Event]:
        stripped = text.strip()
        if not stripped:
            return []
        self._in_tb_body = False
        if self._cpp is None and prefix not in self._tb and _NOTABLE.search(text) is None:
            out: list[Event] = []  # no word any error, end or run total needs (most progress lines)
        else:
            out = self._notable(text, stripped, prefix, t)
        p = None
        if progress:
            p = self._progress(text, stripped, t)
            if p is not None:
                out.append(p)
        elif not out:
            p = self._progress(text, stripped, t, dry=True)
            if p is not None:
                out += [dict(ev, step=p.get("step") if p.get("step") is not None else self.last_step)
                        for ev in self._nonfinite_of(p)]
        if (p is None or not p.get("_nf_loss")) and not self._in_tb_body and ("n" in text or "N" in text) and (
                "nan" in text or "NaN" in text or "NAN" in text or "inf" in text or "Inf" in text):
            m = _NONFINITE_TEXT.search(text)
            if m is not None:  # "Model diverged with loss = NaN", "NaN loss during training"
                word = (m.group(1) or m.group(2) or "nan").lower()
                ev = {"kind": "nonfinite", "t": t if t is not None else _line_time(text), "step": self.last_step,
                      "field": "loss", "value": "inf" if word.startswith("inf") else "nan", "text": stripped[:MAX_TEXT]}
                if p is not None and progress:
                    p["_nf_loss"], p["loss"] = ev["value"], None
                else:
                    out.append(ev)
        return out

    def _notable(self, text: str, stripped: str, prefix: str, t: float | None) -> list[Event]:
        """An error, the end, the run's total steps in one segment."""
        out = self._error(text, stripped, prefix, t)
        if out:
            self._error_after_point = True
        fin = self._finish(text, t)
        if fin is not None:
            out.append(fin)
        if "Total optimization steps" in text or "total steps" in text or "ax steps" in text or "aximum steps" in text:
            m = _RUN_TOTAL.search(text)
            if m is not None:
                self.run_total = _int((m.group(1) or m.group(2) or m.group(3) or "").replace(",", ""))
        return out

    def _take(self, point: Event) -> None:
        """Remember a progress point's step (for events and HF dict lines after it)."""
        self._epochs = point.pop("_epochs", None)
        step = point.get("step")
        if step is not None:
            self.last_step = step
            self.last_total = point.get("total")
        self.last_point = point
        self._error_after_point = False

    def _nonfinite_of(self, point: Event) -> list[Event]:
        if "_nf_loss" not in point and "_nf_grad_norm" not in point:  # the usual point: nothing non-finite
            point.pop("_text", None)
            return []
        out = []
        for field in ("loss", "grad_norm"):
            word = point.pop("_nf_" + field, None)
            if word:
                out.append({"kind": "nonfinite", "t": point.get("t"), "step": point.get("step"), "field": field,
                            "value": word, "text": point.get("_text", "")})
        point.pop("_text", None)
        return out

    # ------------------------------------------------------------------ errors
    def _error(self, text: str, stripped: str, prefix: str, t: float | None) -> list[Event]:
        out: list[Event] = []
        cpp = self._cpp
        if cpp is not None:  # a C++ exception's report: "what():", then its frames
            if stripped.startswith(("what():", "Exception raised from", "frame #")):
                if stripped.startswith("what():") and not cpp[1]:
                    what = stripped[7:].strip()
                    ev = self._standalone_error(what, what, t)  # "what(): ... Watchdog caught ... timeout"
                    if ev is not None:
                        self._cpp = None
                        return [ev]
                    self._cpp = cpp = (cpp[0], what[:MAX_TEXT], cpp[2])
                if "ProcessGroupNCCL" in text or "nccl" in text:
                    self._cpp = None
                    return [self._error_event("nccl_error", cpp[1] or cpp[0], t)]
                return []
            self._cpp = None
            out.append(self._error_event("abort", cpp[1] or cpp[0], t))
        if "terminate called after throwing" in text:
            self._cpp = (stripped[:MAX_TEXT], "", 0)
            return out
        tb = self._tb
        if "Traceback (most recent call last)" in text:
            if len(tb) >= MAX_TRACEBACKS and prefix not in tb:
                tb.pop(next(iter(tb)))
            tb[prefix] = (0, 0)
            return out
        if prefix in tb:
            first = text[:1]
            if first in (" ", "\t") or stripped[:1] in ("^", "~", "[") or stripped.startswith(
                    ("During handling", "The above exception", "File ", "...", "+", "|", "frame #", "Exception raised")):
                self._in_tb_body = True
                body, _gap = tb[prefix]
                tb[prefix] = (body + 1, 0)
                if body > 5000:  # a traceback this long is no traceback: stop waiting for its end
                    del tb[prefix]
                return out
            m = _TB_LAST.match(stripped)
            if m is not None:
                del tb[prefix]
                out.append(self._error_event(self._kind_of_exception(m.group(1) or m.group(2) or "", stripped),
                                             stripped, t))
                return out
            body, gap = tb[prefix]  # another rank's line, unprefixed: the traceback stays open a while
            tb[prefix] = (body, gap + 1)
            if gap >= TB_GAP_LINES:  # its last line never came (a cut log)
                del tb[prefix]
        ev = self._standalone_error(text, stripped, t)
        if ev is not None:
            out.append(ev)
        return out

    @staticmethod
    def _kind_of_exception(name: str, line: str) -> str:
        if "out of memory" in line and ("CUDA" in line or "OutOfMemory" in name or "HIP" in line):
            return "cuda_oom"
        if "OutOfMemoryError" in name:
            return "cuda_oom"
        if "NCCL" in line or "DistBackendError" in name or "nccl" in line:
            return "nccl_timeout" if ("timeout" in line.lower() or "timed out" in line) else "nccl_error"
        if "ChildFailedError" in name:
            return "child_failed"
        if "AssertionError" in name:
            return "assertion"
        if "KeyboardInterrupt" in name:
            return "interrupted"
        return "traceback"

    def _standalone_error(self, text: str, stripped: str, t: float | None) -> Event | None:
        if "out of memory" in text or "OUT_OF_MEMORY" in text:
            if _OOM.search(text):
                return self._error_event("cuda_oom", stripped, t)
        if "NCCL" in text or "ncc" in text:
            if "Watchdog caught collective operation timeout" in text or (
                    "milliseconds before timing out" in text and "WorkNCCL" in text):
                return self._error_event("nccl_timeout", stripped, t)
            if "NCCL WARN" in text:
                self._nccl_warn = stripped[:MAX_TEXT]  # the reason, for the error trace that may follow
            elif "NCCL INFO" in text and " -> " in text:
                if _NCCL_TRACE.search(text) and self._nccl_warn is not None:  # ncclResult != 0 coming back up
                    warn, self._nccl_warn = self._nccl_warn, None
                    return self._error_event("nccl_error", warn, t)
            elif _NCCL_ERR.search(text):
                return self._error_event("nccl_error", stripped, t)
        if "exitcode" in text:
            m = _EXITCODE.search(text)
            if m is not None:
                code = int(m.group(1))
                if code < 0:
                    return self._error_event(SIGNAL_KINDS.get(-code, "signal"), stripped, t)
                if code > 0:
                    return self._error_event("exit", stripped, t)
        if "received by PID" in text:
            m = _SIGNAL.search(text)
            if m is not None:
                return self._error_event(SIGNAL_KINDS.get(int(m.group(1)), "signal"), stripped, t)
        if "ChildFailedError" in text and stripped.startswith(("torch.distributed", "ChildFailedError")):
            return self._error_event("child_failed", stripped, t)
        if "Segmentation fault" in text or "SIGSEGV" in text:
            if stripped.startswith(("Segmentation fault", "Fatal Python error: Segmentation fault")) or \
                    "Segmentation fault (core dumped)" in text or _BASH_KILLED.search(text) or "Caught signal 11 (SIGSEGV" in text:
                return self._error_event("segfault", stripped, t)
        if stripped == "Killed" or ("Killed" in text and _BASH_KILLED.search(text)):
            return self._error_event("killed", stripped, t)
        if stripped.startswith(("Aborted (core dumped)", "Bus error (core dumped)")):
            return self._error_event("abort" if stripped[0] == "A" else "bus_error", stripped, t)
        if "slurmstepd" in text and "CANCELLED" in text:  # the scheduler ended the job (time limit, scancel)
            return self._error_event("killed", stripped, t)
        if "received SIGTERM" in text or "Received SIGTERM" in text:
            return self._error_event("terminated", stripped, t)
        return None

    def _error_event(self, kind: str, text: str, t: float | None) -> Event:
        return {"kind": "error", "t": t if t is not None else _line_time(text), "step": self.last_step,
                "error": kind, "text": text[:MAX_TEXT]}

    def _finish(self, text: str, t: float | None) -> Event | None:
        hit = None
        if "Trainer.fit` stopped" in text and _FIT_STOPPED.search(text):
            hit = text
        elif "'train_runtime'" in text or '"train_runtime"' in text:
            hit = text
        else:
            for word in _FINISHED_TEXT:
                if word in text:
                    if "poch" not in text and "POCH" not in text:  # "Epoch 3 training completed" is an epoch's end
                        hit = text
                    break
        if hit is None:
            return None
        self._finished = True
        return {"kind": "finished", "t": t if t is not None else _line_time(text), "step": self.last_step,
                "text": hit.strip()[:MAX_TEXT]}

    # ------------------------------------------------------------------ progress
    def _progress(self, text: str, stripped: str, t: float | None, dry: bool = False) -> Event | None:
        p = self._match(text, stripped, dry)
        if p is None:
            return None
        if p.get("step") is None and p.get("loss") is None and p.get("epoch") is None and not p.get("_nf_loss"):
            return None
        if t is None:
            t = _line_time(text)
        point: Event = {"kind": "progress", "t": t, "step": None, "total": None, "epoch": None, "rate": None,
                        "rate_unit": None, "step_s": None, "elapsed_s": None, "loss": None, "grad_norm": None}
        point.update(p)
        for key in _CHECKED:
            v = point[key]
            if v is None or (v.__class__ is float and v - v == 0.0):  # None or a finite float: kept as is
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                point[key] = None
        point["_text"] = stripped[:MAX_TEXT]
        return point

    def _match(self, text: str, stripped: str, dry: bool) -> Event | None:
        """The progress a segment shows, by format family, in order: bars and dicts, Keras, prints."""
        first = stripped[:1]
        p = self._match_bars(text, dry)
        if p is not None:
            return p
        if "/" in text:
            if first.isdigit() or first == "":
                p = self._keras(text, dry)
                if p is not None:
                    return p
            if "] - " in text and "/" in text:
                p = self._keras_glued(text)
                if p is not None:
                    return p
            if "Epoch " in text and first == "E":
                m = _KERAS_EPOCH.match(text)
                if m is not None and not dry:
                    self.epoch, self.epochs = float(m.group(1)), _int(m.group(2))
                    return None
        return self._match_prints(text, first)

    def _match_bars(self, text: str, dry: bool) -> Event | None:
        """Hugging Face dict lines (also after a logger's prefix), Rich's and tqdm's bars."""
        if "{" in text and ("loss" in text or "train_runtime" in text):
            brace = text.find("{'")
            if brace < 0:
                brace = text.find('{"')
            if brace >= 0:
                p = self._hf(text, brace)
                if p is not None:
                    return p
        if "Epoch " in text and ("\u2501" in text or "\u2022" in text):
            p = self._rich(text)
            if p is not None:
                return p
        if ("|" in text or "% " in text) and "/" in text and "[" in text:
            p = self._tqdm(text, dry)
            if p is not None:
                return p
        if "it [" in text or "s/it" in text or "it/s" in text:
            return self._tqdm_nototal(text, dry)
        return None

    def _ms_point(self, step: str, ms_text: str, fmt: str, loss: float | None) -> Event:
        """A loop that prints its step's milliseconds (nanoGPT's ``time 123.45ms``, llama2.c's)."""
        ms = _float(ms_text)
        return self._with_loss({"step": _int(step), "rate": ms, "rate_unit": "ms/step",
                                "step_s": ms / 1000 if ms is not None else None, "format": fmt}, loss)

    def _match_prints(self, text: str, first: str) -> Event | None:
        """The training loops' own prints: Megatron/NeMo, nanoGPT, llm.c, llama2.c, DeepSpeed, MMEngine,
        torchtitan, ESPnet, then plain ``step ... loss ...`` prints."""
        if "iteration" in text and "|" in text:
            p = self._megatron(text)
            if p is not None:
                return p
        if "iter " in text and "loss" in text:
            m = _NANOGPT.search(text)
            if m is not None:
                return self._ms_point(m.group(1), m.group(3), "nanogpt", _float(m.group(2)))
        if "step" in text and "loss" in text:
            p = self._llmc(text)
            if p is not None:
                return p
        if "|" in text and "loss" in text and first.isdigit():
            m = _LLAMA2C.match(text)
            if m is not None:
                return self._ms_point(m.group(1), m.group(3), "llama2c", _float(m.group(2)))
        if "steps:" in text and "iter time" in text:
            p = self._deepspeed(text)
            if p is not None:
                return p
        if "step=" in text and "skipped=" in text:
            m = _DS_RANK_STEP.search(text)
            if m is not None:
                return {"step": _int(m.group(1)), "format": "deepspeed"}
        if "SamplesPerSec=" in text:
            m = _DS_TIMER.search(text)
            if m is not None:
                step = _int(m.group(1) or m.group(3))
                sps = _float(m.group(4))
                return {"step": step, "rate": sps, "rate_unit": "samples/s", "format": "deepspeed"}
        if ("Epoch" in text or "Iter" in text) and "[" in text and "/" in text:
            p = self._mmengine(text)
            if p is not None:
                return p
        if "step:" in text and "loss:" in text and ("tps:" in text or "memory:" in text or "mfu:" in text or "tflops:" in text):
            p = self._titan(text)
            if p is not None:
                return p
        if "epoch:train:" in text:
            m = _ESPNET.search(text)
            if m is not None:
                p = {"step": _int(m.group(3)), "epoch": _float(m.group(1)), "format": "espnet"}
                self._fields(text, p)
                return p
        low_loss = "loss" in text or "Loss" in text or "LOSS" in text
        if low_loss:
            return self._plain(text)
        return None

    def _with_loss(self, p: Event, loss: float | None, grad: float | None = None) -> Event:
        _put_finite(p, "loss", loss)
        if grad is not None:
            _put_finite(p, "grad_norm", grad)
        return p

    def _fields(self, text: str, p: Event, loss: bool = True) -> None:
        """Loss and grad norm where the line names them (finite kept, non-finite flagged)."""
        if loss and p.get("loss") is None and not p.get("_nf_loss"):
            m = _LOSS.search(text)
            if m is not None:
                self._with_loss(p, _float(m.group(1)))
        if p.get("grad_norm") is None and not p.get("_nf_grad_norm") and "norm" in text:
            m = _GRAD.search(text)
            if m is not None:
                g = _float(m.group(1))
                nf = _nonfinite_word(g)
                if nf:
                    p["_nf_grad_norm"] = nf
                p["grad_norm"] = _finite(g)

    def _hf(self, text: str, brace: int) -> Event | None:
        kv: dict[str, float | None] = {}
        for key, num in _HF_KV.findall(text, brace):
            if key not in kv:  # the first of a key counts
                try:
                    kv[key] = float(num)  # what _HF_KV takes is a number float() reads (or nan/inf)
                except (ValueError, OverflowError):  # pragma: no cover - defensive
                    kv[key] = None
        loss_key = "loss" if "loss" in kv else ("train_loss" if "train_loss" in kv else (
            "train/loss" if "train/loss" in kv else None))
        if loss_key is None:
            return None
        p: Event = {"format": "hf", "epoch": _finite(kv.get("epoch"))}
        if "train_runtime" in kv:  # the end summary: the run's mean loss, the last it prints; no step
            return self._with_loss(p, kv.get(loss_key))
        step = kv.get("step") if "step" in kv else kv.get("global_step")
        if step is not None and math.isfinite(step) and step >= 0:
            p["step"] = int(step)
            p["total"] = self.run_total or self.last_total
        elif self.last_step is not None and self.last_point is not None and self.last_point.get("format") in ("tqdm", "hf"):
            p["step"], p["total"] = self.last_step, self.last_total  # the bar's step, printed just before
        return self._with_loss(p, kv.get(loss_key), kv.get("grad_norm") if "grad_norm" in kv else None)

    def _tqdm(self, text: str, dry: bool) -> Event | None:
        """The last tqdm bar of a segment: ``desc: NN%|bar| n/total [elapsed<left, rate, k=v]``, also
        with its head overwritten by other output (bars glued on one line) or with no bar drawn
        (``steps:   0% 0/2300 [00:01<?, ?it/s]``, a notebook's)."""
        m = _last(_TQDM_RBAR, text, "|") if "|" in text else None
        desc = ""
        if m is not None:
            pos = text.rfind("%|", 0, m.start())
            if pos >= 1 and text[pos - 1].isdigit() and "]" not in text[pos:m.start()]:
                start = pos - 1
                while start > 0 and text[start - 1] in "0123456789. " and pos - start < 8:
                    start -= 1
                desc = text[:start]
                desc = desc[desc.rfind("]") + 1:]  # after an earlier bar glued before it
            # else: the head was overwritten; the description is unknown
        elif "% " in text:
            m = _last(_TQDM_NOBAR, text, "%")
            if m is None:
                return None
            desc = text[:m.start()]
            desc = desc[desc.rfind("]") + 1:]
        else:
            return None
        desc = desc.strip().rstrip(":").strip()
        n1, n2, inside = m.groups()
        step = int(n1) if len(n1) <= 15 and n1.isdecimal() else _scaled(n1, "")  # a plain count: as _scaled reads it
        total = int(n2) if len(n2) <= 15 and n2.isdecimal() else _scaled(n2, "")
        if step is None or total is None or step > total * 2 + 10:
            return None
        unit, rate, elapsed, post = self._bracket(inside)
        if unit is not None and ("B/s" in unit or unit.endswith("b/s")):
            return None  # a download
        if unit is None and elapsed is None:
            return None  # "| 3/4 [x]": no tqdm bracket
        lightning, epoch, epochs, other = _desc_info(desc)
        if other:
            return None
        if not dry and not self._main_bar(desc, step, total):
            return None
        p: Event = {"step": step, "total": total, "format": "lightning" if lightning else "tqdm", "elapsed_s": elapsed,
                    "epoch": epoch, "_epochs": epochs}
        self._rate(p, unit, rate)
        self._postfix(p, post, desc)
        if p.get("loss") is None and not p.get("_nf_loss") and m.start() > 0 and "oss" in text:
            head = text[:m.start()]
            if "oss" in head or "norm" in head:  # else _fields finds nothing there
                self._fields(head, p)  # a loss in the description, or in an outer bar glued before
        return p

    def _rich(self, text: str) -> Event | None:
        """Lightning's RichProgressBar: ``Epoch 3/9  ━━━━━━━ 450/1000 0:01:23 • 0:02:34 3.20it/s v_num: 1 train_loss: 0.5``."""
        m = _RICH.search(text)
        if m is None:
            return None
        p: Event = {"step": _int(m.group(3)), "total": _int(m.group(4)), "epoch": _float(m.group(1)),
                    "format": "lightning"}
        hh = m.group(5).split(":")
        try:
            p["elapsed_s"] = float(sum(int(x) * 60 ** i for i, x in enumerate(reversed(hh))))
        except ValueError:
            pass
        rest = text[m.end():]
        rm = _RICH_RATE.match(rest)
        if rm is not None:
            self._rate(p, rm.group(2), _float(rm.group(1)))
            rest = rest[rm.end():]
        self._fields(rest, p)
        return p

    def _main_bar(self, desc: str, step: int, total: int) -> bool:
        """False for a shorter bar opened inside the training bar (the Trainer's evaluation, same
        description): the run's progress stays on the bar that has not reached its total."""
        bars = self._bars
        main = bars.get(desc)
        if main is None or main[0] == total or main[1] >= main[0] or total > main[0]:
            if main is None and len(bars) >= 32:
                bars.pop(next(iter(bars)))
            bars[desc] = (total, step)
            return True
        return False

    def _tqdm_nototal(self, text: str, dry: bool) -> Event | None:
        m = _last(_TQDM_NOTOTAL, text, " [")
        if m is None:
            return None
        desc = text[:m.start()].strip().rstrip(":").strip().rstrip(":").strip()
        lightning, epoch, epochs, other = _desc_info(desc)
        if other:
            return None
        step = _int(m.group(1))
        unit, rate, _elapsed, post = self._bracket(m.group(3) + ", " + m.group(4))
        if unit is None:
            return None  # "[00:01, ...]" with no rate: not a bar
        if "B/s" in unit:
            return None
        p: Event = {"step": step, "format": "lightning" if lightning else "tqdm", "elapsed_s": _elapsed,
                    "epoch": epoch, "_epochs": epochs}
        self._rate(p, unit, rate)
        self._postfix(p, post, desc)
        return p

    @staticmethod
    def _bracket(inside: str) -> tuple[str | None, float | None, float | None, list[str]]:
        """(rate unit, rate, elapsed seconds, postfix items) of tqdm's ``[elapsed<left, rate, k=v, ...]``."""
        fm = _TQDM_BRACKET.match(inside)
        if fm is not None:  # the usual "MM:SS<left, 11.99it/s, ...": what the general reading below gives
            mm, ss, num, prefix, unit, comma = fm.groups()
            return (unit, float(num) * _SCALE[prefix], float(int(mm) * 60 + int(ss)),
                    inside[fm.end():].split(",", 38) if comma else [])
        parts = inside.split(",", 40)
        elapsed = None
        unit = rate = None
        post: list[str] = []
        i = 0
        if parts:
            em = _ELAPSED.match(parts[0])
            if em is not None and em.group(1) is not None and len(parts) > 1:  # "1d, 01:23:45"
                parts = [parts[0] + "," + parts[1]] + parts[2:]
                em = _ELAPSED.match(parts[0].split(",", 1)[1])
                d = int(parts[0].split("d", 1)[0].strip() or 0)
            else:
                d = 0
            if em is not None:
                h = int(em.group(2) or 0)
                elapsed = d * 86400 + h * 3600 + int(em.group(3)) * 60 + int(em.group(4))
                i = 1
        for part in parts[i:]:
            if unit is None:
                rm = _TQDM_RATE.match(part)
                if rm is not None:
                    unit = rm.group(3)
                    rate = None if rm.group(1) == "?" else _float(rm.group(1))
                    if rate is not None:
                        rate *= _SCALE.get(rm.group(2), 1.0)
                    continue
            post.append(part)
        return unit, rate, (float(elapsed) if elapsed is not None else None), post

    @staticmethod
    def _rate(p: Event, unit: str | None, rate: float | None) -> None:
        if unit is None or rate is None or not math.isfinite(rate) or rate < 0:
            return
        kind = _STEP_UNITS.get(unit)
        if kind == "it/s":
            p["rate"], p["rate_unit"], p["step_s"] = rate, "it/s", (1.0 / rate if rate > 0 else None)
        elif kind == "s/it":
            p["rate"], p["rate_unit"], p["step_s"] = rate, "s/it", rate
        else:
            p["rate"], p["rate_unit"] = rate, _OTHER_UNITS.get(unit, unit)

    def _postfix(self, p: Event, post: list[str], desc: str) -> None:
        """tqdm postfix ``k=v`` items: the training loss (``loss``, ``train_loss``, ``train/loss_step``
        ...; not val/eval/test), the grad norm; else a loss in the description (``loss: 2.3``)."""
        if len(post) == 1:
            fm = _POSTFIX_LOSS.match(post[0])
            if fm is not None:  # the usual lone "loss=2.31": what the loop below makes of it
                self._with_loss(p, float(fm.group(1)))
                if "grad_norm" not in p:
                    p["grad_norm"] = None
                return
        loss_v: tuple[int, str] | None = None
        for item in post:
            m = _POSTFIX.match(item)
            if m is None:
                continue
            key, val = m.groups()
            key = key.lower()
            if key in _GRAD_KEYS and p.get("grad_norm") is None:
                self._with_loss(p, p.get("loss"), _float(val.strip()))
                continue
            if "loss" not in key or key.startswith(("val", "eval", "test", "valid")) or "/val" in key:
                continue
            rank = 0 if key in ("loss", "train_loss", "train/loss", "training_loss") else (
                1 if key.endswith(("loss_step", "loss")) else 2)
            if loss_v is None or rank < loss_v[0]:
                loss_v = (rank, val)
        if loss_v is not None:
            words = loss_v[1].split()
            v = _float(words[0] if words else "")
            if v is not None:
                self._with_loss(p, v)  # the grad norm left as it is
                if "grad_norm" not in p:
                    p["grad_norm"] = None
        elif desc and ("loss" in desc or "Loss" in desc):
            self._fields(desc, p)

    def _keras(self, text: str, dry: bool) -> Event | None:
        m = _KERAS.match(text)
        if m is None:
            return None
        rest = text[m.end():]
        if "loss" not in rest and "ETA" not in rest and "step" not in rest:
            return None
        step = _int(m.group(1))
        total = None if m.group(2) == "Unknown" else _int(m.group(2))
        return self._keras_point(step, total, rest)

    def _keras_glued(self, text: str) -> Event | None:
        """Keras updates glued on one line (its "\\b" redraws lost): the last ``N/M [===]`` counts."""
        m = _last(_KERAS_ANY, text, " [")
        if m is None:
            return None
        return self._keras_point(_int(m.group(1)), _int(m.group(2)), text[m.end():])

    def _keras_point(self, step: int | None, total: int | None, rest: str) -> Event:
        p: Event = {"step": step, "total": total, "format": "keras", "epoch": self.epoch}
        sm = _KERAS_STEP_T.search(rest)
        if sm is not None:
            v = _float(sm.group(1))
            if v is not None:
                unit = sm.group(2)
                secs = v / 1e6 if unit == "us" else (v / 1000 if unit == "ms" else v)
                p["rate"], p["rate_unit"], p["step_s"] = v, unit + "/step", secs
        lm = _LOSS.search(rest)
        if lm is not None:
            self._with_loss(p, _float(lm.group(1)))
        return p

    def _megatron(self, text: str) -> Event | None:
        m = _MEGATRON.match(text) or _MEGATRON.search(text, 0, 256)
        fmt = "megatron"
        if m is None:
            m = _NEMO.search(text)
            if m is None:
                return None
            fmt = "nemo"
        if "reduced_train_loss" in text or "train_step_timing" in text:
            fmt = "nemo"
        p: Event = {"step": _int(m.group(1)), "total": _int(m.group(2)), "format": fmt}
        ms = _MEG_MS.search(text)
        if ms is not None:
            v = _float(ms.group(1))
            p["rate"], p["rate_unit"], p["step_s"] = v, "ms/step", (v / 1000 if v is not None else None)
        elif "train_step_timing" in text:
            sm = _NEMO_STEP_S.search(text)
            if sm is not None:
                v = _float(sm.group(1))
                p["rate"], p["rate_unit"], p["step_s"] = v, "s/it", v
        self._fields(text, p)
        if "nan iterations" in text:
            nm = _MEG_NAN_ITERS.search(text)
            if nm is not None and int(nm.group(1)) > 0 and not p.get("_nf_loss"):
                p["_nf_loss"] = "nan"
        return p

    def _llmc(self, text: str) -> Event | None:
        m = _LLMC.search(text)
        if m is not None:
            p: Event = {"step": _int(m.group(1)), "total": _int(m.group(2)), "format": "llmc"}
            self._with_loss(p, _float(m.group(3)))
            mm = _LLMC_MS.search(text, m.end())
            if mm is not None:
                v = _float(mm.group(1))
                p["rate"], p["rate_unit"], p["step_s"] = v, "ms/step", (v / 1000 if v is not None else None)
            else:
                tm = _LLMC_TOK.search(text, m.end())
                if tm is not None:
                    p["rate"], p["rate_unit"] = _float(tm.group(1)), "tokens/s"
            self._fields(text[m.end():], p, loss=False)
            return p
        m = _LLMC_OLD.search(text)
        if m is not None:
            v = _float(m.group(3))
            p = {"step": _int(m.group(1)), "format": "llmc", "rate": v, "rate_unit": "ms/step",
                 "step_s": v / 1000 if v is not None else None}
            return self._with_loss(p, _float(m.group(2)))
        m = _NANOGPT_EVAL.search(text)
        if m is not None:
            return self._with_loss({"step": _int(m.group(1)), "format": "nanogpt"}, _float(m.group(2)))
        return None

    def _deepspeed(self, text: str) -> Event | None:
        m = _DS_STEPS.search(text)
        if m is None:
            return None
        p: Event = {"step": _int(m.group(1)), "format": "deepspeed"}
        im = _DS_ITER_S.search(text)
        if im is not None:
            v = _float(im.group(1))
            p["rate"], p["rate_unit"], p["step_s"] = v, "s/it", v
        else:
            sm = _DS_SPS.search(text)
            if sm is not None:
                p["rate"], p["rate_unit"] = _float(sm.group(1)), "samples/s"
        self._fields(text, p)
        return p

    def _mmengine(self, text: str) -> Event | None:
        m = _MMENGINE.search(text)
        if m is None or m.group(1) in ("val", "test"):
            return None
        p: Event = {"step": _int(m.group(3)), "total": _int(m.group(4)), "format": "mmengine"}
        if m.group(2):
            p["epoch"] = _float(m.group(2))
        tm = _MM_TIME.search(text, m.end())
        if tm is not None:
            v = _float(tm.group(1))
            p["rate"], p["rate_unit"], p["step_s"] = v, "s/it", v
        self._fields(text[m.end():], p)
        if p.get("loss") is None and not p.get("_nf_loss") and p.get("rate") is None:
            return None
        return p

    def _titan(self, text: str) -> Event | None:
        m = _TITAN_STEP.search(text)
        if m is None:
            return None
        p: Event = {"step": _int(m.group(1)), "format": "torchtitan", "total": self.run_total}
        tm = _TITAN_TPS.search(text)
        if tm is not None:
            p["rate"], p["rate_unit"] = _float(tm.group(1)), "tokens/s"
        self._fields(text[m.end():], p)
        return p

    def _plain(self, text: str) -> Event | None:
        p: Event = {"format": "plain"}
        self._fields(text, p)
        if p.get("loss") is None and not p.get("_nf_loss"):
            return None
        lm = _LOSS.search(text)
        limit = lm.start() if lm is not None else len(text)
        head = text[:limit].lower()
        if "valid" in head or "eval" in head or "test" in head:
            return None  # an evaluation's line, not a training step
        if _SUMMARY_LOSS.match(text):
            return p  # "Train loss: 1.0989" in a run's end summary: the last loss it printed
        m = _PLAIN_STEP.search(text, 0, limit) if ("tep" in text or "ter" in text or "TEP" in text or "atch" in text) else None
        if m is not None:
            p["step"], p["total"] = _int(m.group(1)), _int(m.group(2))
        else:
            bm = _BRACKET_STEP.search(text, 0, limit) if "[" in text else None
            if bm is None and "/" in head:
                bm = _SLASH_STEP.search(text, 0, limit)  # "67/446 (epoch 0), train_loss = 2.9", fairseq's "2000 / 8223 loss="
            if bm is not None:
                p["step"], p["total"] = _int(bm.group(1)), _int(bm.group(2))
        em = _EPOCH.search(text) if ("poch" in text) else None
        if em is not None:
            p["epoch"] = _float(em.group(1))
        if p.get("step") is None and self._num_prefix is not None:
            p["step"] = self._num_prefix  # "1500: loss 2.31": what looked like srun's "0: " label was the step
        if p.get("step") is None and p.get("epoch") is None:
            return None
        rm = _RATE.search(text) if "/" in text else None
        if rm is not None:
            v = _float(rm.group(1))
            if v is not None:
                v *= _SCALE.get(rm.group(2), 1.0)
                unit = rm.group(3)
                if unit in ("ms/it", "ms/step", "ms/iter"):
                    p["rate"], p["rate_unit"], p["step_s"] = v, "ms/step", v / 1000
                elif unit == "us/step":
                    p["rate"], p["rate_unit"], p["step_s"] = v, "us/step", v / 1e6
                else:
                    self._rate(p, unit, v)
        if p.get("rate") is None and "ms" in text:
            tm = _MS_TIME.search(text)
            if tm is not None:
                v = _float(tm.group(1))
                if v is not None:
                    p["rate"], p["rate_unit"], p["step_s"] = v, "ms/step", v / 1000
        if p.get("rate") is None and ("tps" in text or "TPS" in text):
            tm = _TPS.search(text)
            if tm is not None:
                p["rate"], p["rate_unit"] = _float(tm.group(1)), "tokens/s"
        return p


class RunLog:
    """Events -> the log part of the ``run`` reading, in bounded memory: the newest ``MAX_POINTS``
    progress points (and the first), ``MAX_EVENTS`` events (the first half kept, then the newest),
    every point and line counted."""

    MAX_POINTS = 2000
    MAX_EVENTS = 200

    def __init__(self) -> None:
        self.parser = ProgressParser()
        self.progress: deque[dict] = deque(maxlen=self.MAX_POINTS)
        self.first: dict | None = None
        self.points_seen = 0
        self._head: list[dict] = []
        self._tail: deque[dict] = deque(maxlen=self.MAX_EVENTS - self.MAX_EVENTS // 2)
        self.events_seen = 0
        self.error: dict | None = None
        self.finished: dict | None = None
        self.lines_read = 0
        self.cut_lines = 0
        self.formats: dict[str, int] = {}
        self.last_line_t: float | None = None

    def add(self, ev: dict) -> None:
        """Keep one event of ``ProgressParser.feed`` (anything else is ignored)."""
        if not isinstance(ev, dict):
            return
        kind = ev.get("kind")
        if kind == "progress":
            point = ev.copy()
            del point["kind"]
            if "\n_" in "\n" + "\n".join(point):  # a private key ("_text", ...)
                point = {k: v for k, v in point.items() if not k.startswith("_")}
            self._point(point)
            return
        if kind not in ("nonfinite", "error", "finished"):
            return
        ev = {k: v for k, v in ev.items() if not k.startswith("_")}
        self.events_seen += 1
        if len(self._head) < self.MAX_EVENTS // 2:
            self._head.append(ev)
        else:
            self._tail.append(ev)
        if kind == "error":
            new = ev.get("error")
            old = self.error.get("error") if self.error else None
            if old is None or ERROR_RANK.get(str(new), 4) >= ERROR_RANK.get(str(old), 4):
                self.error = ev
        elif kind == "finished":
            self.finished = ev

    def _point(self, point: dict) -> None:
        self.points_seen += 1
        if self.first is None:
            self.first = point
        self.progress.append(point)
        fmt = str(point.get("format") or "")
        if fmt in self.formats or len(self.formats) < 64:
            self.formats[fmt] = self.formats.get(fmt, 0) + 1

    def line(self, text: str, t: float | None = None) -> None:
        """Feed one physical line and keep its events."""
        self.lines_read += 1
        for ev in self.parser.feed(text, t):
            if ev["kind"] == "progress":  # the parser's points carry no private key ("_text" ...) by now
                point = ev.copy()
                del point["kind"]
                self._point(point)
            else:
                self.add(ev)
        if self.parser.cut:
            self.cut_lines += 1
        if t is not None:
            self.last_line_t = t

    def flush(self) -> None:
        """End of input (a saved log read to its end)."""
        for ev in self.parser.flush():
            self.add(ev)

    def data(self) -> dict:
        """RunData's log keys."""
        return {"progress": list(self.progress), "first": self.first, "points_seen": self.points_seen,
                "events": self._head + list(self._tail), "error": self.error, "finished": self.finished,
                "lines_read": self.lines_read, "cut_lines": self.cut_lines, "formats": dict(self.formats),
                "last_line_t": self.last_line_t}


def lines(text: str) -> Iterator[str]:
    """The physical lines of ``text``: split on "\\n" only ("\\r" is tqdm's, the parser splits it)."""
    start = 0
    n = len(text)
    while start < n:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def parse_text(text: str, t: float | None = None) -> RunLog:
    """A whole saved log."""
    log = RunLog()
    for line in lines(text):
        log.line(line, t)
    log.flush()
    return log
