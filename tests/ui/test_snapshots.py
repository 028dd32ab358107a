"""Snapshot tests: the main screen, a failing card and the process table, drawn from the shipped
GB10 recording, must match screenshots/*.svg (which the README shows).

The comparison is on what the terminal shows (the characters of every line), not on SVG bytes:
colour classes are hashed by Rich and change with its version, the screen's content must not.
After an intended change: `python tools/make_screenshots.py`, look at the pictures, commit them.
"""

from __future__ import annotations

import html
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "screenshots"
_spec = importlib.util.spec_from_file_location("make_screenshots", ROOT / "tools" / "make_screenshots.py")
make_screenshots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_screenshots)

_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', re.S)


def screen_lines(svg: str) -> list[str]:
    """The terminal's lines as a reader sees them, rebuilt from the SVG's positioned text runs."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, text in _TEXT.findall(svg):
        rows.setdefault(float(y), []).append((float(x), html.unescape(text).replace("\xa0", " ")))
    return ["".join(t for _, t in sorted(runs)).rstrip() for _, runs in sorted(rows.items())]


@pytest.mark.parametrize("name", list(make_screenshots.SHOTS))
async def test_screen_matches_the_committed_screenshot(name):
    committed = SHOTS / f"{name}.svg"
    assert committed.exists(), "run: python tools/make_screenshots.py"
    now = screen_lines(await make_screenshots.render(name))
    then = screen_lines(committed.read_text(encoding="utf-8"))
    assert len(now) == make_screenshots.size_of(name)[1]
    diff = [f"line {i}:\n  now : {a!r}\n  shot: {b!r}" for i, (a, b) in enumerate(zip(now, then)) if a != b]
    assert not diff and len(now) == len(then), (
        "the screen differs from screenshots/" + committed.name + " (if intended: python tools/make_screenshots.py)\n"
        + "\n".join(diff[:8]))


async def test_the_screenshots_show_what_the_readme_promises():
    main = "\n".join(screen_lines((SHOTS / "main.svg").read_text(encoding="utf-8")))
    for gid in [f"G{i}" for i in range(1, 15)]:
        assert re.search(rf"\b{gid}\b", main), gid
    assert "NVIDIA GB10" in main and "REPLAY 16:25 / 16:25 · ended" in main and "VLLM::EngineCore" in main
    card = "\n".join(screen_lines((SHOTS / "card-g1-failing.svg").read_text(encoding="utf-8")))
    assert "G1: CUDA 12/13 ABI mismatch" in card and "Status: FAIL" in card
    assert "pip install torch torchvision --index-url https://download.pytorch.org/whl/cu130" in card
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in make_screenshots.SHOTS:
        assert f"screenshots/{name}.svg" in readme, name


async def test_no_color_draws_the_screen_in_greys(monkeypatch):
    """NO_COLOR (no-color.org) is honoured: Textual reads it and draws through a monochrome filter;
    the status glyphs still tell ok / warn / fail apart by shape (✔ ▲ ✘)."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_screenshots.demo_app()
    assert app.no_color
    async with app.run_test(size=make_screenshots.SIZE) as pilot:
        await make_screenshots.until_loaded(app, pilot)
        svg = app.export_screenshot()
    # the terminal's own colours: text style rules and cell backgrounds (not the window decoration)
    fills = set(re.findall(r"-r\d+ \{ fill: (#[0-9a-f]{6})", svg)) | set(re.findall(r'<rect fill="(#[0-9a-f]{6})"', svg))
    def tinted(f: str) -> bool:  # a grey has equal channels (Rich's default text grey #c5c8c6 within 8)
        rgb = [int(f[i:i + 2], 16) for i in (1, 3, 5)]
        return max(rgb) - min(rgb) > 8

    assert fills and not [f for f in fills if tinted(f)]
    lines = screen_lines(svg)
    assert any("✘  G1" in ln or "✘ G1" in ln for ln in lines) and any("▲ G4" in ln for ln in lines)
