"""The report's charts say what they show: one colour per source and per kind everywhere,
each agreement measure on its own scale, no label over a point, captions that define,
eager images, and every figure downloadable as SVG and PDF."""

import io
import logging
import re
import zipfile

import numpy as np
import pytest
from django.test import Client
from matplotlib.lines import Line2D
from matplotlib.text import Text

from analysis import plots
from analysis.views import CAPTIONS
from tests.analysis.test_report_page import analysed_batch
from tests.staff import staff_client as client_for

FAMILIES = plots.subset_families(False, ["full", "tukey_k1.5", "top_entropy_2pct"])
SOURCES = ["Skywork-Reward-Gemma-2-27B", "Llama-3.1-8B-Instruct", "gpt-4o:overall"]


def correlations(names) -> list[dict]:
    rng = np.random.default_rng(0)
    return [
        {
            "source": name,
            "kind": "lm",
            "subset": subset,
            "n": 40,
            "spearman": {"r": float(rng.uniform(-1, 1)), "p": 0.01, "ci95": [-0.5, 0.9]},
        }
        for name in names
        for subset in ("full", "tukey_k1.5", "top_entropy_2pct")
    ]


def pairwise_items(n_items: int = 60, all_ties: int = 7) -> list[dict]:
    rng = np.random.default_rng(1)
    items = []
    for index in range(n_items):
        if index < all_ties:
            counts = {"-2": 0, "-1": 0, "0": 5, "1": 0, "2": 0}
        else:
            counts = dict(
                zip(["-2", "-1", "0", "1", "2"], rng.multinomial(5, [0.2] * 5), strict=True)
            )
        c_a = counts["1"] + counts["2"]
        c_b = counts["-1"] + counts["-2"]
        agreement = max(c_a + counts["0"] / 2, c_b + counts["0"] / 2) / 5
        items.append(
            {
                "item_id": f"p{index}",
                "n": 5,
                "counts": counts,
                "entropy_bits": float(rng.uniform(0, 2.3)),
                "agreement": agreement,
                "p_disagree": 1 - agreement,
            }
        )
    return items


def every_drawing() -> dict[str, plots.Drawing]:
    rng = np.random.default_rng(2)
    items = pairwise_items()
    scatter = [
        plots.ScatterPanel(name, "judge", rng.normal(size=300), rng.uniform(1, 5, 300))
        for name in SOURCES
    ]
    by_kind = [
        {"kind": kind, "subset": subset, "spearman_mean": 0.3, "n_sources": 2}
        for kind in ("lm", "judge")
        for subset in ("full", "tukey_k1.5", "top_entropy_2pct")
    ]
    agreement = {
        "krippendorff_alpha_ordinal": -0.12,
        "krippendorff_alpha_interval": 0.31,
        "mean_entropy_bits": 1.9,
        "mean_grouped_entropy_bits": 1.2,
        "mean_gini_impurity": 0.7,
        "mean_pairwise_annotator_disagreement": 0.72,
        "mean_majority_share": 0.55,
        "mean_p_disagree": 0.33,
    }
    return {
        "correlations": plots.correlation_drawing(correlations(SOURCES), FAMILIES),
        "by-kind": plots.by_kind_drawing(by_kind, FAMILIES),
        "entropy": plots.entropy_drawing(items),
        "p-disagree": plots.p_disagree_drawing(items),
        "agreement": plots.agreement_drawing(agreement),
        "crowd": plots.crowd_spearman_drawing(
            [{"crowd_spearman": float(v)} for v in rng.uniform(-1, 1, 40)]
            + [{"crowd_spearman": None}]
        ),
        "scatter": plots.scatter_drawing(scatter),
        **bundle_drawings(rng),
    }


def bundle_drawings(rng) -> dict[str, plots.Drawing]:
    """A bundled batch's charts (ANALYSIS.md, "Bundles"), on figures shaped as the report's."""
    bundles = [
        {
            "kendalls_w": None if number == 0 else float(rng.uniform(0, 1)),
            "mean_item_entropy": float(rng.uniform(0, 2.3)),
            "two_way": None
            if number == 0
            else {key: float(rng.uniform(-0.2, 1)) for key in ("icc_2_1", "icc_3_1")}
            | {"participant_share": float(rng.uniform(0, 0.8))},
        }
        for number in range(12)
    ]
    effect = {"positions": list(range(15)), "mean_label": list(rng.uniform(2, 4, 15)),
              "n_labels": [1250] * 15}  # fmt: skip
    return {
        "bundle-positions": plots.position_drawing(
            effect, "Spearman ρ = −0.012 over 18,750 labels; permutation p = 0.41", [1, 2, 3, 4, 5]
        ),
        "bundle-w": plots.concordance_drawing(bundles),
        "bundle-w-entropy": plots.concordance_entropy_drawing(bundles, "Spearman ρ = −0.5"),
        "bundle-decomposition": plots.decomposition_drawing(bundles),
        "bundle-idiosyncrasy": plots.idiosyncrasy_drawing(
            [{"spearman_with_others": float(v)} for v in rng.uniform(-1, 1, 60)]
            + [{"spearman_with_others": None}]
        ),
    }


