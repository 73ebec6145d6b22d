#!/usr/bin/env python3
# Adds (or re-adds) the course cells of issue 13 to notebooks 01-07: learning objectives after the
# title cell; exercises (stub + grader check), a summary and a link to the next notebook at the end
# (06, 07, 08 when those notebooks exist). 08, 09 and 10 write their own objectives and summary; their
# exercise cells are appended at their end. Idempotent: cells whose metadata has xenc.part are removed
# first, so it can re-apply the cells after a merge took another version of a notebook. Then run
# `cmake --build build --target notebooks_update`.  Usage: python3 notebooks/tools/course_cells.py [notebooks]
#
# The registry is the one list of exercises: `xenc-grade-all --exercises > registry.json` prints it
# (name, signature, points, teaching order, hint level), and `--registry registry.json` makes this
# script refuse an exercise the grader does not know or a stub whose signature is not the registry's.
# With the teacher's settings, `xenc-grade-all --exercises --settings grading.json > registry.json`,
# the same grading.json that grades the class makes its notebooks: an exercise the settings leave
# out ("not_selected") loses its cells (heading, stub, check; the exercise intro too when a notebook
# keeps none), each heading shows the exercise's points ("(2 points)") and each check cell prints
# its report at the settings' hint level (print_report(..., xenc::grade::HintLevel::off)). Without
# --registry: every exercise, DEFAULT_POINTS each (the registry's default), full hints.
# `--check` writes nothing: it only compares the notebooks' exercise cells with the registry (names,
# signatures, points, hint level) and with what the exercises' files generate (each heading, stub
# and check cell; the ctest grade.notebook_cells_match_registry).
#   Usage: python3 notebooks/tools/course_cells.py [--registry FILE] [--check] [notebooks_dir]
import json, os, re, sys

args = sys.argv[1:]
REGISTRY = None  # the chosen exercises: name -> {name, signature, points, order}
NOT_SELECTED = set()  # registered exercises the teacher's settings leave out
HINTS = "full"  # full | brief | off
DEFAULT_POINTS = 1  # every exercise's points in the registry without settings (--check says so)
CHECK = "--check" in args
if CHECK:
    args.remove("--check")
if "--registry" in args:
    i = args.index("--registry")
    registry = json.load(open(args[i + 1]))
    REGISTRY = {e["name"]: e for e in registry["exercises"]}
    NOT_SELECTED = set(registry.get("not_selected", []))
    HINTS = registry.get("hints", "full")
    if HINTS not in ("full", "brief", "off"):
        sys.exit('%s: "hints" is "%s", expected "full", "brief" or "off"' % (args[i + 1], HINTS))
    del args[i : i + 2]
D = args[0] if args else "notebooks"


def points_of(exercise):
    return REGISTRY[exercise]["points"] if REGISTRY is not None else DEFAULT_POINTS


def points_text(p):
    """(1 point), (2 points), (2.5 points)"""
    return "(%s point%s)" % ("%g" % p, "" if p == 1 else "s")


def selected(exercise):
    """Whether the notebooks get this exercise's cells; a name the registry does not know is refused."""
    if REGISTRY is None or exercise in REGISTRY:
        return True
    if exercise in NOT_SELECTED:
        return False
    sys.exit(
        'exercise "%s" is not in the registry (known: %s)'
        % (exercise, ", ".join(sorted(set(REGISTRY) | NOT_SELECTED)))
    )


def normalised(signature):
    """A signature without namespaces and whitespace: the registry's and a stub's compare equal."""
    return re.sub(r"\s+", "", re.sub(r"\bxenc::(grade::)?", "", signature))


def stub_signature(source):
    """The function a stub cell defines: from its first line that is not a comment to the `{`."""
    body = "\n".join(
        l
        for l in source.split("\n")
        if not l.strip().startswith("//") and l.strip() != "namespace assignment {"
    )
    return body[: body.index("{")].strip()


