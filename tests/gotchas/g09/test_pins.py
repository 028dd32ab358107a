"""Pin files (real files in tmp_path: includes, markers, malformed lines), the shipped sets, and
the PEP 440 / PEP 508 comparator G9 uses, cross-checked against ``packaging``."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.markers import Marker as PMarker
from packaging.specifiers import SpecifierSet as PSpecifierSet
from packaging.version import Version as PVersion

from sparktui.core.config import Config
from sparktui.core.versions import (
    InvalidMarker,
    InvalidSpecifier,
    Marker,
    UndefinedMarkerVariable,
    Version,
    canonical_name,
    parse_specifiers,
    specifiers_contain,
)
from sparktui.probes import pins


def cfg_for(path: Path | None = None, image: str = "ngc-pytorch-25.11") -> Config:
    return Config().with_overrides(pins={"file": str(path) if path else None, "image": image})


def write(p: Path, text: str) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


# ---- comparator -----------------------------------------------------------------------------

VERSIONS = [
    "2.9.0", "2.9.0+cu128", "2.9.0+cu130", "2.9.1", "2.10.0a0", "2.10.0a0+b558c986e8.nv25.11",
    "2.10.0", "2.10.0.dev20250901", "2.10.0rc1", "2.10.0.post1", "1!0.1", "2.7.4.post1",
    "2.7.4.post1+25.11", "2.7.4", "2.8.3", "0.25.0a0+7a13ad0f", "2.9", "3.0.0b2", "2.9.0+cpu",
    # the corners of < and > (a version's own pre-, post- and local releases)
    "2.9.0.post1", "2.9.0.post1.dev2", "2.9.0rc1", "2.9.0rc1.post1", "2.9.0rc1+x", "2.9.0.dev3", "2.9.0-1",
    "2.9.0a1.post2", "2.9.0.post1+x", "v2.9.0", "2.9.0_rc_2",
]
SPECS = [
    "==2.9.0", "==2.9.0+cu130", "!=2.9.0", "==2.9.*", "!=2.9.*", ">=2.9", "<2.10", "<=2.10.0", ">2.9.0",
    "~=2.9", "~=2.9.0", ">=2.9,<2.11", "==2.10.0a0+b558c986e8.nv25.11", "==2.7.4.post1", ">2.7.4",
    "<2.10.0rc1", ">=2.10.0a0", "==1!0.1", "==2.10.*",
    "<2.9.0.post1", ">2.9.0rc1", ">2.9.0", ">2.9.0.dev0", "<2.9.0rc1", ">2.9.0.post1", "===2.9.0",
]


@pytest.mark.parametrize("spec", SPECS)
def test_specifiers_agree_with_packaging_with_prereleases_allowed(spec):
    mine = parse_specifiers(spec)
    theirs = PSpecifierSet(spec)
    for v in VERSIONS:
        expected = theirs.contains(v, prereleases=True)
        assert specifiers_contain(mine, v if spec.startswith("===") else Version(v)) == expected, (spec, v)


def test_version_order_agrees_with_packaging():
    assert sorted(VERSIONS, key=Version) == sorted(VERSIONS, key=PVersion)


def test_local_label_matters_only_when_the_pin_names_one():
    assert specifiers_contain(parse_specifiers("==2.9.0"), Version("2.9.0+cu128"))
    assert not specifiers_contain(parse_specifiers("==2.9.0+cu130"), Version("2.9.0+cu128"))
    assert specifiers_contain(parse_specifiers("==2.7.4.post1"), Version("2.7.4.post1+25.11"))


@pytest.mark.parametrize("bad", ["2.9", ">=", "=>2.9", "==2.9.x", ">=2.9.*", "~=2", ">=2.9+cu130", "==abc"])
def test_malformed_specifiers_are_rejected(bad):
    with pytest.raises(InvalidSpecifier):
        parse_specifiers(bad)


MARKERS = [
    'python_version >= "3.11"',
    'python_version < "3.11" or platform_machine == "aarch64"',
    'sys_platform == "linux" and (platform_machine == "x86_64" or platform_machine == "aarch64")',
    '"linux" in sys_platform',
    'platform_machine not in "x86_64 AMD64"',
    "implementation_name == 'cpython' and python_full_version != '3.12.3'",
]
ENV = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
       "platform_machine": "aarch64", "implementation_name": "cpython", "os_name": "posix", "extra": ""}


@pytest.mark.parametrize("text", MARKERS)
def test_markers_agree_with_packaging(text):
    assert Marker(text).evaluate(ENV) == PMarker(text).evaluate(dict(ENV))


@pytest.mark.parametrize("bad", ['python_version >= ', 'pyver == "3"', '(python_version == "3.12"', 'python_version "3"'])
def test_malformed_markers_are_rejected(bad):
    with pytest.raises(InvalidMarker):
        Marker(bad)


def test_marker_needing_an_unreported_variable_says_which():
    with pytest.raises(UndefinedMarkerVariable) as e:
        Marker('platform_release >= "6.8"').evaluate(ENV)
    assert e.value.args[0] == "platform_release"


def test_names_normalise_per_pep503():
    assert canonical_name("Flash_Attn") == canonical_name("flash.attn") == "flash-attn"


# ---- pins files -----------------------------------------------------------------------------

def test_requirements_file_with_includes_markers_extras_and_options(tmp_path):
    write(tmp_path / "sub" / "cuda.txt", "nvidia-nccl-cu13==2.27.7  # comment\n")
    write(tmp_path / "constraints.txt", "numpy<2.3\n-r sub/cuda.txt\n")
    top = write(tmp_path / "pins.txt", """\