# --------------------------------------------------------------------------- colours


def test_a_source_keeps_its_colour_whatever_the_order_and_run():
    colours = plots.source_colours(SOURCES)
    assert plots.source_colours(list(reversed(SOURCES))) == colours
    assert len(set(colours.values())) == len(SOURCES)
    # fixed by the name's SHA-256, not by Python's per-process string hash
    assert colours == {
        name: plots.SOURCE_PALETTE[plots.source_slots(SOURCES)[name]] for name in SOURCES
    }
    nine = [f"source-{index}" for index in range(9)]
    assert len(set(plots.source_colours(nine).values())) == 9  # no two alike up to nine


def test_every_chart_draws_a_source_in_its_colour():
    colours = plots.source_colours(SOURCES)
    figure = plots.correlation_drawing(correlations(SOURCES), FAMILIES).figure()
    drawn = {
        line.get_label(): line.get_color()
        for ax in figure.axes
        for line in ax.get_lines()
        if line.get_label() in colours
    }
    assert drawn == colours
    scatter = plots.scatter_drawing(
        [
            plots.ScatterPanel(name, "lm", np.arange(10.0), np.arange(10.0))
            for name in reversed(SOURCES)
        ]
    ).figure()
    for ax in scatter.axes:
        if not ax.get_visible():
            continue
        name = ax.get_title(loc="left")
        face = ax.collections[0].get_facecolor()[0][:3]
        assert np.allclose(face, plots.matplotlib.colors.to_rgb(colours[name])), name


def test_kinds_have_fixed_colours_of_their_own():
    assert not set(plots.KIND_COLOURS.values()) & set(plots.SOURCE_PALETTE)
    by_kind = [
        {"kind": kind, "subset": "full", "spearman_mean": 0.3, "n_sources": 1}
        for kind in ("judge", "lm", "reward_model")
    ]
    figure = plots.by_kind_drawing(by_kind, FAMILIES).figure()
    lines = {line.get_label(): line.get_color() for line in figure.axes[0].get_lines()}
    assert lines["LLM judge"] == plots.KIND_COLOURS["judge"]
    assert lines["reward model"] == plots.KIND_COLOURS["reward_model"]


# --------------------------------------------------------------------------- scales, labels


def test_agreement_measures_sit_on_their_own_scales():
    figure = every_drawing()["agreement"].figure()
    limits = [tuple(round(value, 3) for value in ax.get_xlim()) for ax in figure.axes]
    assert limits == [(-1.0, 1.0), (0.0, round(plots.LOG2_5, 3)), (0.0, 1.0)]
    labels = [[tick.get_text() for tick in ax.get_yticklabels()] for ax in figure.axes]
    assert labels[0] == ["ordinal = −0.120", "interval = 0.310"]
    assert "p_disagree = 0.330" in labels[2]


@pytest.mark.parametrize("key", list(every_drawing()))
def test_no_text_lies_inside_a_plotting_area(key):
    """Counts, means and notes go to titles and axis labels, never over points or bars."""
    figure = every_drawing()[key].figure()
    renderer = figure.canvas.get_renderer()
    areas = [ax.get_window_extent(renderer).padded(-1) for ax in figure.axes if ax.get_visible()]
    for text in figure.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        for area in areas:
            overlap = (
                min(box.x1, area.x1) - max(box.x0, area.x0),
                min(box.y1, area.y1) - max(box.y0, area.y0),
            )
            assert min(overlap) <= 0, f"{key}: {text.get_text()!r} lies on a plotting area"


def test_p_disagree_chart_counts_the_all_tie_items_and_the_caption_defines_them():
    items = pairwise_items(all_ties=7)
    assert plots.all_tie_items(items) == 7
    figure = plots.p_disagree_drawing(items).figure()
    assert "7 of them all ties: p_disagree = 0.5 by definition" in figure.axes[0].get_xlabel()
    caption = CAPTIONS["p-disagree"]
    assert "1 − max(C_A + C_tie/2, C_B + C_tie/2) / n" in caption
    assert "all ties" in caption and "nobody disagreed" in caption


