"""pyproject says Python >= 3.10, and CI runs 3.11: a regex with a possessive quantifier (`\\w{0,9}+`)
or an atomic group (`(?>...)`), both new in 3.11, compiles here and breaks `import sparktui` on 3.10
("multiple repeat"). It happened once (G10's sweep reading); every compiled pattern of the package
is checked for them here."""

from __future__ import annotations

import importlib
import pkgutil
import re

import sparktui

# an unescaped quantifier followed by '+' (possessive), or an atomic group
ONLY_311 = re.compile(r"(?<!\\)(?:[*+?}])\+|\(\?>")
SKIP = {"sparktui.__main__"}  # runs the CLI when imported


def compiled_patterns():
    for info in pkgutil.walk_packages(sparktui.__path__, "sparktui."):
        if info.name in SKIP:
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                yield f"{info.name}.{name}", value.pattern


def test_the_check_itself_sees_the_311_forms():
    assert ONLY_311.search(r"\w{0,200}+") and ONLY_311.search(r"(?>ab)") and ONLY_311.search(r"a*+")
    assert not ONLY_311.search(r"\++") and not ONLY_311.search(r"[+]+") and not ONLY_311.search(r"a{1,2}b+")


def test_no_pattern_of_the_package_needs_python_311():
    found = [(name, p) for name, p in compiled_patterns() if ONLY_311.search(p if isinstance(p, str) else p.decode("latin-1"))]
    assert not found, found
    assert sum(1 for _ in compiled_patterns()) > 100  # the walk reached the modules
