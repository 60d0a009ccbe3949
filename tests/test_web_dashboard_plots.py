"""The dashboard's SVG geometry (web.dashboard_plots): pure functions, checked on small cases."""

from __future__ import annotations

from assay.web.dashboard_plots import WIDTH, Bar, Segment, hbars, heatmap, lines


def test_bars_share_one_scale_and_a_funnel_is_centred() -> None:
    bars = [Bar("all", [Segment(10, "a", "")], "10"), Bar("half", [Segment(5, "b", "")], "5")]
    plain = [m for m in hbars("f", "t", "d", bars).marks if m.kind == "rect"]
    assert plain[1].w == plain[0].w / 2 and plain[1].x == plain[0].x
    centred = [m for m in hbars("f", "t", "d", bars, centred=True).marks if m.kind == "rect"]
    assert centred[1].x - centred[0].x == centred[0].w / 4  # a quarter on each side


def test_stacked_segments_follow_each_other_and_empty_ones_are_left_out() -> None:
    bar = Bar("x", [Segment(3, "a", ""), Segment(0, "b", ""), Segment(1, "c", "")], "4")
    rects = [m for m in hbars("f", "t", "d", [bar]).marks if m.kind == "rect"]
    assert [r.cls for r in rects] == ["a", "c"]
    assert rects[1].x == rects[0].x + rects[0].w


def test_a_heatmap_shades_by_count_and_names_each_cell() -> None:
    figure = heatmap(
        "h", "t", "d", ["2026-03-01", "2026-03-02"], [("ada", [0, 8])], "{row} {column}: {count}"
    )
    cells = [m for m in figure.marks if m.kind == "rect"]
    assert [c.cls for c in cells] == ["heat h0", "heat h5"]
    assert cells[1].tip == "ada 2026-03-02: 8"


def test_a_line_breaks_where_a_week_has_no_value() -> None:
    figure = lines("l", "t", "d", ["w1", "w2", "w3", "w4"], [("s", "k", [1.0, None, 0.0, 0.5])])
    path = next(m for m in figure.marks if m.kind == "path")
    assert path.d.count("M") == 2 and path.d.count("L") == 1
    dots = [m for m in figure.marks if m.cls == "dot k"]
    assert [d.tip for d in dots] == ["s · w1: 100%", "s · w3: 0%", "s · w4: 50%"]
    assert all(0 <= d.x <= WIDTH for d in dots)