# Cell metadata "xenc": {"part": ...}: the cells this script owns (re-applying removes them first).
# "exercise": the stub cell of that exercise (nbtool substitutes solutions there); "belongs_to": the
# exercise's heading and check cells, which leave with it.
def md(text, part, belongs_to=None):
    meta = {"xenc": {"part": part}}
    if belongs_to:
        meta["xenc"]["belongs_to"] = belongs_to
    return {"cell_type": "markdown", "metadata": meta, "source": lines(text)}


def code(text, part, exercise=None, belongs_to=None):
    meta = {"xenc": {"part": part}}
    if exercise:
        meta["xenc"]["exercise"] = exercise
    if belongs_to:
        meta["xenc"]["belongs_to"] = belongs_to
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": meta,
        "outputs": [],
        "source": lines(text),
    }


def lines(s):
    s = s.strip("\n")
    out = [l + "\n" for l in s.split("\n")]
    out[-1] = out[-1][:-1]
    return out


ALIASES = """#include <stdexcept>

#include <xenc/grade/exercises.hpp>

// The exercises live in namespace assignment, with the same short names as the compiled
// assignment (apps/assignment/): Tensor2 is xenc::Tensor2, and so on.
namespace assignment {
using xenc::Index1;
using xenc::Mask2;
using xenc::Tensor1;
using xenc::Tensor2;
using xenc::Tensor3;
using xenc::Tensor4;
}  // namespace assignment"""

HINTS_SAID = {
    "full": "the first index that differs and a hint (when your output equals a known mistake, the hint names it)",
    "brief": "the first index that differs and a short hint (a known mistake's name when your output equals one, else the hint's first sentence)",
    "off": "and the first index that differs (hints are turned off in this course)",
}


def exercises_intro(extra):
    return (
        """## Exercises

Write each function yourself in the cell marked *your code here*, run it, then run the check below it. The check is the grader of `xenc/grade/exercises.hpp`: it tries a hand example, reference values, invariants and edge cases, and prints one ✔ or ✘ per check; for a failed check it shows the input, the expected and the computed values, """
        + HINTS_SAID[HINTS]
        + """. Each exercise's heading shows its points. As handed out, every function only throws "not implemented", so every check fails: that is the starting point.

If you change an exercise cell after running it, restart the kernel and run all cells again (a C++ function cannot be defined twice in one session).
"""
        + extra
    )


def stub(exercise, doc, signature, ret_note=""):
    return code(
        """namespace assignment {
%s
%s {
  // your code here
  throw std::logic_error("%s: not implemented yet");
}
}  // namespace assignment"""
        % (doc, signature, signature.split("(")[0].split()[-1]),
        "exercise",
        exercise,
    )


def check(fn, name):
    return code(
        """// Prints each check with its expected and computed values; hints: %s (the course's setting).
xenc::grade::print_report(std::cout, xenc::grade::check_%s(assignment::%s),
                          xenc::grade::HintLevel::%s);"""
        % (HINTS, fn, name, HINTS),
        "exercise-check",
        belongs_to=fn,
    )


def heading(exercise, text):
    """The exercise's heading cell: '### Exercise: title' gets the exercise's points."""
    first, _, rest = text.partition("\n")
    return md(
        first + " " + points_text(points_of(exercise)) + "\n" + rest,
        "exercise",
        belongs_to=exercise,
    )


# Each exercise's cells come from its file, lib/src/grade/exercises/<name>.cpp, the one place an
# exercise is written: its `// @notebook` lines are the heading cell (markdown), `// @notebook_stub`
# the stub cell's comment, `// @function` the function it defines and, for an exercise where the
# student writes a test, `// @notebook_weak` a weak test that a cell before the stub grades (its score shows) (cmake/XencExercises.cmake
# describes the keys; it generates the template's exercises.hpp and stubs from the same lines).
EXERCISES_DIR = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "src", "grade", "exercises"
)


