"""kshell.screen: the screen a persistent terminal keeps while no one looks (a VT emulator and
a bounded text scrollback), and the bytes that paint it for a viewer who attaches."""

from __future__ import annotations

import tracemalloc

import pyte

from kshell.screen import VTScreen


def painted(screen: VTScreen) -> pyte.Screen:
    """A fresh terminal of the same size after the redraw bytes: what a new viewer sees."""
    viewer = pyte.Screen(*screen.size)
    pyte.ByteStream(viewer).feed(screen.redraw())
    return viewer


def test_scrollback_keeps_the_last_lines_as_text_within_its_bound() -> None:
    screen = VTScreen(80, 24, scrollback=1000)
    screen.feed(b"".join(b"line %d\r\n" % i for i in range(3000)) + b">>> ")
    assert len(screen.scrollback) == 1000
    assert screen.lines(3) == ["line 2998", "line 2999", ">>>"]
    every = screen.lines()
    assert every[0] == f"line {3000 - 1000 - 23}" and len(every) == 1000 + 24
    assert screen.lines(0) == []


def test_lines_leave_out_the_empty_rows_below_the_output() -> None:
    screen = VTScreen(80, 24)
    screen.feed(b"hello\r\nworld\r\n")
    assert screen.lines(10) == ["hello", "world"]


def test_redraw_paints_the_same_screen_colours_and_cursor() -> None:
    screen = VTScreen(40, 10)
    screen.feed(b"".join(b"row %d\r\n" % i for i in range(15)))
    screen.feed(b"\x1b[1;31mred\x1b[0m and \x1b[38;2;1;2;3mtrue\x1b[0m \xc3\xa9t\xc3\xa9 \xe4\xb8\xad\r\n>>> 6*7")
    viewer = painted(screen)
    assert [row.rstrip() for row in viewer.display] == screen.display()
    assert (viewer.cursor.x, viewer.cursor.y) == screen.cursor == (7, 9)
    red = viewer.buffer[8][0]
    assert red.data == "r" and red.fg == "red" and red.bold
    assert viewer.buffer[8][8].fg == "010203"
    assert viewer.buffer[8][13].fg == "default"


def test_a_full_screen_program_is_repainted_where_it_drew() -> None:
    screen = VTScreen(30, 8)
    screen.feed(b"\x1b[2J\x1b[3;5H\x1b[7mmenu\x1b[0m\x1b[8;1Hstatus\x1b[1;1H")
    viewer = painted(screen)
    assert viewer.display[2].rstrip() == "    menu" and viewer.buffer[2][4].reverse
    assert viewer.display[7].rstrip() == "status"
    assert (viewer.cursor.x, viewer.cursor.y) == (0, 0)


def test_resize_keeps_what_fits() -> None:
    screen = VTScreen(80, 24)
    screen.feed(b"first\r\nsecond")
    screen.resize(100, 30)
    assert screen.size == (100, 30)
    assert screen.lines() == ["first", "second"]


def test_a_detached_screen_with_1000_lines_of_scrollback_stays_under_256_kib() -> None:
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        screens = [VTScreen(80, 24, scrollback=1000) for _ in range(4)]
        for screen in screens:
            screen.feed(b"".join(b"line %d of an agent's output, with some words\r\n" % i for i in range(1100)))
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # the screens' own allocations (in the emulator's files): other threads of a test worker
    # process (an earlier test's daemons) allocate meanwhile, and are not the screens'
    ours = [stat for stat in after.compare_to(before, "filename")
            if stat.traceback[0].filename.endswith(("kshell/screen.py",)) or "/pyte/" in stat.traceback[0].filename]
    per = sum(stat.size_diff for stat in ours) / len(screens)
    assert all(len(s.scrollback) == 1000 for s in screens)
    assert per < 256 * 1024, f"{per / 1024:.0f} KiB per screen"


def test_the_screen_is_the_one_pyte_itself_makes() -> None:
    """Drawing's fast way (ASCII runs on one line) against pyte's own screen, over wrapping,
    colours, cursor moves, insert mode, the line-drawing charset, wide and combining characters."""
    parts = [
        b"plain text\r\n", b"\x1b[1;32mgreen bold\x1b[0m then plain\r\n", b"w" * 130 + b"\r\n",
        b"\x1b[5;10Hmoved\x1b[2;3Hover", b"\x1b[4h" + b"inserted" + b"\x1b[4l", b"\x1b(0lqqk\x1b(B ascii",
        "wide \u4e2d\u6587 and e\u0301 combined\r\n".encode(), b"\x1b[7mreverse\x1b[27m\r\n",
        b"".join(b"row %d\r\n" % i for i in range(40)), b"x" * 79 + b"yz", b"\x1b[H\x1b[2Kcleared",
    ]
    ours = VTScreen(80, 24)
    theirs = pyte.Screen(80, 24)
    stream = pyte.ByteStream(theirs)
    for part in parts:
        ours.feed(part)
        stream.feed(part)
        mine = ours._screen  # noqa: SLF001
        for y in range(24):
            for x in range(80):
                a, b = mine.buffer[y][x], theirs.buffer[y][x]
                assert a == b, (part, x, y, a, b)
        assert (mine.cursor.x, mine.cursor.y) == (theirs.cursor.x, theirs.cursor.y)
