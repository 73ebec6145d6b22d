#!/usr/bin/env python3
"""Renders the notebooks to student HTML and checks it in a real browser, offline.

    check_html.py --nbconvert EXE --chromium EXE --template-dir DIR --mathjax DIR --out DIR
                  [--screenshots] NOTEBOOK.ipynb...

1. jupyter-nbconvert --to html with xencoder's template (notebooks/tools/html_template/xenc),
   then MathJax copied next to the HTML (OUT/mathjax), as the notebooks_html target does;
2. each page opened in headless Chromium with every host name unresolvable (no network: the CDN
   fallback cannot help), its DOM dumped after MathJax has run;
3. in that DOM: every SVG output of the notebook is an inline <svg> element with drawn content
   (nbconvert 6.5.3's sanitiser used to remove them all), and every formula MathJax found was
   typeset (one CommonHTML rendering per math/tex script, none an error), with no TeX
   delimiter ($) left in the rendered Markdown.

Fails (exit 1) naming the page and what is missing. --screenshots also writes OUT/<name>.png.
"""
import argparse
import html.parser
import json
import os
import shutil
import subprocess
import sys

MATHJAX_PARTS = ["MathJax.js", "config", "extensions", "fonts", "jax", "localization"]


class Dom(html.parser.HTMLParser):
    """Counts what the checks need in a dumped DOM."""

    def __init__(self):
        super().__init__()
        self.stack = []  # (tag, is_svg_output, is_markdown)
        self.svg_outputs = 0  # <div data-mime-type="image/svg+xml">
        self.svg_in_outputs = 0  # ... that hold an <svg> element
        self.svg_drawn = 0  # ... whose <svg> has shapes (rect, path, polyline, text ...)
        self._svg_shapes = 0
        self.math_scripts = 0  # <script type="math/tex..."> (MathJax leaves one per formula)
        self.chtml = (
            0  # <span id="MathJax-Element-N-Frame" class="mjx-chtml ..."> (one per typeset formula)
        )
        self.errors = 0  # MathJax's error markers
        self.dollars_in_markdown = []

    def _inside(self, index):
        return any(entry[index] for entry in self.stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class") or ""
        svg_output = tag == "div" and a.get("data-mime-type") == "image/svg+xml"
        markdown = tag == "div" and "jp-RenderedMarkdown" in cls
        if svg_output:
            self.svg_outputs += 1
        if tag == "svg" and self._inside(1) and not any(t == "svg" for t, _, _ in self.stack):
            self.svg_in_outputs += 1
            self._svg_shapes = 0
        if tag in ("rect", "path", "polyline", "line", "circle", "text") and any(
            t == "svg" for t, _, _ in self.stack
        ):
            self._svg_shapes += 1
        if tag == "script" and (a.get("type") or "").startswith("math/tex"):
            self.math_scripts += 1
        frame = a.get("id") or ""
        if (
            tag == "span"
            and frame.startswith("MathJax-Element-")
            and frame.endswith("-Frame")
            and "mjx-chtml" in cls.split()
        ):
            self.chtml += 1
        if "MathJax_Error" in cls or "mjx-merror" in cls.split() or "merror" in cls.split():
            self.errors += 1
        if tag not in (
            "br",
            "img",
            "input",
            "meta",
            "link",
            "hr",
            "wbr",
            "col",
            "area",
            "base",
            "source",
        ):
            self.stack.append((tag, svg_output, markdown))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k][0] == tag:
                if (
                    tag == "svg"
                    and self._inside(1)
                    and not any(t == "svg" for t, _, _ in self.stack[:k])
                ):
                    if self._svg_shapes > 0:
                        self.svg_drawn += 1
                del self.stack[k:]
                return

    def handle_data(self, data):
        in_code = any(t in ("script", "style", "code", "pre") for t, _, _ in self.stack)
        if self._inside(2) and not in_code and "$" in data:
            self.dollars_in_markdown.append(data.strip()[:80])


def svg_outputs_in(notebook):
    with open(notebook, encoding="utf-8") as f:
        nb = json.load(f)
    return sum(
        1
        for c in nb["cells"]
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
        if "image/svg+xml" in o.get("data", {})
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nbconvert", required=True)
    p.add_argument("--chromium", required=True)
    p.add_argument("--template-dir", required=True)
    p.add_argument("--mathjax", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--screenshots", action="store_true")
    p.add_argument("notebooks", nargs="+")
    args = p.parse_args()

    # 1. the HTML and MathJax beside it, as the notebooks_html target makes them
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    subprocess.run(
        [
            args.nbconvert,
            "--to",
            "html",
            "--template",
            "xenc",
            "--TemplateExporter.extra_template_basedirs=" + args.template_dir,
            "--output-dir",
            args.out,
        ]
        + args.notebooks,
        check=True,
    )
    for part in MATHJAX_PARTS:
        src, dst = os.path.join(args.mathjax, part), os.path.join(args.out, "mathjax", part)
        if os.path.isdir(src):
            shutil.copytree(src, dst)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(src, dst)

    failures = []
    for nb in args.notebooks:
        name = os.path.splitext(os.path.basename(nb))[0]
        page = os.path.abspath(os.path.join(args.out, name + ".html"))
        # 2. the page in headless Chromium, with no network at all
        browser = [
            args.chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--virtual-time-budget=20000",
        ]
        dom_text = subprocess.run(
            browser + ["--dump-dom", "file://" + page],
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        ).stdout
        if args.screenshots:
            subprocess.run(
                browser
                + [
                    "--window-size=1100,2400",
                    "--screenshot=" + os.path.join(os.path.abspath(args.out), name + ".png"),
                    "file://" + page,
                ],
                check=True,
                capture_output=True,
                timeout=300,
            )
        dom = Dom()
        dom.feed(dom_text)
        expected_svg = svg_outputs_in(nb)
        with open(nb, encoding="utf-8") as f:
            has_maths = any(
                "$" in "".join(c["source"])
                for c in json.load(f)["cells"]
                if c["cell_type"] == "markdown"
            )
        # 3. figures and maths
        problems = []
        if dom.svg_outputs != expected_svg or dom.svg_drawn != expected_svg:
            problems.append(
                f"{expected_svg} SVG outputs in the notebook, {dom.svg_outputs} SVG output areas "
                f"in the page, {dom.svg_in_outputs} with an <svg> element, {dom.svg_drawn} with shapes"
            )
        if has_maths and (dom.math_scripts == 0 or dom.chtml != dom.math_scripts):
            problems.append(
                f"maths not typeset: {dom.math_scripts} formulas found by MathJax, "
                f"{dom.chtml} rendered"
            )
        if dom.errors:
            problems.append(f"{dom.errors} MathJax errors")
        if dom.dollars_in_markdown:
            problems.append("TeX left in the text: " + " | ".join(dom.dollars_in_markdown[:3]))
        print(
            f"{name}.html: {dom.svg_drawn} of {expected_svg} figures as inline SVG, "
            f"{dom.chtml} of {dom.math_scripts} formulas typeset by MathJax (offline)"
        )
        failures += [f"{name}.html: {m}" for m in problems]
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