def read_spec(path):
    """The `// @key value` lines of an exercise file: key -> its lines joined with newlines."""
    spec = {}
    for line in open(path, encoding="utf-8").read().split("\n"):
        m = re.match(r"// @([a-z_]+)(?: (.*))?$", line)
        if m:
            spec.setdefault(m.group(1), []).append(m.group(2) or "")
    return {k: "\n".join(v) for k, v in spec.items()}


def exercise_cells(name):
    path = os.path.join(EXERCISES_DIR, name + ".cpp")
    if not os.path.exists(path):
        sys.exit('exercise "%s": no file %s' % (name, os.path.normpath(path)))
    spec = read_spec(path)
    for key in ("notebook", "function"):
        if key not in spec:
            sys.exit(
                "%s: no `// @%s` line, which the notebook cells need"
                % (os.path.normpath(path), key)
            )
    doc = (
        "\n".join("// " + l if l else "//" for l in spec.get("notebook_stub", "").split("\n"))
        if "notebook_stub" in spec
        else ""
    )
    cells = [heading(name, spec["notebook"]), stub(name, doc, spec["function"]), check(name, name)]
    if "notebook_weak" in spec:  # a test-writing exercise: a weak test, graded as the student's is,
        # before the student's stub (the notebook's last code cell stays a check cell)
        cells.insert(1, weak_test(name, spec["function"], spec["notebook_weak"]))
    return cells


def weak_test(name, signature, body):
    """A test-writing exercise's weak test (its file's `// @notebook_weak` lines), graded by the
    same check as the student's: the cell prints its score and the mistakes it misses, and no ✘."""
    params = signature[signature.index("(") :]
    return code(
        """// A weak test, graded as yours will be: its score, and the mistakes it misses.
std::cout << xenc::grade::test_score(xenc::grade::check_%s([]%s {
%s
})) << "\\n";"""
        % (name, params, "\n".join("  " + l if l else "" for l in body.split("\n"))),
        "exercise-weak",
        belongs_to=name,
    )


def aliases(chosen):
    """The alias cell: ALIASES, and the `// @using` names of the chosen exercises (the test-writing
    exercises' function types, xenc::grade::SoftmaxFn ...), as the template's exercises.hpp has."""
    extra = sorted(
        {
            u
            for e in chosen
            for u in read_spec(os.path.join(EXERCISES_DIR, e + ".cpp")).get("using", "").split("\n")
            if u
        }
    )
    if not extra:
        return ALIASES
    return ALIASES.replace(
        "using xenc::Tensor4;\n",
        "using xenc::Tensor4;\n" + "".join("using %s;\n" % u for u in extra),
    )


TESTS_SAID = """
In an exercise named `test_...` you write a test instead of a function: it receives a function and returns `true` when that function is right, `false` (or throws) when it is wrong. Its check runs your test on a correct function, which it must accept, and on each published mistake of the museum, which it should reject; it prints your score (the share of the mistakes your test catches) and names the mistakes it missed. As handed out, such a test only throws "not implemented", so it catches nothing.
"""


NEXT = {
    "01_tensors": ("02_positional_encoding", "02 · Positional encoding"),
    "02_positional_encoding": ("03_attention", "03 · Attention"),
    "03_attention": ("04_encoder_block", "04 · The encoder block"),
    "04_encoder_block": ("05_word_order", "05 · Word order"),
}
# 05 links to the next notebook that exists, and so on along the chain
last = "05_word_order"
for name, title in [
    ("06_training", "06 · Training"),
    ("07_positions_inside_attention", "07 · Positions inside attention"),
    ("08_gradients", "08 · Gradients"),
]:
    if os.path.exists(os.path.join(D, name + ".ipynb")):
        NEXT[last] = (name, title)
        last = name

