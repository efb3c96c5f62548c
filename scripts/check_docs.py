"""Check the built docs site (site/) in a real headless browser, and crawl its links.

    python scripts/check_docs.py [--site site] [--screenshots DIR]

Serves site/ on 127.0.0.1 and, with Chromium driven over the DevTools protocol:
- loads every page and checks that its main content rendered (non-empty article text) and that
  the page logged no console errors or uncaught exceptions;
- follows every navigation link of the home page and checks it lands on a rendered page;
- types a query into Material's search box and checks that results appear (the search index
  and its web worker load);
- screenshots the home page and one API reference page.
Without a browser, only the link crawl runs, and the script says so and exits 0 (CI has no
browser). The link crawl reads every HTML file and checks that every internal href and its
#anchor exist.

Needs Debian's `chromium` package (`apt-get install chromium`) for the browser part; it is
driven over a DevTools pipe, so nothing beyond the standard library is needed.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlparse

SEARCH_QUERY = "AccuracyMetric"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


# --- link crawl (standard library only) ---------------------------------------------------------


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        if tag == "a" and values.get("name"):
            self.ids.add(str(values["name"]))
        for key in ("href", "src"):
            if values.get(key) and not (tag == "link" and values.get("rel") == "canonical"):
                self.hrefs.append(str(values[key]))


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _target(site: Path, page: Path, href: str) -> tuple[Path, str] | None:
    """The file and fragment an internal href points at; None for external links."""
    url, fragment = urldefrag(href)
    parsed = urlparse(url)
    if parsed.scheme or parsed.netloc or href.startswith(("mailto:", "javascript:", "data:")):
        return None
    if not url:
        return page, fragment
    # Root-absolute links (the 404 page uses them) resolve against the site's root.
    base = site if parsed.path.startswith("/") else page.parent
    path = (base / unquote(parsed.path).lstrip("/")).resolve()
    if path.is_dir() or url.endswith("/"):
        path = path / "index.html"
    return path, fragment


def crawl_links(site: Path) -> tuple[int, int, list[str], list[str]]:
    """Every internal link of every page: (pages, links, broken links, external links)."""
    pages = sorted(site.rglob("*.html"))
    parsed = {page.resolve(): _parse(page) for page in pages}
    broken: list[str] = []
    external: set[str] = set()
    count = 0
    for page in pages:
        for href in parsed[page.resolve()].hrefs:
            target = _target(site, page, href)
            if target is None:
                external.add(href)
                continue
            count += 1
            path, fragment = target
            where = f"{page.relative_to(site)} -> {href}"
            if not path.exists():
                broken.append(f"{where} (no file {path})")
            elif fragment and path.suffix == ".html":
                ids = parsed.get(path) or _parse(path)
                if unquote(fragment) not in ids.ids:
                    broken.append(f"{where} (no anchor #{fragment})")
    return len(pages), count, broken, sorted(external)


# --- a local server ------------------------------------------------------------------------------


@contextlib.contextmanager
def serve(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


# --- Chromium over the DevTools protocol ----------------------------------------------------------


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium tab, driven with DevTools protocol commands over a pipe.

    `--remote-debugging-pipe` makes Chromium read NUL-terminated JSON commands from fd 3 and
    write replies and events to fd 4, so no WebSocket client (and no port) is needed.
    """

    def __init__(self, executable: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="check-docs-")
        to_browser_read, self._write_fd = os.pipe()
        self._read_fd, from_browser_write = os.pipe()
        self.process = subprocess.Popen(
            [
                executable,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--window-size=1280,900",
                "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=functools.partial(_dup_pipes, to_browser_read, from_browser_write),
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t.get("type") == "page")
        self.session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    def _read_message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._read_fd, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(message))

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        command: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if self.session is not None:
            command["sessionId"] = self.session
        os.write(self._write_fd, json.dumps(command).encode() + b"\0")
        while True:
            message = self._read_message()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def goto(self, url: str, timeout: float = 15.0) -> None:
        self.events.clear()
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'", timeout)

    def wait_for(self, expression: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(expression):
                return True
            time.sleep(0.1)
        return False

    def errors(self) -> list[str]:
        """Console errors and uncaught exceptions since the last navigation."""
        self.evaluate("0")  # drain pending events
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append(
                    details.get("exception", {}).get("description")
                    or details.get("text", "exception")
                )
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(
                    " ".join(
                        str(a.get("value", a.get("description", "")))
                        for a in params.get("args", [])
                    )
                )
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                found.append(f"{entry.get('text')} ({entry.get('url', '')})")
        return found

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        for fd in (self._write_fd, self._read_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if self.process.poll() is None:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def _dup_pipes(read_fd: int, write_fd: int) -> None:
    # In the child: Chromium expects to read commands on fd 3 and write replies on fd 4.
    os.dup2(read_fd, 3)
    os.dup2(write_fd, 4)


def _page_urls(site: Path, base: str) -> list[str]:
    urls = []
    for page in sorted(site.rglob("index.html")):
        relative = page.parent.relative_to(site).as_posix()
        if relative == ".":
            relative = ""
        if relative.startswith(("assets", "search")):
            continue
        urls.append(urljoin(base, relative + "/" if relative else ""))
    return urls


MAIN_TEXT = "(document.querySelector('article.md-content__inner') || {innerText: ''}).innerText.trim().length"
NAV_LINKS = (
    "Array.from(document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]'))"
    ".map(a => a.href)"
)


def browser_checks(browser: Browser, site: Path, base: str, shots: Path) -> list[str]:
    problems: list[str] = []
    urls = _page_urls(site, base)
    for url in urls:
        browser.goto(url)
        length = browser.evaluate(MAIN_TEXT) or 0
        errors = browser.errors()
        status = "ok" if length > 0 and not errors else "FAIL"
        print(
            f"  page {status:4} {url[len(base) - 1 :]:55} main text {length:6} chars, {len(errors)} console errors"
        )
        if length == 0:
            problems.append(f"{url}: empty main content")
        problems += [f"{url}: console: {error}" for error in errors]
    print(f"rendered {len(urls)} pages")

    browser.goto(base)
    links = sorted({link.split("#")[0] for link in browser.evaluate(NAV_LINKS) or []})
    for link in links:
        browser.goto(link)
        title = browser.evaluate("document.title")
        if not (browser.evaluate(MAIN_TEXT) or 0) or "404" in (title or ""):
            problems.append(f"nav link {link} does not land on a rendered page")
    print(
        f"navigation: {len(links)} links from the home page's nav, each landed on a rendered page"
        if not any(p.startswith("nav link") for p in problems)
        else "navigation: FAILED"
    )

    # Search as a reader does: click the search box, type the query (real input events).
    browser.goto(base)
    box = browser.evaluate(
        "(() => { const r = document.querySelector('input.md-search__input')"
        ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )
    for kind in ("mousePressed", "mouseReleased"):
        browser.send(
            "Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1
        )
    browser.send("Input.insertText", text=SEARCH_QUERY)
    found = browser.wait_for("document.querySelectorAll('.md-search-result__item').length > 0", 20)
    results = (
        browser.evaluate(
            "Array.from(document.querySelectorAll('.md-search-result__item a'))"
            ".slice(0, 5).map(a => a.href.replace(location.origin, ''))"
        )
        or []
    )
    count = browser.evaluate("document.querySelectorAll('.md-search-result__item').length") or 0
    meta = browser.evaluate("(document.querySelector('.md-search-result__meta') || {}).innerText")
    print(f"search {SEARCH_QUERY!r}: {count} results ({meta}); first: {results[:3]}")
    if not found:
        problems.append(f"search for {SEARCH_QUERY!r} returned no results")
    shown = browser.evaluate("document.getElementById('__search').checked")
    print(f"search overlay open: {shown}")
    if not shown:
        problems.append("the search box did not open its results overlay")
    shots.mkdir(parents=True, exist_ok=True)
    browser.screenshot(shots / "search.png")

    browser.goto(base)
    browser.screenshot(shots / "home.png")
    browser.goto(urljoin(base, "reference/torchtally.metrics/"))
    browser.screenshot(shots / "reference-metrics.png")
    print(f"screenshots: {', '.join(sorted(p.name for p in shots.glob('*.png')))} in {shots}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default="site", type=Path, help="the built site (mkdocs build)")
    parser.add_argument("--screenshots", default=None, type=Path, help="where to write PNGs")
    args = parser.parse_args(argv)
    site: Path = args.site.resolve()
    if not (site / "index.html").exists():
        print(
            f"Argument `--site` must be a built site (run `make docs`). Received: --site={args.site}"
        )
        return 2

    start = time.monotonic()
    pages, links, broken, external = crawl_links(site)
    print(
        f"link crawl: {pages} HTML files, {links} internal links and anchors, {len(broken)} broken"
    )
    for item in broken[:50]:
        print(f"  broken: {item}")
    print(f"external links (not fetched): {len(external)}: {external[:10]}")
    problems = [f"broken link {item}" for item in broken]

    executable = find_browser()
    if executable is None:
        print(
            "SKIPPED browser checks: no Chromium on PATH (looked for "
            f"{', '.join(BROWSERS)}; install Debian's `chromium`). Only the link crawl ran."
        )
    else:
        version = subprocess.run(
            [executable, "--version"], capture_output=True, text=True
        ).stdout.strip()
        print(f"browser: {version} (headless)")
        shots = args.screenshots or Path(tempfile.mkdtemp(prefix="docs-shots-"))
        browser = Browser(executable)
        try:
            with serve(site) as base:
                print(f"serving {site} at {base}")
                problems += browser_checks(browser, site, base, shots)
        finally:
            browser.close()

    elapsed = time.monotonic() - start
    if problems:
        print(f"FAILED: {len(problems)} problems ({elapsed:.1f} s)")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(f"OK ({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
