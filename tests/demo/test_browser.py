"""Headless Chromium opens the report: it renders (not blank) and the console stays silent.

The checks are proven able to fail: a page with a script error and a blank page are
caught. Chromium comes from `make bootstrap` (Debian's chromium package); without it
these tests fail, they do not skip.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from sfn_patterns_localstack.demo.report import AlarmRow, MetricSeries, browser, gantt, render

from .test_report import sample


def assert_renders(capture: browser.PageCapture, must_show: list[str]) -> None:
    """The contract every report must meet in the browser."""
    assert capture.console == [], capture.console
    colours = browser.colour_histogram(capture.png)
    _, count = colours.most_common(1)[0]
    total = sum(colours.values())
    assert len(colours) > 1, "the screenshot is one flat colour"
    assert total - count > total // 100, "less than 1% of the page differs from the background"
    for colour in must_show:
        assert colours[browser.hex_rgb(colour)] > 50, f"{colour} is not on the page"


@pytest.fixture(scope="module")
def chromium() -> str:
    found = browser.find_chromium()
    if found is None:
        pytest.fail("Chromium is missing: run `make bootstrap` (it installs Debian's chromium)")
    return found


def test_sample_report_renders_with_a_silent_console(chromium: str, tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text(render(sample()), encoding="utf-8")
    capture = browser.capture(page)
    # Stage colours of the Gantt bars and the green outcome badges are really drawn.
    assert_renders(capture, [gantt.STAGE_COLOURS[0], gantt.STAGE_COLOURS[2], "#2e7d32"])


def test_the_alarms_section_draws_its_states_and_charts(chromium: str, tmp_path: Path) -> None:
    """The Alarms section in the browser, an alarm in ALARM and a metric's chart.

    The sample report has no alarm, so neither colour below is on its page: the red
    badge is the ALARM state's, the blue line the sparkline's (alarms.sparkline).
    """
    alarms = [
        AlarmRow("demo-throttle-dlq-messages", "OK", "AWS/SQS ApproximateNumberOfMessagesVisible"),
        AlarmRow("demo-throttle-starter-errors", "ALARM", "AWS/Lambda Errors"),
    ]
    metrics = [MetricSeries("demo-semaphore", "SlotsHeld", [0.0, 3.0] * 6)]
    pages = {}
    for name, report in (("plain", sample()), ("alarms", sample(alarms=alarms, metrics=metrics))):
        pages[name] = tmp_path / f"{name}.html"
        pages[name].write_text(render(report), encoding="utf-8")
    alarm_red, chart_blue = "#c62828", "#2b6cb0"
    plain = browser.colour_histogram(browser.capture(pages["plain"], height=2400).png)
    assert plain[browser.hex_rgb(alarm_red)] == plain[browser.hex_rgb(chart_blue)] == 0
    assert_renders(browser.capture(pages["alarms"], height=2400), [alarm_red, chart_blue])


def test_a_script_error_is_caught(chromium: str, tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    html = render(sample()).replace("</body>", "<script>undefinedFunction();</script></body>")
    page.write_text(html, encoding="utf-8")
    capture = browser.capture(page, width=400, height=300)
    assert any("Uncaught ReferenceError" in line for line in capture.console), capture.stderr
    with pytest.raises(AssertionError):
        assert_renders(capture, [])


def test_a_blank_page_is_caught(chromium: str, tmp_path: Path) -> None:
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    capture = browser.capture(page, width=400, height=300)
    assert capture.console == []
    assert len(browser.colour_histogram(capture.png)) == 1
    with pytest.raises(AssertionError, match="flat colour"):
        assert_renders(capture, [])


def test_missing_chromium_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SFN_PATTERNS_CHROMIUM", str(tmp_path / "no-such-browser"))
    assert browser.find_chromium() is None
    with pytest.raises(browser.BrowserError, match="make bootstrap"):
        browser.capture(tmp_path / "x.html")


def test_console_messages_are_parsed_from_chromium_logs() -> None:
    stderr = (
        "[1:1:1122/020838.621087:ERROR:dbus/object_proxy.cc:572] Failed to call method\n"
        '[1:1:1122/020839.524030:INFO:CONSOLE:1] "boom", source: file:///t.html (1)\n'
        '[1:1:1122/020839.524130:INFO:CONSOLE(7)] "Uncaught TypeError: x", source: f (7)\n'
    )
    assert browser.console_messages(stderr) == [
        '"boom", source: file:///t.html (1)',
        '"Uncaught TypeError: x", source: f (7)',
    ]


# --- the colour histogram, on PNGs with known pixels --------------------------------


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
def test_colour_histogram_counts_every_pixel(mode: str) -> None:
    from PIL import Image

    image = Image.new(mode, (7, 10), (255, 255, 255, 255)[: len(mode)])
    for x in range(3):
        image.putpixel((x, 0), (46, 125, 50, 128)[: len(mode)])
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    histogram = browser.colour_histogram(buffer.getvalue())
    assert histogram == {(255, 255, 255): 67, browser.hex_rgb("#2e7d32"): 3}


def test_colour_histogram_rejects_other_files() -> None:
    from PIL import UnidentifiedImageError

    with pytest.raises(UnidentifiedImageError):
        browser.colour_histogram(b"GIF89a not really")