NB = {
    "01_tensors": dict(
        objectives="""* read and create tensors of shape `[B, T, D]`, and know the shape glossary used in every notebook;
* apply a linear layer $y = xW^\\top + b$ to every token at once and read its weight layout (`[out, in]`, as PyTorch);
* check a library result against a plain loop, and read a shape error.""",
        exercises=[],
        summary="""* A tensor here is a `float32` xtensor container of fixed rank; shapes use the glossary B, T, D, H, Dh, F, V.
* A linear layer flattens `[B, T, in]` to `[B·T, in]` and does one matrix product with $W^\\top$ plus the bias; the checks above compare it with a sum in double precision.
* A wrong shape is an exception that names the function, the argument and both shapes, never a crash of the kernel.""",
    ),
    "02_positional_encoding": dict(
        objectives="""* compute the sinusoidal positional encoding $PE(p, \\cdot)$ and read its table and heatmap;
* show that a shift by $k$ positions is a rotation $R_k$ that does not depend on $p$;
* show that $PE(p)\\cdot PE(q)$ depends only on $p - q$;
* recognise a published bug in the frequencies, and (exercise) write the table yourself.""",
        exercises=["sinusoidal_table"],
        summary="""* The sinusoidal encoding gives every position a vector of sines and cosines at geometrically spaced frequencies; it is added to the token embeddings.
* $PE(p+k) = R_k\\,PE(p)$ with one block-diagonal rotation per offset $k$, checked above to float precision.
* The dot product of two positions is $\\sum_i \\cos((p-q)\\omega_i)$: it depends only on their distance.
* The `2·i` bug makes the frequencies fall twice as fast; its table looks plausible, so it has to be tested against the formula.""",
    ),
    "03_attention": dict(
        objectives="""* compute scaled dot-product attention by hand for three tokens and match the library;
* explain what the key-padding mask and the causal mask do to the scores and the weights;
* read multi-head attention maps;
* (exercises) write a numerically stable softmax and masked attention yourself, and tests that catch published mistakes in each.""",
        exercises=["softmax", "test_softmax", "attention", "test_attention"],
        summary="""* Attention is $\\operatorname{softmax}(QK^\\top/\\sqrt{D_h})\\,V$: every output row is a weighted average of the value rows, with weights that sum to 1.
* Masks act on the scores, before the softmax: a masked key gets weight exactly 0; a query with every key masked gets zeros in the library.
* Multi-head attention runs this in $H$ heads of width $D_h = D/H$ and concatenates them; each head has its own attention map.""",
    ),
    "04_encoder_block": dict(
        objectives="""* write one encoder layer as equations (post-norm and pre-norm) and check the library against them step by step;
* say what layer normalisation does to each token vector;
* compare the size of the residual stream in deep post-norm and pre-norm stacks;
* (exercises) write layer normalisation's forward pass yourself (its backward pass is an exercise of notebook 08), and a test that catches published mistakes in it.""",
        exercises=["layer_norm_forward", "test_layer_norm_forward"],
        summary="""* An encoder layer is self-attention and a feed-forward network, each inside a residual connection with a layer norm: after the sum (post-norm) or on the input of the branch (pre-norm).
* Layer norm gives every token mean 0 and standard deviation (almost) 1, whatever the size of its input.
* In a pre-norm stack the residual stream is never normalised and grows with depth, which is why such models end with a final layer norm.""",
    ),
    "05_word_order": dict(
        objectives="""* explain why an encoder without positional information is permutation-equivariant;
* see it stage by stage for "cat chased mouse" vs "mouse chased cat": cosines of the same word in both sentences, and attention maps;
* see how adding positions breaks the symmetry, and compare every position scheme of the library on the same pair;
* (exercises) split a `[B, T, D]` tensor into heads and merge them back.""",
        exercises=["split_heads", "merge_heads"],
        summary="""* Without positions, each word has the same vector in both sentences at every stage, and the attention map of one sentence is the other's with rows and columns permuted: the encoder cannot tell them apart word by word.
* Adding the sinusoidal encoding makes the same word differ between the sentences, so the order of the words reaches the output.
* `rope` and `alibi` add nothing to the input and act inside attention: `rope` separates the two sentences from layer 1 on, `alibi` not at all, because "mouse chased cat" is "cat chased mouse" reversed (notebook 07).
* Multi-head attention splits the width into heads and merges them back; the exercises above are those two reshapes.""",
    ),
    "06_training": dict(
        objectives="""* build the agent/patient task: sentences, their mirrors, and noun pairs held out from training;
* write a training loop with `TokenClassifier`, cross-entropy with `ignore_index`, `AdamW` and a warm-up schedule;
* show why a model without positions is stuck at 50%: a sentence and its mirror give each noun identical logits;
* compare the position schemes (`none`, `sinusoidal`, `learned`, `rope`, `alibi`, chosen by name) on held-out noun pairs, and read the trained model's attention maps;
* (exercise) write the loss of this notebook, cross-entropy with an ignore index, yourself.""",
        exercises=["cross_entropy"],
        summary="""* Without positions, a noun gets the same logits in a sentence and in its mirror, so on a balanced held-out set of mirrored pairs the model is at 50%, however long it trains.
* With sinusoidal positions the same model, data and settings reach at least 98% on noun pairs never seen together in training, and so do learned and rotary (rope) positions; ALiBi, whose bias cannot tell before from after, learns the slowest.
* The loss skips the tokens labelled with the ignore index; the exercise above is that loss.
* `xenc-train-order` runs the same experiment at full size, once per position scheme, with checkpoints and figures.""",
    ),
    "07_positions_inside_attention": dict(
        objectives="""* rotate the query and key of every head by RoPE's $R(p)$, and relate $R(p)$ to the $R_k$ of notebook 02; know the interleaved and the "rotate half" pairings;
* show numerically that a RoPE score depends only on $m - n$, and that the rotation keeps norms;
* compute the ALiBi slopes for any number of heads, read the bias matrices, and say why ALiBi needs no embedding;
* show that the symmetric ALiBi of an encoder cannot tell a sentence from its reverse;
* run "train short, test long" on one task and read which position schemes still work on longer sequences, and why another task can give another answer;
* (exercises) write the RoPE rotation of one head and the ALiBi slopes yourself.""",
        exercises=["rope", "alibi_slopes"],
        summary="""* RoPE rotates $q$ and $k$ of every head by $R(p)$, the rotations of notebook 02 ($R_k = R(k)^\\top$). The score $(R(m)q)\\cdot(R(n)k) = q^\\top R(n-m)\\,k$ depends only on $m - n$: shifting every position by up to 1000 changed no score by more than $10^{-5}$, and no norm by more than $10^{-6}$ (relative). The "rotate half" pairing of GPT-NeoX and LLaMA is the same rotation on permuted columns.
* ALiBi adds $-m_h|i-j|$ to the scores, with slopes $2^{-8/H}, 2^{-16/H}, \\dots$ (and the interleaving rule when $H$ is not a power of two). It needs no embedding and no parameters. Its encoder form is symmetric, so a sentence and its reverse get reversed outputs.
* Neither adds anything to the token vectors: the words separate only inside attention.
* Train short, test long (`copy_left`, trained on lengths up to 16, tested up to 128): RoPE keeps at least 98% up to 4 times the training length; sinusoidal falls as soon as the sequences are longer than in training; learned has no embedding beyond its table; the encoder's ALiBi stays near one half at every length, because the task needs the direction that its symmetric bias cannot see. On `neighbour_sum`, which needs no direction, `xenc-extrapolate` finds the opposite: ALiBi keeps its accuracy and RoPE falls. A verdict on a scheme names its task; notebook 10 compares the schemes on two tasks side by side, with randomized positions.""",
    ),
    # 08 and 09 write their own objectives and summary: their exercises are appended at the end
    "08_gradients": dict(
        objectives=None, exercises=["linear_backward", "layer_norm_backward"], summary=None
    ),
    "09_attention_in_tiles": dict(objectives=None, exercises=["online_softmax_tile"], summary=None),
    # 10 writes its own objectives and summary (its results are sentences its cells print)
    "10_which_positions_generalize": dict(
        objectives=None, exercises=["relative_shift"], summary=None
    ),
}

