"""The focus ring stands out from what it surrounds (WCAG 1.4.11, non-text contrast: at
least 3:1), in the participants' light and dark colours and on the staff pages."""

import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[1] / "static" / "annotation"


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first: str, second: str) -> float:
    lighter, darker = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _variables(block: str) -> dict[str, str]:
    return dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-fA-F]{6})", block))


def schemes() -> dict[str, dict[str, str]]:
    css = (STATIC / "worker.css").read_text()
    light = _variables(css[css.index(":root {") : css.index("}", css.index(":root {"))])
    dark_start = css.index("@media (prefers-color-scheme: dark)")
    dark = {**light, **_variables(css[dark_start : css.index("}", dark_start)])}
    return {"light": light, "dark": dark}


def test_contrast_matches_the_wcag_examples():
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_participants_focus_ring_has_3_to_1_against_the_page(scheme):
    colours = schemes()[scheme]
    for ground in ("paper", "back", "chosen-back"):
        ratio = contrast(colours["focus"], colours[ground])
        assert ratio >= 3, f"{scheme}: focus on {ground} is {ratio:.2f}:1"


def test_the_staff_focus_ring_has_3_to_1_against_white():
    rings = set(
        re.findall(r"outline: \d+px solid (#[0-9a-fA-F]{6})", (STATIC / "staff.css").read_text())
    )
    assert rings
    for ring in rings:
        assert contrast(ring, "#ffffff") >= 3, ring
