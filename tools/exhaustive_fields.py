"""Every field of every stored reading, set to each of a fixed list of wrong values: no judge
crashes, hangs or says ok where the unspoilt readings did not; or the file is refused in one line.

The property tests (tests/hostile/test_snapshot_fields.py) sample this space, derandomized, and the
sample depends on the Python version: on 3.12 they reached a field 3.11's sample never did. This
goes through all of it, too slow for the suite (about 3 minutes on 2 cores): run it after changing a
judge or a reader. Exits 1 when any case fails, listing them.

    python tools/exhaustive_fields.py [--values all|structural]
"""

from __future__ import annotations

import argparse
import collections
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from sparktui.core.readings import SnapshotError, read_snapshot  # noqa: E402
from sparktui.testing.spoil import (  # noqa: E402
    SOURCES, base_statuses, judges_of, source_doc, source_paths, verdict_problems, with_value, write)

STRUCTURAL = [[], {}]
ALL = STRUCTURAL + [None, 0, -1, 1e308, math.nan, "12.1", "", True, [1, 2], {"value": "x"}]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--values", choices=("all", "structural"), default="all")
    values = ALL if ap.parse_args().values == "all" else STRUCTURAL
    start, cases, bad = time.monotonic(), 0, []
    for label in sorted(SOURCES):
        for path in source_paths(label):
            for value in values:
                cases += 1
                with tempfile.TemporaryDirectory() as d:
                    snap = write(with_value(source_doc(label), path, value), d)
                    try:
                        readings = read_snapshot(snap)[0]
                    except SnapshotError:
                        continue
                    except Exception as e:  # noqa: BLE001 - the reader's bug under test
                        bad.append(f"{label} {path} = {value!r:.20}: reader raised {e!r:.120}")
                        continue
                found = verdict_problems(readings, base_statuses(label), judges_of(path))
                bad += [f"{label} {path} = {value!r:.20}: {f}" for f in found]
        print(f"{label}: {len(source_paths(label))} fields x {len(values)} values, {cases} cases so far, "
              f"{len(bad)} failing, {time.monotonic() - start:.0f} s", flush=True)
    print(f"{cases} cases ({len(SOURCES)} recorded sources: every field, {len(values)} wrong values each): "
          f"{len(bad)} failing")
    for problem, n in collections.Counter(b.split(": ", 1)[1][:100] for b in bad).most_common(10):
        print(f"  {n} x {problem}")
    for b in bad[:40]:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