# Each exercise in one notebook: the class's notebooks then count each exercise's points once, and
# a course's total is the registry's.
for _a in NB:
    for _b in NB:
        _both = set(NB[_a]["exercises"]) & set(NB[_b]["exercises"]) if _a < _b else set()
        if _both:
            sys.exit(
                "%s are in both %s and %s: an exercise belongs to one notebook"
                % (", ".join(sorted(_both)), _a, _b)
            )


def check_against_registry(path, nb):
    """Every exercise cell of nb: known to the registry and chosen, with the registry's signature;
    its heading shows the registry's points and its check cell passes the registry's hint level."""
    errors = []
    for c in nb["cells"]:
        x = c.get("metadata", {}).get("xenc", {})
        name, owner = x.get("exercise"), x.get("belongs_to")
        source = "".join(c["source"])
        if name:
            if name in NOT_SELECTED:
                errors.append(
                    '%s: exercise "%s" has cells, but the settings leave it out' % (path, name)
                )
                continue
            if name not in REGISTRY:
                errors.append('%s: exercise "%s" is not in the registry' % (path, name))
                continue
            got, want = stub_signature(source), REGISTRY[name]["signature"]
            if normalised(got) != normalised(want):
                errors.append(
                    '%s: the stub of "%s" is `%s`, the registry says `%s`' % (path, name, got, want)
                )
            # the cells as the exercise's file generates them (heading, stub, check)
            for made in exercise_cells(name):
                x = made["metadata"]["xenc"]
                mine = [
                    o
                    for o in nb["cells"]
                    if o.get("metadata", {})
                    .get("xenc", {})
                    .get("exercise" if "exercise" in x else "belongs_to")
                    == name
                    and o["cell_type"] == made["cell_type"]
                    and o["metadata"]["xenc"].get("part") == x["part"]
                ]
                if mine and "".join(mine[0]["source"]) != "".join(made["source"]):
                    errors.append(
                        '%s: the %s cell of "%s" is not what lib/src/grade/exercises/%s.cpp generates '
                        "(python3 notebooks/tools/course_cells.py rewrites it):\n%s\n-- expected:\n%s"
                        % (
                            path,
                            x["part"],
                            name,
                            name,
                            "".join(mine[0]["source"]),
                            "".join(made["source"]),
                        )
                    )
            for kind in ("markdown", "code"):
                if not any(
                    o.get("cell_type") == kind
                    and o.get("metadata", {}).get("xenc", {}).get("belongs_to") == name
                    for o in nb["cells"]
                ):
                    errors.append(
                        '%s: exercise "%s" has no %s'
                        % (path, name, "heading" if kind == "markdown" else "check cell")
                    )
        elif owner in REGISTRY and c["cell_type"] == "markdown":
            want = points_text(REGISTRY[owner]["points"])
            if want not in source.split("\n")[0]:
                errors.append(
                    '%s: the heading of "%s" is `%s`, the registry says %s'
                    % (path, owner, source.split("\n")[0], want)
                )
        elif (
            owner in REGISTRY
            and c["cell_type"] == "code"
            and c.get("metadata", {}).get("xenc", {}).get("part") == "exercise-check"
        ):
            if "xenc::grade::HintLevel::%s)" % HINTS not in source:
                errors.append(
                    '%s: the check cell of "%s" does not pass the hint level "%s": `%s`'
                    % (path, owner, HINTS, source)
                )
        elif owner and owner not in REGISTRY:
            errors.append(
                '%s: a cell of exercise "%s", which the registry does not choose' % (path, owner)
            )
    return errors


