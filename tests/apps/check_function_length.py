#!/usr/bin/env python3
"""No long functions: no `main` over 100 lines, and no function in apps/ or lib/ over 120 lines,
except where the comment just above the function says why, on a line starting with
`// Long because:` (or where ALLOWED below names it, with the reason; the list may only shrink).

    python3 tests/apps/check_function_length.py SOURCE_DIR

A function is a brace block whose header (the text since the previous `;`, `{` or `}`) holds a
parameter list and that sits at namespace or class scope; its length runs from the header's
first line to the closing brace. Lambdas and blocks count toward their function. Comments,
strings and preprocessor lines are skipped."""
import os
import re
import sys

MAIN_LIMIT = 100
LIMIT = 120

# Functions over the limit that are not split yet, each with the reason it stays for now. Empty:
# every long function left says why in its own `// Long because:` comment. It may only stay empty.
ALLOWED = {}

TOKEN = re.compile(
    r'//[^\n]*|/\*.*?\*/|R"([^(]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|' r"'(?:\\.|[^'\\\n])*'|[{};]|\n",
    re.S,
)


def functions(text):
    """(name, first line, last line, line of the header) of every function in `text`."""
    found = []
    stack = []  # kinds: "scope" (namespace, class, extern) or "body" (a function or a block)
    header_start = 0  # offset where the current header begins
    line = 1
    pos = 0
    header_line = 1
    for m in TOKEN.finditer(text):
        chunk = text[pos : m.start()]
        line += chunk.count("\n")
        tok = m.group(0)
        pos = m.end()
        if tok.startswith("//") or tok.startswith("/*") or tok[0] in "\"'R":
            line += tok.count("\n")
            continue
        if tok == "\n":
            line += 1
            continue
        if tok in ";}" or tok == "{":
            header = text[header_start : m.start()]
            # drop comments, strings and preprocessor lines from the header
            header_clean = re.sub(r"//[^\n]*|/\*.*?\*/", "", header, flags=re.S)
            header_clean = re.sub(r"(?m)^\s*#.*$", "", header_clean)
            if tok == "{":
                in_body = any(k[0] == "body" for k in stack)
                is_func = (
                    not in_body
                    and re.search(
                        r"\)\s*(const|noexcept|override|final|" r"mutable|->[^{]*|:[^{]*)*\s*$",
                        header_clean,
                    )
                    is not None
                    and not re.match(r"\s*(namespace|struct|class|union|enum)\b", header_clean)
                )
                if is_func:
                    # the header's first line of code (not a comment, include or blank line)
                    hl = header.split("\n")
                    k = 0
                    while k < len(hl) - 1 and (
                        not hl[k].strip() or hl[k].strip().startswith(("//", "#", "/*", "*"))
                    ):
                        k += 1
                    first = line - (len(hl) - 1 - k)
                    name = re.findall(r"([A-Za-z_~][A-Za-z0-9_:~]*)\s*\(", header_clean)
                    stack.append(("body", name[0] if name else "?", first))
                elif in_body:
                    stack.append(("block",))
                else:
                    stack.append(("scope",))
            elif tok == "}":
                if stack:
                    top = stack.pop()
                    if top[0] == "body":
                        found.append((top[1].split("::")[-1], top[2], line))
            header_start = pos
    return found


def comment_above(lines, first):
    """The comment lines just above line `first` (1-based)."""
    i = first - 2
    out = []
    while i >= 0 and lines[i].strip().startswith("//"):
        out.append(lines[i])
        i -= 1
    return out


def main(root):
    failures = []
    seen_allowed = set()
    for top in ("apps", "lib"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if not n.endswith((".cpp", ".hpp", ".h", ".cc")):
                    continue
                path = os.path.join(d, n)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                lines = text.split("\n")
                for name, first, last in functions(text):
                    length = last - first + 1
                    limit = MAIN_LIMIT if name == "main" else LIMIT
                    if length <= limit:
                        continue
                    if (rel, name) in ALLOWED:
                        seen_allowed.add((rel, name))
                        continue
                    if any(
                        c.strip().startswith("// Long because:")
                        for c in comment_above(lines, first)
                    ):
                        continue
                    failures.append(f"{rel}:{first}: {name} is {length} lines (limit {limit})")
    for key in sorted(set(ALLOWED) - seen_allowed):
        failures.append(
            f"{key[0]}: {key[1]} is listed in ALLOWED but is within the limit now: "
            "remove it from the list"
        )
    for f in failures:
        print(f)
    if failures:
        print(
            f"{len(failures)} functions too long (split them, or say why above them with "
            "'// Long because: ...')"
        )
        return 1
    print(
        f"no function over {LIMIT} lines and no main over {MAIN_LIMIT} in apps/ and lib/ "
        f"({len(ALLOWED)} listed exceptions)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
