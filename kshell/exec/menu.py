"""The menu `select` prints on stderr, laid out as bash's print_select_list lays it out:
numbered items in columns down then across, as many as COLUMNS holds, padded with tabs and
spaces to bash's tab stops of 8."""

from __future__ import annotations


def _indent(start: int, end: int) -> str:
    out = []
    while start < end:
        if end // 8 > start // 8:
            out.append("\t")
            start += 8 - start % 8
        else:
            out.append(" ")
            start += 1
    return "".join(out)


def select_menu(items: list[str], columns: int) -> str:
    count = len(items)
    number_len = len(str(count))
    max_len = max(len(item) for item in items) + number_len + 4  # ") " and two spaces
    cols = max(columns // max_len, 1)
    rows = count // cols + (count % cols != 0)
    cols = count // rows + (count % rows != 0)
    if rows == 1:
        rows, cols = cols, 1
    first_len = len(str(rows))
    lines = []
    for row in range(rows):
        index, pos, line = row, 0, []
        while True:
            width = first_len if pos == 0 else number_len
            line.append(f"{index + 1:>{width}}) {items[index]}")
            used = len(items[index]) + width + 2
            index += rows
            if index >= count:
                break
            line.append(_indent(pos + used, pos + max_len))
            pos += max_len
        lines.append("".join(line) + "\n")
    return "".join(lines)