def without_exercise_sentences(text):
    """Objectives and summary without what they say about the exercises (a notebook that keeps
    only some of them, or none)."""
    text = "\n".join(l for l in text.split("\n") if not l.startswith("* (exercise"))
    text = re.sub(r", and \(exercises?\) [^.;\n]*", "", text)
    return re.sub(r"; the exercises? above [^.\n]*", "", text)


def apply(name):
    path = os.path.join(D, name + ".ipynb")
    if not os.path.exists(path):
        return
    nb = json.load(open(path))
    cells = [c for c in nb["cells"] if "part" not in c.get("metadata", {}).get("xenc", {})]
    spec = dict(NB[name])
    chosen = [e for e in spec["exercises"] if selected(e)]
    if chosen != spec["exercises"]:  # the settings leave out some or all of this notebook's
        # exercises: their sentences go, and an objective generated from the chosen names replaces
        # them, so no sentence speaks of an exercise that is not there
        spec["objectives"] = spec["objectives"] and without_exercise_sentences(spec["objectives"])
        spec["summary"] = spec["summary"] and without_exercise_sentences(spec["summary"])
        if chosen and spec["objectives"]:
            spec["objectives"] += "\n* (exercise%s) write %s yourself." % (
                "s" if len(chosen) > 1 else "",
                " and ".join("`%s`" % e for e in chosen),
            )
    top = []
    if spec["objectives"]:
        top.append(
            md(
                "### Learning objectives\n\nAfter this notebook you can\n\n" + spec["objectives"],
                "objectives",
            )
        )
    bottom = []
    if chosen:
        tests = any(
            "notebook_weak" in read_spec(os.path.join(EXERCISES_DIR, e + ".cpp")) for e in chosen
        )
        bottom.append(md(exercises_intro(TESTS_SAID if tests else ""), "exercise"))
        bottom.append(code(aliases(chosen), "exercise"))
        for e in chosen:
            bottom += exercise_cells(e)
    summary = "## Summary\n\n" + (spec["summary"] or "")
    if name in NEXT:
        nxt, title = NEXT[name]
        summary += "\n\n**Next:** [%s](%s.ipynb)" % (title, nxt)
    if spec["summary"] or name in NEXT:
        bottom.append(md(summary, "summary"))
    nb["cells"] = cells[:1] + top + cells[1:] + bottom
    if REGISTRY is not None:
        errors = check_against_registry(path, nb)
        if errors:
            sys.exit("\n".join(errors))
    with open(path, "w") as f:
        f.write(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    print("cells added to", path)


if CHECK:
    if REGISTRY is None:
        sys.exit("--check needs --registry FILE")
    errors, names, where = [], set(), {}
    for f in sorted(os.listdir(D)):
        if re.match(r"\d\d_.*\.ipynb$", f):
            nb = json.load(open(os.path.join(D, f)))
            errors += check_against_registry(f, nb)
            mine = {
                c["metadata"]["xenc"]["exercise"]
                for c in nb["cells"]
                if c.get("metadata", {}).get("xenc", {}).get("exercise")
            }
            for n in mine:
                where.setdefault(n, []).append(f)
            names |= mine
    # each exercise counts once: in one notebook, so the notebooks' points are the registry's
    for n, files in sorted(where.items()):
        if len(files) > 1:
            errors.append(
                'exercise "%s" is in %d notebooks (%s): an exercise belongs to one'
                % (n, len(files), ", ".join(files))
            )
    # a chosen exercise without a cell, among those whose file writes notebook cells (`// @notebook`)
    missing = sorted(
        n
        for n in set(REGISTRY) - names
        if not os.path.exists(os.path.join(EXERCISES_DIR, n + ".cpp"))
        or "notebook" in read_spec(os.path.join(EXERCISES_DIR, n + ".cpp"))
    )
    if missing:
        errors.append(
            "registered exercises without a notebook cell (add each to a notebook's "
            '"exercises" in NB below): ' + ", ".join(missing)
        )
    if errors:
        sys.exit("\n".join(errors))
    print("the exercise cells of %s match the registry: %d exercises" % (D, len(names)))
else:
    for n in NB:
        apply(n)