def test_lines_carry_the_legend_and_no_point_label():
    figure = every_drawing()["correlations"].figure()
    assert all(isinstance(line, Line2D) for ax in figure.axes for line in ax.get_lines())
    assert figure.legends, "the sources are named in a legend below the panels"


# --------------------------------------------------------------------------- files


def test_inline_svg_keeps_its_colours_under_a_policy_without_inline_styles():
    for key, drawing in every_drawing().items():
        svg = drawing.svg()
        assert "<style" not in svg and " style=" not in svg, key
        assert ' fill="#' in svg, key


@pytest.mark.slow
def test_figure_files_are_svg_and_pdf_and_reproducible():
    drawing = every_drawing()["agreement"]
    pdf, svg = drawing.file("pdf"), drawing.file("svg")
    assert pdf.startswith(b"%PDF-") and b"/CreationDate" not in pdf
    assert svg.lstrip().startswith(b"<?xml") and b"<svg" in svg
    assert drawing.file("pdf") == pdf and drawing.file("svg") == svg
    with pytest.raises(ValueError):
        drawing.file("png")


def test_a_pdf_figure_leaves_the_log_quiet(caplog):
    # the worker logs at INFO: the font subsetting of each PDF must not fill it
    caplog.set_level(logging.INFO)
    every_drawing()["agreement"].file("pdf")
    assert [
        record.getMessage() for record in caplog.records if record.levelno < logging.WARNING
    ] == []


# --------------------------------------------------------------------------- page


@pytest.mark.slow
@pytest.mark.django_db
def test_download_figures_gives_every_chart_as_svg_and_pdf(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    researcher = client_for("researcher")
    batch = analysed_batch(kind="pairwise")
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'loading="lazy"' not in page and 'loading="eager"' in page
    assert f'href="/manage/{batch.slug}/report/figures.zip"' in page
    keys = re.findall(rf"/manage/{batch.slug}/report/figures/([a-z-]+)\.svg", page)
    assert {"correlations", "p-disagree", "agreement", "scatter"} <= set(keys)

    response = researcher.get(f"/manage/{batch.slug}/report/figures.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = set(archive.namelist())
    for key in keys:
        assert {f"{batch.slug}-{key}.svg", f"{batch.slug}-{key}.pdf"} <= names, key
        assert archive.read(f"{batch.slug}-{key}.pdf").startswith(b"%PDF-")
    captions = archive.read("captions.txt").decode()
    assert "p_disagree = 1 − max(C_A + C_tie/2, C_B + C_tie/2) / n" in captions

    one = researcher.get(f"/manage/{batch.slug}/report/figures/agreement.pdf")
    assert one.status_code == 200 and one["Content-Type"] == "application/pdf"
    assert f'filename="{batch.slug}-agreement.pdf"' in one["Content-Disposition"]
    assert researcher.get(f"/manage/{batch.slug}/report/figures/nope.svg").status_code == 404
    assert researcher.get(f"/manage/{batch.slug}/report/figures/agreement.png").status_code == 404
    assert client_for(None).get(f"/manage/{batch.slug}/report/figures.zip").status_code == 403
    assert Client().get(f"/manage/{batch.slug}/report/figures.zip").status_code == 302


def test_the_table_s_swatches_are_the_charts_colours():
    from pathlib import Path

    from analysis import presentation

    sheet = (Path(__file__).resolve().parents[2] / "static/analysis/report.css").read_text()
    rules = dict(
        re.findall(r"\.((?:source|kind)-colour-[\w]+) \{ background: (#[0-9a-f]{6}); \}", sheet)
    )
    for slot, colour in enumerate(plots.SOURCE_PALETTE):
        assert rules[f"source-colour-{slot}"] == colour
    for kind, colour in plots.KIND_COLOURS.items():
        assert rules[f"kind-colour-{kind}"] == colour
    report = {
        "kind": "absolute",
        "subsets": {"full": []},
        "sources": [],
        "correlations": correlations(SOURCES),
        "by_kind": [{"kind": "lm", "subset": "full", "spearman_mean": 0.2, "n_sources": 3}],
    }
    colours = plots.source_colours(SOURCES)
    for row in presentation.headline_rows(report):
        shown = rules[row["swatch"]]
        wanted = plots.KIND_COLOURS["lm"] if row["is_kind"] else colours[row["label"]]
        assert shown == wanted, row["label"]