# the stack we tested
--index-url https://download.pytorch.org/whl/cu130

torch==2.9.0+cu130 \\
    --hash=sha256:0123456789abcdef
Transformers[torch] >= 4.57 , <5 ; python_version >= "3.10"
flash_attn==2.8.3 ; platform_machine == "x86_64"
peft (==0.18.0)
-c constraints.txt
--constraint=sub/cuda.txt
-e ./my-local-lib
git+https://github.com/unslothai/unsloth.git
accelerate
""")
    ps = pins.load(top)
    assert not ps.errors, ps.errors
    got = {p["name"]: p for p in ps.pins}
    assert got["torch"]["spec"] == "==2.9.0+cu130" and got["torch"]["line"] == 4
    assert got["transformers"]["spec"] == ">=4.57,<5" and got["transformers"]["extras"] == ["torch"]
    assert got["transformers"]["marker"] == 'python_version >= "3.10"'
    assert got["flash-attn"]["marker"] == 'platform_machine == "x86_64"'
    assert got["peft"]["spec"] == "==0.18.0"
    assert got["numpy"]["spec"] == "<2.3" and got["numpy"]["file"].endswith("constraints.txt")
    assert got["accelerate"]["spec"] == ""
    assert [p["name"] for p in ps.pins].count("nvidia-nccl-cu13") == 2
    whys = {s["text"].split()[0]: s["why"] for s in ps.skipped}
    assert whys["--index-url"] == "pip option, ignored"
    assert whys["-e"].startswith("editable")
    assert "URL" in whys["git+https://github.com/unslothai/unsloth.git"]
    assert len(ps.files) == 4  # pins.txt, constraints.txt, cuda.txt (twice)


@pytest.mark.parametrize("line, why", [
    ("torch=2.9.0", "use == for an exact version"),
    ("torch==2.9.x", "not a PEP 440 version"),
    ("torch==2.9.0 extra-words", "not a version specifier"),
    ("torch>=2.9.*", "only works with == and !="),
    ('torch==2.9.0 ; python_version >> "3"', "bad marker"),
    ('torch==2.9.0 ; pyversion == "3"', "unknown marker variable"),
    ("torch==2.9.0 ;", "empty marker"),
    ("[torch]==2.9", "not a requirement"),
])
def test_malformed_line_names_file_line_and_reason(tmp_path, line, why):
    f = write(tmp_path / "pins.txt", f"numpy==2.1.0\n\n{line}\n")
    reading = pins.read(cfg_for(f))
    assert reading.data is None
    assert f"{f}:3" in reading.error and why in reading.error


def test_missing_include_and_cycles_are_errors(tmp_path):
    a = write(tmp_path / "a.txt", "-r b.txt\n-c nowhere.txt\n")
    write(tmp_path / "b.txt", "torch==2.9.0\n-r a.txt\n")
    ps = pins.load(a)
    assert f"{a}:2: included {tmp_path / 'nowhere.txt'}: no such file" in ps.errors
    assert any("include cycle" in e for e in ps.errors)
    assert [p["name"] for p in ps.pins] == ["torch"]


def test_unreadable_pins_file_is_a_clear_error(tmp_path):
    assert "no such file" in pins.read(cfg_for(tmp_path / "absent.txt")).error
    (tmp_path / "dir.txt").mkdir()
    assert "is a folder" in pins.read(cfg_for(tmp_path / "dir.txt")).error
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"torch==2.9.0 # caf\xe9\n")
    assert "not UTF-8" in pins.read(cfg_for(bad)).error


def test_many_errors_are_capped_in_the_message(tmp_path):
    f = write(tmp_path / "pins.txt", "".join(f"bad{i}==x.y\n" for i in range(9)))
    err = pins.read(cfg_for(f)).error
    assert err.count("not a PEP 440 version") == pins.MAX_ERRORS_SHOWN and "(+4 more)" in err


def test_pinned_names_survive_a_broken_file(tmp_path):
    f = write(tmp_path / "pins.txt", "Flash_Attn==2.7.4.post1\ntorch=oops\ntorchvision==0.25.0\n")
    assert pins.pinned_names(cfg_for(f)) == ["flash-attn", "torchvision"]
    assert pins.pinned_names(cfg_for(tmp_path / "absent.txt")) == []


@pytest.mark.parametrize("image", ["ngc-pytorch-25.11", "ngc-pytorch-25.09"])
def test_shipped_sets_parse_cleanly_with_cuda_metadata(image):
    reading = pins.read(cfg_for(image=image))
    assert reading.error is None, reading.error
    d = reading.data
    assert d["origin"] == "shipped" and d["image"] == image
    assert d["meta"]["cuda"] == "13.0" and d["meta"]["ngc"] == image.rsplit("-", 1)[1]
    names = [p["name"] for p in d["pins"]]
    assert names[0] == "torch" and "flash-attn" in names
    assert ".nv" + image.rsplit("-", 1)[1] in d["pins"][0]["spec"]
    assert image in d["shipped_sets"]


def test_default_config_uses_the_shipped_25_11_set():
    assert "torch" in pins.pinned_names(Config())


def test_unknown_image_lists_what_is_shipped():
    err = pins.read(cfg_for(image="ngc-pytorch-99.99")).error
    assert "ngc-pytorch-99.99" in err and "ngc-pytorch-25.11" in err
