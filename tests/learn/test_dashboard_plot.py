"""The braille plot renderer (`_terminal_plot`) and the number formats of the dashboard."""

from __future__ import annotations

import math

import pytest

from torchtally.learn._dashboard.terminal_plot import (
    PlotSeries,
    braille_cells,
    data_ranges,
    plot_text,
    render_plot,
)
from torchtally.learn._format import format_duration, format_rate, format_value


def _text(rows):
    return ["".join(text for text, _ in row) for row in rows]


def test_a_diagonal_lights_the_expected_dots():
    # 4 points on a 2×1 box = a 4×4 dot grid: dots (col, row) (0,3) (1,2) (2,1) (3,0).
    rows = braille_cells([PlotSeries("a", [0, 1, 2, 3], [0, 1, 2, 3])], 2, 1, (0, 3), (0, 3))
    # left cell: dot 7 (col 0 row 3) + dot 6 (col 1 row 2); right cell: dot 2 + dot 4.
    assert _text(rows) == [chr(0x2800 + 0x40 + 0x20) + chr(0x2800 + 0x02 + 0x08)]
    assert rows == [[("⡠⠊", 0)]]


def test_a_falling_line_goes_from_top_left_to_bottom_right():
    rows = _text(braille_cells([PlotSeries("a", [0, 9], [1.0, 0.0])], 5, 3, (0, 9), (0.0, 1.0)))
    # Top row: dots only at the left; bottom row: dots only at the right; all joined up.
    assert rows[0][0] != " " and rows[0][-1] == " "
    assert rows[-1][0] == " " and rows[-1][-1] != " "
    assert all(any(c != " " for c in row) for row in rows)


def test_a_known_series_renders_to_the_expected_plot():
    series = [PlotSeries("train", [1, 2, 3, 4], [0.9, 0.5, 0.45, 0.4])]
    expected = [
        " 0.9┤⠑⡄                 ",
        "    │ ⠈⠢⡀               ",
        "0.65┤   ⠑⢄              ",
        "    │     ⠣⣀⣀           ",
        " 0.4┤        ⠉⠉⠉⠒⠒⠒⠤⠤⠤⣀⣀",
        "     1      epoch      4",
    ]
    assert plot_text(series, 24, 6, x_label="epoch").split("\n") == expected
    rows = render_plot(series, 40, 9, x_label="epoch")
    assert len(rows) == 9 and {sum(len(t) for t, _ in row) for row in rows} == {40}


def test_a_constant_series_is_one_level_line_across_the_middle():
    rows = _text(
        braille_cells([PlotSeries("a", [0, 1, 2, 3], [5.0] * 4)], 10, 5, (0, 3), (4.5, 5.5))
    )
    lit = [r for r, row in enumerate(rows) if row.strip()]
    assert lit == [2]  # one row, the middle one
    assert all(c != " " for c in rows[2])  # across the whole width
    assert len(set(rows[2])) == 1  # the same dots everywhere: level
    assert data_ranges([PlotSeries("a", [0, 1], [5.0, 5.0])]) == ((0, 1), (4.5, 5.5))
    assert data_ranges([PlotSeries("a", [0, 1], [0.0, 0.0])]) == ((0, 1), (-1.0, 1.0))


def test_nan_and_inf_are_skipped_and_leave_a_gap():
    ys = [0.0, math.nan, math.inf, 3.0]
    rows = _text(braille_cells([PlotSeries("a", [0, 1, 2, 3], ys)], 8, 2, (0, 3), (0, 3)))
    # Only the two finite points are drawn (one dot each), nothing in between.
    assert rows[1][0] != " " and rows[0][-1] != " "
    assert rows[0][:-1].strip() == "" and rows[1][1:].strip() == ""
    assert data_ranges([PlotSeries("a", [0, 1, 2], ys[:3])]) == ((0, 1), (-1.0, 1.0))
    assert data_ranges([PlotSeries("a", [0], [math.nan])]) is None
    empty = _text(render_plot([PlotSeries("a", [0], [math.nan])], 20, 5))
    assert "no data yet" in empty[2] and {len(row) for row in empty} == {20}


def test_several_series_share_axes_and_keep_their_owner():
    train = PlotSeries("train", [0, 1, 2], [3.0, 2.0, 1.0])
    valid = PlotSeries("valid", [1, 2], [10.0, 10.0])
    rows = render_plot([train, valid], 30, 6)
    owners = {owner for row in rows for _, owner in row}
    assert owners == {None, 0, 1}
    text = _text(rows)
    assert text[0].startswith(" 10┤") and text[2].startswith("5.5┤") and text[4].startswith("  1┤")
    # The valid line (owner 1) is on the top row, starting halfway across.
    top = rows[0]
    assert [owner for _, owner in top if owner is not None] == [1]
    assert plot_text([train, valid], 30, 6).splitlines() == text


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: render_plot([], 11, 5),
            "Argument `width` must be an integer >= 12. Received: width=11",
        ),
        (lambda: render_plot([], 20, 1), "Argument `height` must be an integer >= 2"),
        (lambda: braille_cells([], 2, 1, (1, 1), (0, 1)), "Argument `x_range` must be finite"),
        (lambda: PlotSeries("a", [1, 2], [1]), "`xs` and `ys` must have the same length"),
    ],
)
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        call()


def test_number_formats():
    assert format_value(0.875, "%") == "87.50%"
    assert format_value(0.41234) == "0.412"
    assert format_value(1234.56) == "1234.6"
    assert format_value(61.04, "°C") == "61.0°C"
    assert format_value(12.34, "GiB") == "12.3 GiB"
    assert format_value(2.5e-5) == "2.500e-05"
    assert format_value(math.nan, "%") == "nan%"
    assert format_duration(12.4) == "0:00:12"
    assert format_duration(3723) == "1:02:03"
    assert format_duration(2 * 86400 + 3723) == "2d 1:02:03"
    assert format_duration(None) == format_duration(math.inf) == "?"
    assert format_rate(1234.4, 2.0) == "1234 samples/s"
    assert format_rate(None, 3.214) == "3.21 it/s"
    assert format_rate(None, None) == ""
