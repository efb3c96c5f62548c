"""A tiny terminal emulator: enough of xterm to turn rich's output into the screen a user sees.

Handles printable text with xterm's deferred line wrap, CR/LF/BS/TAB, cursor movement (CUU, CUD,
CUF, CUB, CNL, CPL, CHA, CUP, VPA), erasing (ED, EL, ECH), SGR (ignored: text only), cursor
visibility (?25) and the alternate screen (?1049, ?1047, ?47). Anything else is recorded in
`Screen.unknown` so a test can tell when rich starts emitting something this does not model.
"""

from __future__ import annotations

import re
import unicodedata

_TOKEN = re.compile(
    r"\x1b\[(?P<private>[?>=]?)(?P<params>[0-9;]*)(?P<final>[@-~])"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC (window title, links): ignored
    r"|\x1b(?P<esc>[()][0-9A-Za-z]|[78=>DEMc])"  # short escapes
    r"|(?P<control>[\x00-\x1a\x1c-\x1f\x7f])"  # C0 controls except ESC
)
_ALT_MODES = {"1049", "1047", "47"}


class Screen:
    """A `columns`×`lines` character grid fed with terminal output."""

    def __init__(self, columns: int, lines: int) -> None:
        self.columns, self.lines = columns, lines
        self.main = self._blank(lines)
        self.alt = self._blank(lines)
        self.alternate = False
        self.cursor_visible = True
        self.row = self.col = 0
        self.saved = (0, 0)
        self.wrap_pending = False
        self.scrollback: list[str] = []
        self.unknown: set[str] = set()
        self._tail = ""

    # -- reading -------------------------------------------------------------------------------
    @property
    def buffer(self) -> list[list[str]]:
        return self.alt if self.alternate else self.main

    @property
    def display(self) -> list[str]:
        """The visible rows, each exactly `columns` characters."""
        return ["".join(row) for row in self.buffer]

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.display)

    def main_text(self) -> str:
        """Scrollback plus the main (non-alternate) screen."""
        return "\n".join([*self.scrollback, *("".join(row).rstrip() for row in self.main)])

    # -- writing -------------------------------------------------------------------------------
    def feed(self, data: str) -> None:
        data = self._tail + data
        self._tail = ""
        position = 0
        for match in _TOKEN.finditer(data):
            self._print(data[position : match.start()])
            position = match.end()
            if match.group("final"):
                self._csi(match.group("private"), match.group("params"), match.group("final"))
            elif match.group("esc"):
                self._escape(match.group("esc"))
            elif match.group("control"):
                self._control(match.group("control"))
        rest = data[position:]
        escape = rest.find("\x1b")
        if escape >= 0:  # an escape sequence cut by the read: finish it with the next chunk
            self._tail = rest[escape:]
            rest = rest[:escape]
        self._print(rest)

    def resize(self, columns: int, lines: int) -> None:
        for name in ("main", "alt"):
            grid = getattr(self, name)
            grid = [(row + [" "] * columns)[:columns] for row in grid]
            while len(grid) > lines:  # xterm pushes the top rows out
                dropped = grid.pop(0)
                if name == "main":
                    self.scrollback.append("".join(dropped).rstrip())
            grid += self._blank(lines - len(grid), columns)
            setattr(self, name, grid)
        self.columns, self.lines = columns, lines
        self.row, self.col = min(self.row, lines - 1), min(self.col, columns - 1)
        self.wrap_pending = False

    # -- internals -----------------------------------------------------------------------------
    def _blank(self, count: int, columns: int | None = None) -> list[list[str]]:
        return [[" "] * (columns or self.columns) for _ in range(count)]

    def _print(self, text: str) -> None:
        for char in text:
            if char == "\x1b":
                continue  # a lone ESC of a sequence we do not model
            width = 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
            if self.wrap_pending:
                self.col = 0
                self._line_feed()
                self.wrap_pending = False
            self.buffer[self.row][self.col] = char
            if width == 2 and self.col + 1 < self.columns:
                self.buffer[self.row][self.col + 1] = ""
            if self.col + width >= self.columns:
                self.wrap_pending = True
            else:
                self.col += width

    def _line_feed(self) -> None:
        if self.row < self.lines - 1:
            self.row += 1
            return
        top = self.buffer.pop(0)
        if not self.alternate:
            self.scrollback.append("".join(top).rstrip())
        self.buffer.append([" "] * self.columns)

    def _control(self, char: str) -> None:
        if char == "\r":
            self.col = 0
        elif char in "\n\x0b\x0c":
            self._line_feed()
        elif char == "\b":
            self.col = max(self.col - 1, 0)
        elif char == "\t":
            self.col = min((self.col // 8 + 1) * 8, self.columns - 1)
        elif char != "\x07":
            self.unknown.add(repr(char))
        self.wrap_pending = False

    def _escape(self, code: str) -> None:
        if code == "7":
            self.saved = (self.row, self.col)
        elif code == "8":
            self.row, self.col = self.saved
        elif code in ("D", "E"):
            self.col = 0 if code == "E" else self.col
            self._line_feed()
        elif code[0] not in "()=>":
            self.unknown.add(f"ESC {code}")

    def _csi(self, private: str, params: str, final: str) -> None:
        numbers = [int(p) if p else 0 for p in params.split(";")] if params else []
        n = numbers[0] if numbers and numbers[0] > 0 else 1
        self.wrap_pending = False
        if private == "?":
            if final in "hl":
                for mode in params.split(";"):
                    self._mode(mode, final == "h")
            return
        if final == "A":
            self.row = max(self.row - n, 0)
        elif final == "B":
            self.row = min(self.row + n, self.lines - 1)
        elif final == "C":
            self.col = min(self.col + n, self.columns - 1)
        elif final == "D":
            self.col = max(self.col - n, 0)
        elif final in "EF":
            self.row = min(self.row + n, self.lines - 1) if final == "E" else max(self.row - n, 0)
            self.col = 0
        elif final == "G":
            self.col = min(n - 1, self.columns - 1)
        elif final in "Hf":
            row = numbers[0] if numbers and numbers[0] else 1
            col = numbers[1] if len(numbers) > 1 and numbers[1] else 1
            self.row, self.col = min(row - 1, self.lines - 1), min(col - 1, self.columns - 1)
        elif final == "d":
            self.row = min(n - 1, self.lines - 1)
        elif final == "J":
            self._erase_display(numbers[0] if numbers else 0)
        elif final == "K":
            self._erase_line(numbers[0] if numbers else 0)
        elif final == "X":
            row = self.buffer[self.row]
            row[self.col : self.col + n] = [" "] * len(row[self.col : self.col + n])
        elif final != "m":
            self.unknown.add(f"CSI {private}{params}{final}")

    def _mode(self, mode: str, on: bool) -> None:
        if mode == "25":
            self.cursor_visible = on
        elif mode in _ALT_MODES:
            if on and not self.alternate:
                self.saved = (self.row, self.col)
                self.alternate = True
                self.alt = self._blank(self.lines)
            elif not on and self.alternate:
                self.alternate = False
                self.row, self.col = self.saved
        elif mode not in ("1", "7", "12", "2004", "1000", "1002", "1003", "1006"):
            self.unknown.add(f"mode ?{mode}")

    def _erase_display(self, how: int) -> None:
        if how == 0:
            self._erase_line(0)
            for r in range(self.row + 1, self.lines):
                self.buffer[r] = [" "] * self.columns
        elif how == 1:
            self._erase_line(1)
            for r in range(self.row):
                self.buffer[r] = [" "] * self.columns
        else:
            for r in range(self.lines):
                self.buffer[r] = [" "] * self.columns

    def _erase_line(self, how: int) -> None:
        row = self.buffer[self.row]
        if how == 0:
            row[self.col :] = [" "] * (self.columns - self.col)
        elif how == 1:
            row[: self.col + 1] = [" "] * (self.col + 1)
        else:
            row[:] = [" "] * self.columns
