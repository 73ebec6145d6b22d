#!/usr/bin/env python3
"""Jupyter protocol tests of xenc-kernel, through Debian's jupyter_client.

    JUPYTER_PATH=build/notebooks/kernel/jupyter python3 test_protocol.py

Starts the kernel the way Jupyter does (its kernelspec, a connection file, ZeroMQ), sends
requests and checks the messages that come back. Each check prints one line; any failure makes
the exit code 1.
"""
import os
import queue
import re
import sys
import time

from jupyter_client.manager import start_new_kernel

KERNEL = os.environ.get("XENC_KERNEL_NAME", "xenc-cpp17")
# a kernel starts in about 2 s, but took 78 to 138 s on the shared 2-core machine at load
# average 15 to 18 (its first cell compiles the prelude, twice)
STARTUP_TIMEOUT = 300
SETUP = '#include "xenc/xenc_cling.hpp"\n#include "xenc/xenc.hpp"\n#include "xenc/viz.hpp"\n#include <cstdio>\n#include <iostream>\n'
failures = []


def check(ok, what, detail=""):
    if not ok and isinstance(detail, list):  # messages: show their type and content only
        detail = [(m["msg_type"], m["content"]) if isinstance(m, dict) and "msg_type" in m else m
                  for m in detail]
    print(("PASS " if ok else "FAIL ") + what + ("" if ok else "\n     " + str(detail)[:3000]))
    if not ok:
        failures.append(what)


def execute(kc, code, timeout=120):
    """Runs code; returns (reply content, [iopub messages of this request])."""
    msg_id = kc.execute(code)
    messages = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
        messages.append(msg)
    reply = kc.get_shell_msg(timeout=timeout)
    return reply["content"], messages


def execute_with_input(kc, km, code, answers, allow_stdin=True, interrupt=False, timeout=120):
    """Runs code, answering each input request with the next of answers, as the notebook's box
    does (or with interrupt, Interrupt at the first request instead). Returns (reply content,
    [iopub messages of this request], [the input requests' contents])."""
    msg_id = kc.execute(code, allow_stdin=allow_stdin)
    answers, asked, messages, idle = list(answers), [], [], False
    deadline = time.time() + timeout
    while not idle and time.time() < deadline:
        try:
            request = kc.get_stdin_msg(timeout=0.05)
            asked.append(request["content"])
            if interrupt:
                km.interrupt_kernel()
            else:
                kc.input(answers.pop(0) if answers else "")
        except queue.Empty:
            pass
        try:
            while True:
                msg = kc.get_iopub_msg(timeout=0.05)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                    idle = True
                    break
                messages.append(msg)
        except queue.Empty:
            pass
    reply = kc.get_shell_msg(timeout=timeout)
    return reply["content"], messages, asked


def wait_for_iopub(kc, timeout=60):
    """Returns once the IOPub channel carries this kernel's messages.

    jupyter_client's wait_for_ready takes any IOPub message as proof that IOPub is connected;
    after a restart that can be a stale one of the old kernel (the busy status of the cell that
    crashed), and the new kernel's first idle status is then lost (ZeroMQ's slow joiner), so
    execute() would wait forever. Here a kernel_info request is repeated until its own status
    message arrives on IOPub, and every older message is dropped."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        msg_id = kc.kernel_info()
        while kc.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != msg_id:
            pass
        try:
            while True:
                msg = kc.get_iopub_msg(timeout=1)
                if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status" \
                        and msg["content"]["execution_state"] == "idle":
                    return
        except queue.Empty:
            pass
    raise RuntimeError("no IOPub message from the kernel in %d s" % timeout)


def of_type(messages, kind):
    return [m["content"] for m in messages if m["msg_type"] == kind]


def stream_text(messages, name):
    return "".join(c["text"] for c in of_type(messages, "stream") if c["name"] == name)


def main():
    # the whole session runs under a 3 GiB memory limit: the notebooks' setup and cells fit in it
    env = dict(os.environ, XENC_KERNEL_MEMORY_MIB="3072")
    km, kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=STARTUP_TIMEOUT, env=env)
    try:
        wait_for_iopub(kc)
        info = kc.kernel_info(reply=True, timeout=30)["content"]
        check(info["status"] == "ok" and info["language_info"]["name"] == "c++"
              and info["implementation"] == "xenc-kernel",
              "kernel_info names the language c++ and the implementation xenc-kernel", info)

        reply, msgs = execute(kc, SETUP)
        check(reply["status"] == "ok", "the notebooks' setup cell (xenc_cling.hpp, xenc.hpp) compiles",
              [reply, msgs])

        # stdout from std::cout and from printf, stderr from std::cerr: stream messages
        reply, msgs = execute(kc, 'std::cout << "from cout " << 6 * 7 << std::endl;\n'
                                  'std::printf("from printf %d\\n", 43);\nstd::cerr << "to cerr\\n";')
        out = stream_text(msgs, "stdout")
        check(reply["status"] == "ok" and "from cout 42" in out and "from printf 43" in out,
              "std::cout and printf output arrive as stdout stream messages", msgs)
        check("to cerr" in stream_text(msgs, "stderr"), "std::cerr output arrives as a stderr stream", msgs)

        # streams while the cell runs: the line printed before a 2 s sleep arrives as its own
        # stream message while the cell still runs (no execute_reply yet), the second one later
        execute(kc, "#include <chrono>\n#include <thread>")
        msg_id = kc.execute('std::cout << "first line" << std::endl;\n'
                            'std::this_thread::sleep_for(std::chrono::seconds(2));\n'
                            'std::printf("second line\\n");')
        arrivals, reply_pending_at_first, early_reply = [], None, None
        deadline = time.time() + 60
        while time.time() < deadline:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            if msg["msg_type"] == "stream":
                if not arrivals:  # is the execute_reply there already? (it must not be)
                    try:
                        early_reply = kc.get_shell_msg(timeout=0.05)
                    except queue.Empty:
                        pass
                    reply_pending_at_first = early_reply is None
                arrivals.append((time.time(), msg["content"]["text"]))
        if early_reply is None:
            kc.get_shell_msg(timeout=60)
        texts = [t for _, t in arrivals]
        first = next((a for a, t in arrivals if "first line" in t), None)
        second = next((a for a, t in arrivals if "second line" in t), None)
        check(len(arrivals) >= 2 and first is not None and second is not None
              and "second line" not in texts[0] and reply_pending_at_first and second - first > 1.0,
              "a cell that prints, sleeps 2 s, prints: the first line arrives as a stream message "
              "while the cell runs (before its execute_reply), the second %.1f s later"
              % ((second or 0) - (first or 0)), [arrivals, reply_pending_at_first])

        # bytes that are not UTF-8 (JSON cannot carry them) arrive as U+FFFD; the kernel lives on
        reply, msgs = execute(kc, 'std::printf("bad \\xff byte\\n");')
        check(reply["status"] == "ok" and "bad \ufffd byte" in stream_text(msgs, "stdout"),
              "a byte that is not UTF-8 arrives as U+FFFD in the stream", [reply, msgs])

        # a compile error: an error reply and an error message with the compiler's text
        reply, msgs = execute(kc, "int broken = undefined_name + 1;")
        errors = of_type(msgs, "error")
        check(reply["status"] == "error" and errors and "undeclared identifier 'undefined_name'"
              in "\n".join(errors[0]["traceback"]),
              "a compile error gives an error message whose traceback has clang's diagnostic", [reply, msgs])
        reply, msgs = execute(kc, 'std::cout << "still alive" << std::endl;')
        check(reply["status"] == "ok" and "still alive" in stream_text(msgs, "stdout"),
              "the cell after a compile error runs", msgs)
        # the compiler's snippets show the cell's lines as the student wrote them, with the
        # caret and the column where they were: not the kernel's wrapper around them
        # an error in a cell that also defines a lambda variable (clang 19 crashes undoing that
        # cell, in the kernel's throwaway copy): the error clang found is what the cell shows
        reply, msgs = execute(kc, "auto lam_e = [](int a) { return a + 1; };\nlam_e(nowhere_q);")
        shown = "\n".join(reply.get("traceback", []))
        check(reply["status"] == "error" and reply["ename"] == "CompileError"
              and "2:7: error: use of undeclared identifier 'nowhere_q'" in shown
              and "    2 | lam_e(nowhere_q);" in shown,
              "a compile error beside a lambda variable: the cell shows clang's error, not only "
              "that clang crashed", [reply, msgs])
        execute(kc, "int snip_twice(int x) { return 2 * x; }")
        # the cell's own stderr passes the same way: a 2 MB line (a regular expression over it
        # once overflowed the kernel's stack and ended it), and text that looks like a diagnostic
        # with numbers too long for any line
        reply, msgs = execute(kc, "#include <string>\nstd::cerr << \"a:1:2: error: \" << "
                                  "std::string(2000000, 'y') << \"\\n    1 | \" << "
                                  "std::string(2000000, 'z') << \"\\n      | ^\" << std::endl;\n"
                                  "std::cerr << \"a:1:99999999999999999999: error: x\\n  "
                                  "99999999999999999999 | y\\n      | ^\" << std::endl;\n"
                                  "std::cout << \"printed\" << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "printed\n"
              and len(stream_text(msgs, "stderr")) > 4000000
              and "99999999999999999999 | y" in stream_text(msgs, "stderr"),
              "a 2 MB stderr line and a false diagnostic pass through as printed", [reply])
        for code, said, what in [
                ("int sn = 1;\nstd::cout << sn << nowhere_name;",
                 ["2:20: error: use of undeclared identifier 'nowhere_name'",
                  "    2 | std::cout << sn << nowhere_name;", "      |                    ^"],
                 "a statement"),
                ("int sm = 2\nstd::cout << sm;",
                 ["1:11: error: expected ';' after top level declarator",
                  "    1 | int sm = 2", "      |           ^", "      |           ;"],
                 "a declaration and clang's fix-it"),
                ("std::cout << 1;\nreturn 0;",
                 ["2:1: error: void function '(the cell's statements)' should not return a value",
                  "    2 | return 0;", "      | ^      ~",
                  "A cell's statements are not inside a function of yours"],
                 "a return pasted from main()"),
                ("int snip_twice(int x) { return 3 * x + nowhere_y; }",
                 ["1:40: error: use of undeclared identifier 'nowhere_y'",
                  "    1 | int snip_twice(int x) { return 3 * x + nowhere_y; }\n"],
                 "a redefinition of an earlier cell's function")]:
            reply, msgs = execute(kc, code)
            shown = "\n".join(reply.get("traceback", [])) + "\n"
            check(reply["status"] == "error" and all(s in shown for s in said)
                  and "__xenc" not in shown and "xenc_kernel_line" not in shown,
                  "a compile error in %s: its snippet is the cell's line, the caret and column "
                  "where they were" % what, [reply, msgs])
        # what a cell defines with internal linkage is one object for all the cells after it
        # (clang 19 emitted a new copy in each later cell that used it): a static variable, an
        # anonymous namespace's, a static function's static local, a lambda's static local, a
        # static std::string whose initialiser must not run again, a redefined static variable
        for first, later, out in [
                ("static int st_v = 5;\nst_v = 7;", "std::cout << st_v << std::endl;", "7\n"),
                ("namespace { int anon_v = 1; }\nanon_v = 4;", "std::cout << anon_v << std::endl;",
                 "4\n"),
                ("static int next_id() { static int id = 0; return ++id; }\nnext_id();",
                 "std::cout << next_id() << std::endl;", "2\n"),
                ("auto lam_k = [] { static int k = 0; return ++k; };\nlam_k();",
                 "std::cout << lam_k() << std::endl;", "2\n"),
                ("static int init_calls = 0;\nint count_init() { return ++init_calls; }\n"
                 "static std::string greet = std::string(\"hi\") + std::to_string(count_init());\n"
                 "greet += \"!\";", "std::cout << greet << \" \" << init_calls << std::endl;",
                 "hi1! 1\n"),
                ("static int st_v = 100;\nst_v += 1;", "std::cout << st_v << std::endl;", "101\n")]:
            execute(kc, first)
            reply, msgs = execute(kc, later)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == out,
                  "internal linkage across cells: %s, then %s prints %r"
                  % (first.split("\n")[0], later, out), [reply, msgs])
        # a whole program pasted into a cell: its main() is defined, nothing calls it, and the
        # cell says so; main(); in the next cell runs it
        reply, msgs = execute(kc, "int main() {\n  std::cout << \"in main\" << std::endl;\n  return 0;\n}")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == ""
              and "defined main(), which a notebook never calls" in stream_text(msgs, "stderr")
              and "write main(); in a cell below" in stream_text(msgs, "stderr"),
              "a cell defining main() runs nothing and says how to run it", [reply, msgs])
        reply, msgs = execute(kc, "main();")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "in main\n"
              and "main()" not in stream_text(msgs, "stderr"),
              "main(); in the next cell runs it", [reply, msgs])
        # a location inside a message ("(lambda at input_line_N:L:C)") names the column of the
        # cell as written too: a lambda of this cell, and one an earlier cell defined
        execute(kc, "auto lam_p = [](int a) { return a; };")
        for code, what in [("auto lam_s = [](int a) { return a + 1; };\nlam_s(\"s\");", "this cell"),
                           ("lam_p(\"s\");", "an earlier cell")]:
            reply, msgs = execute(kc, code)
            shown = "\n".join(reply.get("traceback", []))
            at = re.findall(r"\(lambda at input_line_\d+:(\d+):(\d+)\)", shown)
            check(reply["status"] == "error" and "no matching function for call to object" in shown
                  and at and all(a == ("1", "14") for a in at),
                  "a lambda of %s named in a compile error: at line 1, column 14, where its [ is "
                  "in the cell as written (found: %s)" % (what, at), [reply, msgs])

        # a library exception: ename is the type, evalue the library's message, then its line
        # and what to do
        reply, msgs = execute(kc, "xenc::Tensor2 row({{1.0f, 2.0f}});\n"
                                  "auto bad = xenc::matmul(row, row);")
        errors = of_type(msgs, "error")
        check(reply["status"] == "error" and errors and errors[0]["ename"] == "xenc::shape_error"
              and "matmul" in errors[0]["evalue"]
              and "It was thrown at line 2 of the cell" in "\n".join(errors[0]["traceback"])
              and "run the cell again" in errors[0]["traceback"][-1],
              "a thrown xenc::shape_error gives an error message with its type, the library's "
              "message, its line and what to do", [reply, msgs])
        reply, msgs = execute(kc, 'std::cout << "after the exception" << std::endl;')
        check(reply["status"] == "ok" and "after the exception" in stream_text(msgs, "stdout"),
              "the cell after an exception runs", msgs)

        # memory: a cell asking for more than the kernel's limit gets std::bad_alloc as its error
        # (the machine does not swap), and the kernel lives on
        reply, msgs = execute(kc, "std::vector<float> huge(std::size_t(1) << 31);  // 8 GiB")
        errors = of_type(msgs, "error")
        check(reply["status"] == "error" and errors and "bad_alloc" in errors[0]["ename"]
              and "start Jupyter with XENC_KERNEL_MEMORY_MIB set higher" in errors[0]["traceback"][-1],
              "a cell allocating 8 GiB under XENC_KERNEL_MEMORY_MIB=3072 gets std::bad_alloc, "
              "and says what to do", [reply, msgs])
        reply, msgs = execute(kc, 'std::cout << "after bad_alloc" << std::endl;')
        check(reply["status"] == "ok" and "after bad_alloc" in stream_text(msgs, "stdout"),
              "the cell after a std::bad_alloc runs", msgs)

        # rich display: a table shown with xenc::viz::show is display_data with HTML
        reply, msgs = execute(kc, 'xenc::viz::show(xenc::viz::table(xenc::Tensor2({{1.5f, 2.0f}}), {}, {}, "t"));')
        shown = of_type(msgs, "display_data")
        check(reply["status"] == "ok" and shown and "<table" in shown[0]["data"].get("text/html", ""),
              "xenc::viz::show(table) sends display_data with text/html", msgs)

        # execute_result: a final expression without a semicolon
        reply, msgs = execute(kc, "int answer = 6;\nanswer * 7")
        results = of_type(msgs, "execute_result")
        check(results and results[0]["data"]["text/plain"] == "42",
              "a cell ending in an int expression shows it as execute_result", msgs)
        reply, msgs = execute(kc, 'xenc::viz::table(xenc::Tensor2({{0.25f}}), {}, {}, "cap")')
        results = of_type(msgs, "execute_result")
        check(results and "<table" in results[0]["data"].get("text/html", ""),
              "a cell ending in a table shows its HTML bundle as execute_result", msgs)
        # containers, pairs and tuples show their elements; a string or a char in its quotes; a
        # container's first 100 elements, then its size
        execute(kc, "#include <array>\n#include <map>\n#include <optional>\n#include <tuple>\n"
                    "#include <vector>")
        for code, shown in [
                ("std::vector<int> shown_v = {1, 2, 3};\nshown_v", "{1, 2, 3}"),
                ("std::map<int, std::string> shown_m = {{1, \"a\"}, {2, \"b\"}};\nshown_m", '{1: "a", 2: "b"}'),
                ("int c_array[3] = {4, 5, 6};\nc_array", "{4, 5, 6}"),
                ("std::make_tuple(1, std::string(\"x\"), 'c', true, 2.5)", '(1, "x", \'c\', true, 2.5)'),
                ("std::vector<std::vector<double>> shown_n = {{1.5}, {2, 3}};\nshown_n", "{{1.5}, {2, 3}}"),
                ("std::vector<int>(1000, 7)",
                 "{" + ", ".join(["7"] * 100) + ", ... (1000 in all)}"),
                ("const char* no_text = nullptr;\nno_text", "nullptr"),
                ("struct Opaque {};\nstd::array<Opaque, 2> shown_o;\nshown_o", "{<no printable form>, <no printable form>}"),
                ("std::optional<int> shown_opt = 3;\nshown_opt", "3"),
                ("std::optional<std::string>()", "std::nullopt"),
                # a last line ending in a brace: a value, not a block
                ("int braced_n = 2;\nstd::vector<int>{1, braced_n, 3}", "{1, 2, 3}"),
                ("std::vector<std::vector<int>>{{1}, {2, 3}}", "{{1}, {2, 3}}"),
                # a brace inside the last line's expression: the expression goes on after it
                ("struct Greeter { int f() const { return 4; } };\nGreeter{}.f()", "4"),
                ("int lambda_base = 3;\n[&] { return lambda_base * 2; }() * 7", "42"),
                ("std::vector<int>{5, 6, 7}\n    .size()", "3")]:
            reply, msgs = execute(kc, code)
            results = of_type(msgs, "execute_result")
            check(reply["status"] == "ok" and results and results[0]["data"]["text/plain"] == shown,
                  "a cell ending in %s shows %s" % (code.split("\n")[-1], shown[:40]), [reply, msgs])
        reply, msgs = execute(kc, "answer * 7;")
        check(not of_type(msgs, "execute_result"), "a semicolon after the expression shows nothing", msgs)
        # a cell with a #define, edited and run again: the new value, and no warning
        for code, shown in [("#define CELL_SCALE 2\nCELL_SCALE * 3", "6"),
                            ("#define CELL_SCALE 3\nCELL_SCALE * 3", "9")]:
            reply, msgs = execute(kc, code)
            results = of_type(msgs, "execute_result")
            check(reply["status"] == "ok" and results and results[0]["data"]["text/plain"] == shown
                  and "redefined" not in stream_text(msgs, "stderr"),
                  "a #define edited and run again: %s, with no warning" % shown, [reply, msgs])
        # a header pasted into a cell, with its #pragma once (clang 19 crashed on it in a cell)
        reply, msgs = execute(kc, "#pragma once\nint pasted_header = 6;\npasted_header * 7")
        results = of_type(msgs, "execute_result")
        check(reply["status"] == "ok" and results and results[0]["data"]["text/plain"] == "42"
              and "#pragma once was skipped" in stream_text(msgs, "stderr"),
              "a cell with #pragma once runs, and says the pragma was skipped", [reply, msgs])
        # a header written out from a raw string over several lines: its #pragma once is text and
        # stays, and the cell's last line is still its value; a digit separator starts no literal
        reply, msgs = execute(kc, 'std::string header_text = R"(\n#pragma once\nint x;\n)";\n'
                                  "int big_count = 1'000;\nheader_text.size() + big_count")
        results = of_type(msgs, "execute_result")
        check(reply["status"] == "ok" and results and results[0]["data"]["text/plain"] == "1021"
              and "#pragma once was skipped" not in stream_text(msgs, "stderr"),
              "a raw string's #pragma once line is kept and 1'000 reads as a number (1021)",
              [reply, msgs])
        for code, said in [("auto braced_v = std::vector<int>{1}", "expected ';' after top level declarator"),
                           ("int braced_m = 1\nstd::vector<int>{1}", "expected ';' after top level declarator"),
                           ("struct BracedS { int a; }", "expected ';' after struct")]:
            reply, msgs = execute(kc, code)
            check(reply["status"] == "error" and reply.get("ename") == "CompileError"
                  and said in "\n".join(reply["traceback"]) and not of_type(msgs, "execute_result"),
                  "a cell ending in a brace that is no value (%s) keeps clang's error (%s)"
                  % (code.split("\n")[0], said), [reply, msgs])

        # is_complete
        kc.is_complete("for (int i = 0; i < 3; ++i) {")
        r1 = kc.get_shell_msg(timeout=30)["content"]
        kc.is_complete("int x = 1;")
        r2 = kc.get_shell_msg(timeout=30)["content"]
        check(r1["status"] == "incomplete" and r2["status"] == "complete",
              "is_complete: an open brace is incomplete, a statement complete", [r1, r2])
        kc.is_complete('auto open_raw = R"(line 1\n')
        r1 = kc.get_shell_msg(timeout=30)["content"]
        kc.is_complete('auto closed_raw = R"(line 1\nline 2 " { )";')
        r2 = kc.get_shell_msg(timeout=30)["content"]
        check(r1["status"] == "incomplete" and r2["status"] == "complete",
              "is_complete: an open raw string is incomplete, one closed on a later line complete",
              [r1, r2])

        # complete: names the earlier cells declared
        execute(kc, "int abcdef = 1;\nint abcxyz = 2;")
        code = "int y = abc"
        reply = kc.complete(code, len(code), reply=True, timeout=60)["content"]
        check(reply["status"] == "ok" and {"abcdef", "abcxyz"} <= set(reply["matches"])
              and reply["cursor_start"] == len("int y = "),
              "complete: abc offers abcdef and abcxyz, declared by an earlier cell", reply)
        # xenc::Multi + Tab offers MultiheadAttention (from the headers' declarations), and
        # xenc::viz::sh offers show
        code = "auto m = xenc::Multi"
        reply = kc.complete(code, len(code), reply=True, timeout=60)["content"]
        check(reply["status"] == "ok" and "MultiheadAttention" in reply["matches"]
              and reply["cursor_start"] == len("auto m = xenc::"),
              "complete: xenc::Multi offers MultiheadAttention", reply)
        code = "xenc::viz::sh"
        reply = kc.complete(code, len(code), reply=True, timeout=60)["content"]
        check(reply["status"] == "ok" and "show" in reply["matches"]
              and all(m.startswith("sh") for m in reply["matches"]),
              "complete: xenc::viz::sh offers show, and only names starting with sh", reply)
        reply, msgs = execute(kc, 'std::cout << "after completion" << std::endl;')
        check(reply["status"] == "ok" and "after completion" in stream_text(msgs, "stdout"),
              "cells still compile after a completion", msgs)

        # inspect: the doc block of an xencoder symbol, from its header
        code = "xenc::MultiheadAttention"
        reply = kc.inspect(code, len(code), reply=True, timeout=30)["content"]
        text = reply.get("data", {}).get("text/plain", "")
        check(reply["found"] and "attention" in text.lower() and "multihead_attention.hpp" in text,
              "inspect: xenc::MultiheadAttention shows the comment block from its header", reply)

        # interrupt: a runaway loop stops within a few seconds, and the kernel goes on
        msg_id = kc.execute('volatile long spins = 0;\nstd::cout << "spinning" << std::endl;\n'
                            "while (true) { ++spins; }")
        deadline = time.time() + 120
        while time.time() < deadline:
            msg = kc.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream" \
                    and "spinning" in msg["content"]["text"]:
                break
        time.sleep(0.5)
        started = time.time()
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)["content"]
        took = time.time() - started
        check(reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt" and took < 5,
              "interrupt stops while (true) {} within 5 s (took %.2f s)" % took, reply)
        # The cell after it runs and sees the interrupted cell's variable. (It used to hang when
        # the Interrupt landed while clang JIT-linked the cell, or was dropped when it arrived
        # during compilation; stress_test.py interrupts at random points with two busy kernels.)
        try:
            reply, msgs = execute(kc, 'std::cout << "spun " << (spins > 0) << std::endl;', timeout=60)
            check(reply["status"] == "ok" and "spun 1" in stream_text(msgs, "stdout"),
                  "the cell after an interrupt runs and sees the interrupted cell's variable", msgs)
        except queue.Empty:
            check(False, "the cell after an interrupt runs (it did not finish within 60 s)")

        # A cell queued behind one that is interrupted does not run: it gets an error reply that
        # says so, with its busy and idle status on IOPub (xeus alone gave it a bare error reply
        # and no status, so a client waiting for its idle status waited for ever), and the cell
        # sent after that runs.
        running = kc.execute("volatile int queued_spin = 0;\nwhile (true) { ++queued_spin; }")
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") == running and msg["msg_type"] == "status":
                break
        queued = kc.execute("int queued_cell = 1;")
        time.sleep(1)
        km.interrupt_kernel()
        replies = {}
        for _ in range(2):
            m = kc.get_shell_msg(timeout=60)
            replies[m["parent_header"].get("msg_id")] = m["content"]
        states, errors = [], []
        try:
            while "idle" not in states:
                m = kc.get_iopub_msg(timeout=30)
                if m["parent_header"].get("msg_id") != queued:
                    continue
                if m["msg_type"] == "status":
                    states.append(m["content"]["execution_state"])
                if m["msg_type"] == "error":
                    errors.append(m["content"])
        except queue.Empty:
            pass
        check(replies.get(running, {}).get("ename") == "KeyboardInterrupt"
              and replies.get(queued, {}).get("ename") == "CellNotRun"
              and states == ["busy", "idle"] and errors and errors[0]["ename"] == "CellNotRun"
              and "run this one again" in "\n".join(errors[0]["traceback"]),
              "a cell queued behind an interrupted one gets a CellNotRun error, busy and idle",
              [replies, states, errors])
        reply, msgs = execute(kc, "std::cout << queued_cell << std::endl;", timeout=60)
        check(reply["status"] == "error"
              and "undeclared identifier 'queued_cell'" in "\n".join(reply["traceback"]),
              "the queued cell did not run: its variable does not exist", reply)
        reply, msgs = execute(kc, 'std::cout << "after the queue" << std::endl;', timeout=60)
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "after the queue\n",
              "the cell sent after them runs", [reply, msgs])

        # restart: a fresh interpreter (a variable of before is gone)
        km.restart_kernel(now=True)
        kc.wait_for_ready(timeout=STARTUP_TIMEOUT)
        wait_for_iopub(kc)
        reply, msgs = execute(kc, "int answer = 1;")
        check(reply["status"] == "ok",
              "after a restart, redefining a variable of the old session compiles (fresh interpreter)",
              [reply, msgs])

        # a crash in a cell's code is an error reply naming the signal; the kernel lives on with
        # what earlier cells defined
        execute(kc, "#include <iostream>\n#include <utility>")
        reply, msgs = execute(kc, "int kept = 41;")
        # (the line: the cell's statement that ran, itself or through a function it called)
        for code, signal, line in [("*(volatile int*)nullptr = 1;", "SIGSEGV", 1),
                                   ("#include <cstdlib>\nstd::abort();", "SIGABRT", 2),
                                   ("volatile int zero = 0;\nint one = 1;\n\nstd::cout << one / zero;",
                                    "SIGFPE", 4),
                                   ("int deep(int n) { volatile char b[512]; b[0] = char(n); "
                                    "return n == 0 ? 0 : deep(n - 1) + b[0]; }\ndeep(1 << 30);",
                                    "SIGSEGV", 2)]:
            reply, msgs = execute(kc, code)
            errors = of_type(msgs, "error")
            text = "\n".join(errors[0]["traceback"]) if errors else ""
            check(reply["status"] == "error" and errors and errors[0]["ename"] == signal
                  and "at line %d of the cell" % line in text
                  and "Fix that line (or the function it calls) and run the cell again." in text,
                  "%s gives a %s error reply naming line %d and saying what to do"
                  % (code.splitlines()[-1], signal, line), [reply, msgs])
            reply, msgs = execute(kc, "std::cout << kept + 1 << std::endl;")
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "42\n",
                  "after %s the next cell runs and sees the earlier variable" % signal, msgs)

        # an exercise's check cell whose student function crashes: the grader runs each call of it in
        # a forked child (xenc::grade::set_check_isolation), so every check reports the crash, the
        # cell replies ok, and the kernel lives on with its state
        reply, msgs = execute(kc, '#include "xenc/xenc_cling.hpp"\n#include <xenc/grade/exercises.hpp>')
        check(reply["status"] == "ok", "the notebooks' set-up header and the grader's load", [reply, msgs])
        execute(kc, "xenc::Tensor2 crashing_softmax(const xenc::Tensor2& x) {\n"
                    "  *(volatile int*)nullptr = 1;\n  return x;\n}")
        reply, msgs = execute(kc, "{ auto r = xenc::grade::check_softmax(crashing_softmax);\n"
                                  "  std::cout << r.checks.size() - r.num_passed() << \" of \" << r.checks.size()\n"
                                  "            << \" failed: \" << r.checks[0].computed << std::endl; }")
        out = stream_text(msgs, "stdout")
        failed, _, total = out.partition(" of ")
        check(reply["status"] == "ok" and failed.isdigit() and total.startswith(failed + " failed: ")
              and "failed: crashed with SIGSEGV (segmentation fault" in out,
              "a check cell whose student function segfaults reports the crash in every check and "
              "replies ok", [reply, msgs])
        reply, msgs = execute(kc, "std::cout << kept + 1 << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "42\n",
              "after the crashing check the next cell runs and sees the earlier variable", msgs)

        # statements clang 19 crashed on at the top level run inside a function
        for code, out in [("{ auto f = [] { return 1; }; std::cout << f() << std::endl; }", "1\n"),
                          ("#include <thread>\nstd::thread([] {}).detach();\nstd::cout << \"t\\n\";", "t\n"),
                          ("int counter() { static int n = 0; return ++n; }\ncounter();\n"
                           "{ static int s = 5; std::cout << counter() + s << std::endl; }", "7\n"),
                          ("{ auto [p, q] = std::pair<int, int>(3, 4); std::cout << p * q << std::endl; }",
                           "12\n"),
                          ("std::cout << 5 << std::endl;  // a comment ends the cell", "5\n")]:
            reply, msgs = execute(kc, code)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == out,
                  "a cell with %r runs and prints %r" % (code[:40], out), [reply, msgs])
        reply, msgs = execute(kc, "std::cout << kept << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n",
              "after them the kernel still has the earlier variable", msgs)

        # edit and re-run: a failed redefinition changes nothing, a good one replaces
        cases = [("function", "double f(double x) { return 2 * x; }", "double f(double x) { return 3 * x; }",
                  "std::cout << f(1) << std::endl;", "2\n", "3\n"),
                 ("variable", "int v = 1;", "int v = 5;", "std::cout << v << std::endl;", "1\n", "5\n"),
                 ("class", "struct P { int a = 1; };", "struct P { int a = 2, b = 3; };",
                  "std::cout << P{}.a << std::endl;", "1\n", "2\n"),
                 ("namespace member", "namespace ns { int m = 1; int other = 7; }", "namespace ns { int m = 2; }",
                  "std::cout << ns::m << ns::other << std::endl;", "17\n", "27\n"),
                 # clang's message does not name these: the names come from the cell's text
                 ("function's return type", "double rt(double x) { return 2 * x; }",
                  "float rt(double x) { return 3 * x; }", "std::cout << rt(1) << std::endl;", "2\n", "3\n"),
                 ("type alias", "using Real = float;", "using Real = double;",
                  "std::cout << sizeof(Real) << std::endl;", "4\n", "8\n"),
                 # clang 19 crashes on a lambda variable defined again, even the same text
                 ("lambda variable", "auto g = [](int x) { return x + 1; };",
                  "auto g = [](int x) { return x + 10; };", "std::cout << g(1) << std::endl;", "2\n", "11\n"),
                 ("lambda with a capture", "auto next = [n = 0]() mutable { return ++n; };",
                  "auto next = [n = 10]() mutable { return ++n; };", "std::cout << next() << std::endl;",
                  "1\n", "11\n"),
                 # (notebook 07's cell, run twice) each of the variables, not only the first
                 ("lambda and two variables in one declaration", "auto lam = [] { return 1; };\nint va = 1, vb = 2;",
                  "auto lam = [] { return 2; };\nint va = 3, vb = 4;",
                  "std::cout << lam() << va << vb << std::endl;", "112\n", "234\n"),
                 # (notebook 06's, run twice) a comment with ';' and '(' before the definition
                 ("function after a comment", "// one; (two)\ndouble cf(double x) { return x; }",
                  "// one; (two)\nfloat cf(double x) { return 2 * x; }", "std::cout << cf(1) << std::endl;",
                  "1\n", "2\n")]
        for what, first, second, use, before, after in cases:
            execute(kc, first)
            reply, msgs = execute(kc, second[:-1] + " broken_name; }" if second.endswith("}") else second + " broken_name;")
            said = "\n".join(reply.get("traceback", []))
            check(reply["status"] == "error" and ("changed nothing" in said or "nothing changed" in said),
                  "a %s redefinition that does not compile is a compile error" % what, [reply, msgs])
            reply, msgs = execute(kc, use)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == before,
                  "after it the earlier %s is intact (%r)" % (what, before), [reply, msgs])
            for attempt in range(2):  # re-run twice: each time it replaces
                reply, msgs = execute(kc, second)
                check(reply["status"] == "ok", "re-running an edited %s cell compiles (run %d)" % (what, attempt + 1),
                      [reply, msgs])
            reply, msgs = execute(kc, use)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == after,
                  "later cells see the new %s (%r)" % (what, after), [reply, msgs])

        # a member defined outside its class, edited: the message says how to replace it, and
        # doing what it says works; the same for a function of a namespace
        cases = [("a member defined again outside its class",
                  ["struct Q { int get() const; };", "int Q::get() const { return 7; }\nQ q_old;"],
                  "int Q::get() const { return 8; }",
                  "Q::get was defined by an earlier cell, and a member of a class is defined once. "
                  "Run the cell that defines Q again (that makes a new Q), then this one; or define "
                  "get inside Q.",
                  ["struct Q { int get() const; };",
                   "int Q::get() const { return 8; }\nstd::cout << Q{}.get() << q_old.get() << std::endl;"],
                  "87\n", "after the class's cell runs again, the member's new definition compiles (and "
                  "the object made before keeps the old class)"),
                 ("a namespace's function defined again outside it",
                  ["namespace geo { int helper(); }\nint geo::helper() { return 1; }"],
                  "int geo::helper() { return 2; }",
                  "geo::helper was defined by an earlier cell. A definition written inside its "
                  "namespace replaces the earlier one: write it as namespace geo { ... } and run the "
                  "cell again.",
                  ["namespace geo { int helper() { return 3; } }\nstd::cout << geo::helper() << std::endl;"],
                  "3\n", "written inside its namespace, it replaces the earlier one")]
        for what, setup, again, said, remedy, out, remedied in cases:
            for code in setup:
                execute(kc, code)
            reply, msgs = execute(kc, again)
            check(reply["status"] == "error" and said in "\n".join(reply.get("traceback", [])),
                  what + ": the message says what to do", [reply, msgs])
            for code in remedy:
                reply, msgs = execute(kc, code)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == out, remedied, [reply, msgs])

        # overloads: editing one keeps the others (before, the int overload vanished and f(1)
        # silently called f(double); defining it again then failed to link: "Duplicate
        # definition of symbol '_Z2ovi'")
        execute(kc, "double ov(double x) { return 2 * x; }\nint ov(int x) { return 5; }")
        for code, out, what in [
                ("double ov(double x) { return 4 * x; }", "5 6\n", "one overload edited"),
                ("float ov(double x) { return 8 * x; }", "5 12\n", "its return type changed"),
                ("int ov(int x) { return 7; }", "7 12\n", "the other overload edited")]:
            reply, msgs = execute(kc, code + "\nstd::cout << ov(1) << ' ' << ov(1.5) << std::endl;")
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == out,
                  "%s: the other overload stays (%r)" % (what, out), [reply, msgs])
        # an operator<< edited for one type: the other type's still prints
        execute(kc, "struct OA { int x; };\nstruct OB { int y; };\n"
                    "std::ostream& operator<<(std::ostream& o, const OA& a) { return o << 'A' << a.x; }\n"
                    "std::ostream& operator<<(std::ostream& o, const OB& b) { return o << 'B' << b.y; }")
        reply, msgs = execute(kc, "std::ostream& operator<<(std::ostream& o, const OA& a) { return o << 'a' << a.x; }\n"
                                  "std::cout << OA{1} << OB{2} << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "a1B2\n",
              "an edited operator<< replaces its own, and the other type's stays", [reply, msgs])

        # an explicit specialization edited in its own cell: the error says to run it with its
        # template; after its template alone was run again, the JIT refuses the old symbol, and
        # says so without claiming later cells fail; with its template, in one cell, it works
        execute(kc, "template <class T> T sp1(T x) { return x + 1; }")
        execute(kc, "template <> int sp1<int>(int x) { return x + 100; }")
        reply, msgs = execute(kc, "template <> int sp1<int>(int x) { return x + 200; }")
        said = "\n".join(reply.get("traceback", []))
        check(reply["status"] == "error" and "sp1<int> is a specialization of sp1" in said
              and "Put it in one cell with the template sp1" in said,
              "a specialization edited alone: the error says to run it with its template",
              [reply, msgs])
        execute(kc, "template <class T> T sp1(T x) { return x + 1; }")
        reply, msgs = execute(kc, "template <> int sp1<int>(int x) { return x + 200; }")
        said = "\n".join(reply.get("traceback", []))
        check(reply["status"] == "error" and "An earlier cell already defined int sp1<int>(int)"
              in said and "Restart" not in said,
              "a specialization run again after its template: the duplicate symbol is named, "
              "with no restart advice", [reply, msgs])
        reply, msgs = execute(kc, "template <class T> T sp1(T x) { return x + 1; }\n"
                                  "template <> int sp1<int>(int x) { return x + 300; }\n"
                                  "std::cout << sp1(1) << ' ' << sp1(1.5) << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "301 2.5\n",
              "a template and its edited specialization in one cell replace both", [reply, msgs])

        # std::cin and C's stdin ask the notebook for a line (input_request), as Python's input()
        # does; before, the read found the end of the input at once, with no word said
        for code, answers, out, what in [
                ("int in_x = 0, in_y = 0;\nstd::cout << \"two numbers: \";\nstd::cin >> in_x >> in_y;\n"
                 "std::cout << in_x + in_y << std::endl;", ["3 4"], "two numbers: 7\n",
                 "std::cin >> x >> y, the prompt printed first"),
                ("std::string in_name;\nstd::getline(std::cin, in_name);\nstd::cout << \"hi \" << in_name "
                 "<< std::endl;", ["Ada Lovelace"], "hi Ada Lovelace\n", "std::getline"),
                ("int in_a = 0, in_b = 0;\nscanf(\"%d\", &in_a);\nscanf(\"%d\", &in_b);\n"
                 "printf(\"%d\\n\", in_a * in_b);", ["6", "7"], "42\n", "scanf twice, a line each"),
                ("int in_c = 0;\nstd::cin >> in_c;\nstd::cout << in_c << std::endl;", ["5 6"], "5\n",
                 "one number of a line of two"),
                ("int in_d = 0;\nstd::cin >> in_d;\nstd::cout << in_d << std::endl;", ["8"], "8\n",
                 "the next cell: a line of its own, not the last cell's leftover"),
                ("int in_sum = 0, in_v = 0;\nwhile (std::cin >> in_v) in_sum += in_v;\n"
                 "std::cout << in_sum << std::endl;", ["1 2", "3", ""], "6\n",
                 "a loop that reads until the input ends, ended by an empty answer"),
                ("int in_f = 0;\nstd::cin >> in_f;\nstd::cout << in_f << std::endl;", ["4"], "4\n",
                 "the next cell: the end of the input forgotten")]:
            reply, msgs, asked = execute_with_input(kc, km, code, answers)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == out
                  and len(asked) == len(answers),
                  "%s: %d input request(s), the cell prints %r" % (what, len(answers), out),
                  [reply, msgs, asked])
        reply, msgs, asked = execute_with_input(
            kc, km, "int in_e = 5;\nstd::cin >> in_e;\nstd::cout << in_e << std::endl;", [],
            allow_stdin=False)
        check(reply["status"] == "ok" and not asked and stream_text(msgs, "stdout") == "5\n"
              and "the notebook did not allow input for this cell" in stream_text(msgs, "stderr"),
              "without allow_stdin: no request, the read fails, a note says why", [reply, msgs])
        reply, msgs, asked = execute_with_input(
            kc, km, "#include <thread>\nint in_t = 8;\n{ std::thread t([] { std::cin >> in_t; }); t.join(); }\n"
                    "std::cout << in_t << std::endl;", ["9"])
        check(reply["status"] == "ok" and not asked and stream_text(msgs, "stdout") == "8\n"
              and "only the cell's own thread can ask the notebook" in stream_text(msgs, "stderr"),
              "std::cin in a thread the cell started: no request, a note says why", [reply, msgs])
        reply, msgs, asked = execute_with_input(
            kc, km, "int in_w = 1;\nstd::cin >> in_w;\nstd::cout << \"after\" << std::endl;", [],
            interrupt=True)
        said = "\n".join(reply.get("traceback", []))
        check(reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt" and len(asked) == 1
              and "after" not in stream_text(msgs, "stdout"),
              "Interrupt while the cell waits for input ends the cell", [reply, msgs, asked])
        kc.input("99")  # typed late, into the box the Interrupt left: no later cell takes it
        time.sleep(0.5)
        reply, msgs, asked = execute_with_input(
            kc, km, "int in_u = 0;\nstd::cin >> in_u;\nstd::cout << in_u << ' ' << in_x << std::endl;",
            ["12"])
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "12 3\n" and len(asked) == 1,
              "after that Interrupt a cell asks again, and takes its own answer, not the late one",
              [reply, msgs, asked])

        # exit() in a cell ends the cell, not the kernel; in a forked child it ends the child
        for code, call, line, out in [
                ("#include <cstdlib>\nstd::cout << \"before\" << std::endl;\nstd::exit(3);\n"
                 "std::cout << \"after\" << std::endl;", "exit(3)", 3, "before\n"),
                ("void stop_here() { std::cout << \"stopping\" << std::endl; exit(0); }\nstop_here();",
                 "exit(0)", 2, "stopping\n"),
                ("_Exit(1);", "_Exit(1)", 1, ""),
                ("#include <unistd.h>\n_exit(4);", "_exit(4)", 2, ""),
                ("std::quick_exit(5);", "quick_exit(5)", 1, "")]:
            reply, msgs = execute(kc, code)
            said = "\n".join(reply.get("traceback", []))
            check(reply["status"] == "error" and reply["ename"] == "SystemExit"
                  and ("SystemExit: the cell called %s at line %d of the cell" % (call, line)) in said
                  and "it ended only this cell" in said and stream_text(msgs, "stdout") == out,
                  "a cell calling %s: an error reply naming it and line %d, the output before it"
                  % (call, line), [reply, msgs])
            reply, msgs = execute(kc, "std::cout << kept << std::endl;")
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n",
                  "after %s the next cell runs and sees the earlier variable" % call, msgs)
        reply, msgs = execute(kc, "#include <sys/wait.h>\n#include <unistd.h>\npid_t exiting = fork();\n"
                                  "if (exiting == 0) { std::cout << \"child\" << std::endl; exit(7); }\n"
                                  "int child_status = 0;\nwaitpid(exiting, &child_status, 0);\n"
                                  "std::cout << WEXITSTATUS(child_status) << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "child\n7\n",
              "exit(7) in a forked child ends the child with status 7", [reply, msgs])

        # A thread the cell started that crashes, or calls exit(): only that thread ends, its
        # join() returns, the cell goes on to its end and its error says what the thread did, and
        # the kernel lives on (before, the whole kernel died)
        execute(kc, "#include <thread>\n#include <stdexcept>\n#include <chrono>")
        for code, ename, said_what in [
                ("std::thread t([] { throw std::runtime_error(\"boom in thread\"); });\nt.join();",
                 "SIGABRT", "It was std::terminate, after an exception nobody caught: "
                 "std::runtime_error: boom in thread."),
                ("std::thread t([] { int* p = nullptr; *p = 1; });\nt.join();",
                 "SIGSEGV", "a thread that a cell started crashed: segmentation fault"),
                ("std::thread t([] { exit(6); });\nt.join();",
                 "SystemExit", "a thread that a cell started called exit(6)")]:
            reply, msgs = execute(kc, code + "\nstd::cout << \"joined\" << std::endl;")
            said = "\n".join(reply.get("traceback", []))
            check(reply["status"] == "error" and reply["ename"] == ename and said_what in said
                  and "The cell went on without it to its end" in said
                  and "ended only that thread" in said
                  and stream_text(msgs, "stdout") == "joined\n",
                  "a thread ending in %s: its join() returns, the cell runs to its end, and its "
                  "error says what the thread did (%s)" % (ename, said_what), [reply, msgs])
            reply, msgs = execute(kc, "std::cout << kept << std::endl;")
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n",
                  "after a thread's %s the next cell runs and sees the earlier variable" % ename,
                  msgs)
        # a stack overflow in a thread the cell started (it has a stack for its signal handler:
        # the JIT links std::thread's start, pthread_create and C11's thrd_create to the
        # kernel's); a second pthread_create or thrd_create thread's result still reaches its join
        execute(kc, "#include <pthread.h>\nint deep_in_thread(int n) { volatile char b[256]; "
                    "b[0] = n; return deep_in_thread(n + 1) + b[0]; }")
        for code, out, how in [
                ("std::thread deep_t([] { deep_in_thread(0); });\ndeep_t.join();\n"
                 "std::cout << \"joined\" << std::endl;", "joined\n", "std::thread"),
                ("pthread_t deep_p, plain_p;\npthread_create(&deep_p, nullptr, [](void*) -> void* { "
                 "deep_in_thread(0); return nullptr; }, nullptr);\npthread_join(deep_p, nullptr);\n"
                 "static int answer = 42;\npthread_create(&plain_p, nullptr, [](void* a) -> void* { "
                 "return a; }, &answer);\nvoid* got = nullptr;\npthread_join(plain_p, &got);\n"
                 "std::cout << *static_cast<int*>(got) << std::endl;", "42\n", "pthread_create"),
                ("#include <threads.h>\nthrd_t deep_c, plain_c;\nthrd_create(&deep_c, [](void*) { "
                 "return deep_in_thread(0); }, nullptr);\nthrd_join(deep_c, nullptr);\n"
                 "thrd_create(&plain_c, [](void*) { return 43; }, nullptr);\nint got_c = 0;\n"
                 "thrd_join(plain_c, &got_c);\nstd::cout << got_c << std::endl;", "43\n",
                 "thrd_create")]:
            reply, msgs = execute(kc, code)
            said = "\n".join(reply.get("traceback", []))
            check(reply["status"] == "error" and reply["ename"] == "SIGSEGV"
                  and "a thread that a cell started crashed" in said
                  and stream_text(msgs, "stdout") == out,
                  "a stack overflow in a thread (%s) ends that thread alone; the cell prints %r"
                  % (how, out), [reply, msgs])
        # std::async, std::call_once, std::promise (libstdc++'s thread_local std::__once_call),
        # and a cell's own thread_local, one copy per thread
        for code, out in [
                ("#include <future>\n{ std::vector<std::future<int>> fs; for (int h = 0; h < 8; ++h) "
                 "fs.push_back(std::async(std::launch::async, [h] { return h * h; }));\n"
                 "int s = 0; for (auto& f : fs) s += f.get(); std::cout << s << std::endl; }", "140\n"),
                ("#include <mutex>\nstd::once_flag once_f;\nfor (int i = 0; i < 3; ++i) "
                 "std::call_once(once_f, [] { std::cout << \"once\" << std::endl; });", "once\n"),
                ("{ std::promise<int> p; auto f = p.get_future(); std::thread t([&p] { "
                 "p.set_value(5); }); std::cout << f.get() << std::endl; t.join(); }", "5\n"),
                ("thread_local int per_thread = 3;\n{ std::thread t([] { per_thread = 9; }); "
                 "t.join(); }\nstd::cout << per_thread << std::endl;", "3\n")]:
            reply, msgs = execute(kc, code)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == out,
                  "a cell with %r prints %r" % (code[:48], out), [reply, msgs])
        # a std::async task that segfaults: its future never gets a value, so the cell waits; a
        # note says so while it waits, and Interrupt ends the cell with both reports
        kc.execute("auto crashed_task = std::async(std::launch::async, [] { return *(volatile int*)nullptr; });\n"
                   "std::cout << crashed_task.get() << std::endl;")
        deadline, noted = time.time() + 20, ""
        while time.time() < deadline and "waits for ever: use Interrupt" not in noted:
            try:
                m = kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            if m["msg_type"] == "stream" and m["content"]["name"] == "stderr":
                noted += m["content"]["text"]
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)["content"]
        said = "\n".join(reply.get("traceback", []))
        check("A thread that a cell started has crashed" in noted
              and reply["status"] == "error" and reply["ename"] == "SIGSEGV"
              and "KeyboardInterrupt: the cell was interrupted" in said,
              "a crashed std::async task: a note while the cell waits, then Interrupt gives the "
              "thread's crash and the Interrupt", [noted, reply])
        wait_for_iopub(kc)
        reply, msgs = execute(kc, "std::cout << kept << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n",
              "after the crashed std::async task the next cell sees the earlier variable", msgs)
        # a value thrown that is no std::exception (a beginner's `throw 42;`): its type and value
        for code, said in [("throw 42;", "int 42"), ("throw \"bad shape\";", 'char const* "bad shape"'),
                           ("throw std::string(\"s\");", 'std::string "s"'), ("throw 2.5;", "double 2.5"),
                           ("struct Thrown {};\nthrow Thrown{};", "Thrown")]:
            reply, msgs = execute(kc, code)
            text = "\n".join(reply.get("traceback", []))
            check(reply["status"] == "error" and reply.get("ename") == "ThrownValue"
                  and reply.get("evalue") == said + ", thrown and not caught"
                  and "It was thrown at line %d of the cell" % (code.count("\n") + 1) in text
                  and "throw std::runtime_error" in text,
                  "`%s` names what it threw (%s) and says to throw an exception" % (code, said),
                  [reply, msgs])
        # a cell with an error of its own after its thread's: both are said, the thread's first
        reply, msgs = execute(kc, "std::thread t([] { throw 7; });\nt.join();\n"
                                  "throw std::invalid_argument(\"own error\");")
        said = "\n".join(reply.get("traceback", []))
        check(reply["status"] == "error" and reply["ename"] == "SIGABRT"
              and "after an exception nobody caught: int 7" in said
              and "until its own error below" in said
              and "std::invalid_argument: own error" in said,
              "a thread's crash and the cell's own exception: both in the error, the thread's "
              "first", [reply, msgs])
        # a std::thread neither joined nor detached: std::terminate on the cell's own thread
        reply, msgs = execute(kc, "{ std::thread t([] {}); }")
        said = "\n".join(reply.get("traceback", []))
        check(reply["status"] == "error" and reply["ename"] == "SIGABRT"
              and "neither joined nor detached" in said,
              "a std::thread left joinable: SIGABRT, naming why std::terminate was called",
              [reply, msgs])
        # a detached thread that throws after its cell ended: said before the next cell's output
        reply, msgs = execute(kc, "std::thread([] { std::this_thread::sleep_for("
                                  "std::chrono::milliseconds(200)); throw std::logic_error(\"late\"); })"
                                  ".detach();")
        check(reply["status"] == "ok", "a detached thread starts", [reply, msgs])
        time.sleep(1.5)
        reply, msgs = execute(kc, "std::cout << kept << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n"
              and "After the last cell ended, a thread that a cell started crashed"
              in stream_text(msgs, "stderr")
              and "std::logic_error: late" in stream_text(msgs, "stderr"),
              "a thread that crashed while the kernel was idle: the next cell runs, and its stderr "
              "says what the thread did", [reply, msgs])

        # fork() in a cell: the child ends at the cell's end, never answering Jupyter
        reply, msgs = execute(kc, "#include <unistd.h>\n#include <sys/wait.h>\npid_t child = fork();\n"
                                  "std::cout << (child == 0 ? \"child\" : \"parent\") << std::endl;\n"
                                  "if (child > 0) waitpid(child, nullptr, 0);")
        out = stream_text(msgs, "stdout")
        check(reply["status"] == "ok" and sorted(out.split()) == ["child", "parent"],
              "a cell that forks: both print, one reply", [reply, msgs])
        reply, msgs = execute(kc, "std::cout << kept << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n",
              "after fork the next cell runs with the earlier state", msgs)

        # the output files count against the memory limit: each is mapped into the kernel's
        # address space at its fixed size, the 4 MB cap and a 4 MB margin
        maps = [l.split() for l in open("/proc/%d/maps" % km.provisioner.process.pid)
                if "memfd:xenc-kernel-std" in l]
        sizes = sorted(int(m[0].split("-")[1], 16) - int(m[0].split("-")[0], 16) for m in maps)
        check(sizes == [8 << 20, 8 << 20],
              "the stdout and stderr captures are mapped, 8 MiB each (cap + margin): %s" % sizes,
              maps)
        # 1 GB of output: capped at 4 MB (the default), a note says so, the reply comes
        reply, msgs = execute(kc, "#include <string>\nstd::string kb(1023, 'x');\n"
                                  "for (int i = 0; i < (1 << 20); ++i) std::cout << kb << '\\n';")
        out, err = stream_text(msgs, "stdout"), stream_text(msgs, "stderr")
        check(reply["status"] == "ok" and len(out) == 4 << 20 and out[:1024] == "x" * 1023 + "\n"
              and "output truncated after 4 MB" in err and err.count("output truncated") == 1,
              "a cell printing 1 GB gets 4 MB of it (got %d bytes) and one 'output truncated after "
              "4 MB' note" % len(out), [reply, err])
        reply, msgs = execute(kc, "std::cout << kept << std::endl;")
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n",
              "after 1 GB of output the next cell runs with the earlier state", msgs)
        # an endless printer, interrupted
        msg_id = kc.execute('while (true) std::printf("spam\\n");')
        time.sleep(2)
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)["content"]
        check(reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt",
              "Interrupt stops an endless printer", reply)
        reply, msgs = execute(kc, "std::cout << kept << std::endl;", timeout=60)
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n",
              "after the endless printer the next cell runs with the earlier state", msgs)

        # what a cell uses and no cell defines. A C++ function links to a stub: declared in one
        # cell and given its body in a later one (as in a C++ file, a prototype first), its
        # callers work once the body has run; called before that, the call throws, naming it,
        # and the kernel lives on. A variable links to pages of its own that fault until a cell
        # defines it: used before, the cell's error names it. An extern "C" function or a vtable
        # defined nowhere: the cell does not run (clang 19 would fail every later cell after
        # failing to link one)
        execute(kc, "int later_fn(int);\nint calls_later(int x) { return later_fn(x) + 1; }")
        for code, ename, said, out in [
                ("std::cout << \"before\" << std::endl;\nstd::cout << calls_later(4) << std::endl;",
                 "xenc_kernel::function_not_defined",
                 ["later_fn(int) was called, but no cell has defined it",
                  "It was thrown at line 2 of the cell", "Give the function its body in a cell"],
                 "before\n"),
                ("int undefined_fn();\nundefined_fn();", "xenc_kernel::function_not_defined",
                 ["undefined_fn() was called, but no cell has defined it"], ""),
                ("extern int undefined_var;\nstd::puts(\"ran\");\nstd::cout << undefined_var << std::endl;",
                 "VariableNotDefined", ["undefined_var was used, but no cell has defined it",
                                        "It was used at line 3 of the cell", "Define it in a cell"],
                 "ran\n"),
                ("extern \"C\" int c_nowhere(int);\nstd::cout << \"ran\" << c_nowhere(2) << std::endl;",
                 "LinkError", ["the cell uses c_nowhere, declared but defined nowhere"], ""),
                ("struct NoBody { virtual int g(); };\nNoBody no_body;\nstd::cout << \"ran\";",
                 "LinkError", ["the cell uses vtable for NoBody, declared but defined nowhere",
                               "define every virtual function of the class"], "")]:
            reply, msgs = execute(kc, code, timeout=60)
            text = "\n".join(reply.get("traceback", []))
            check(reply["status"] == "error" and reply.get("ename") == ename
                  and all(x in text for x in said) and stream_text(msgs, "stdout") == out
                  and "Restart" not in text,
                  "a cell using what no cell defines (%s): %s, naming it, and the cell prints %r"
                  % (code.split("\n")[0], ename, out), [reply, msgs])
            reply, msgs = execute(kc, "std::cout << kept << std::endl;", timeout=60)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n",
                  "after it the next cell runs and sees the earlier variable", [reply, msgs])
        reply, msgs = execute(kc, "int later_fn(int x) { return x * 10; }\n"
                                  "std::cout << calls_later(4) << std::endl;", timeout=60)
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "41\n",
              "the prototype's body in a later cell: the earlier caller reaches it in that very "
              "cell (41)", [reply, msgs])
        reply, msgs = execute(kc, "std::cout << calls_later(5) << std::endl;", timeout=60)
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "51\n",
              "and in the cells after it (51)", [reply, msgs])

        # the same with templates: clang instantiates a use where it is made, and an earlier
        # cell's use of a template declared there had no body to instantiate. The body's cell
        # now compiles those uses: a function template, a class template's member defined out
        # of its class, a member template, a variable template; a body that does not compile
        # for the earlier cell's types is that cell's compile error, and changes nothing
        reply, msgs = execute(kc, "#include <string>\n"
                                  "template <class T> T tw(T);\n"
                                  "int use_tw(int x) { return tw(x) + 1; }\n"
                                  "double use_tw_d(double x) { return tw(x); }\n"
                                  "template <class T> struct Later { T v; T get() const; };\n"
                                  "int use_later() { return Later<int>{4}.get(); }\n"
                                  "struct WithMember { template <class T> T id(T); };\n"
                                  "int use_member() { return WithMember{}.id(7); }\n"
                                  "template <class T> struct Convert { template <class U> U to(U); };\n"
                                  "int use_convert() { return Convert<int>{}.to(3); }\n"
                                  "template <class T> struct Shared { static int count; };\n"
                                  "int use_shared() { return ++Shared<int>::count; }\n"
                                  "template <class T> extern T scale_v;\n"
                                  "double use_scale() { return scale_v<double> * 2 + scale_v<int>; }\n"
                                  "template <class T> T bad_for_strings(T);\n"
                                  "std::string use_bad() { return bad_for_strings(std::string(\"a\")); }")
        # (clang's -Wundefined-var-template is off: a later cell may define Shared<T>::count)
        check("no definition is available" not in stream_text(msgs, "stderr"),
              "a class template's static member used before its definition: no warning", msgs)
        for code, out, what in [
                ("template <class T> T tw(T x) { return 2 * x; }\n"
                 "std::cout << use_tw(3) << ' ' << use_tw_d(1.25) << std::endl;", "7 2.5\n",
                 "a function template's body: the earlier cell's uses of tw<int> and "
                 "tw<double> run it in that very cell"),
                ("std::cout << use_tw(4) << ' ' << tw(5) << std::endl;", "9 10\n",
                 "and in the cells after it, and a new use of tw<int> finds the same code"),
                ("template <class T> T Later<T>::get() const { return v + v; }\n"
                 "std::cout << use_later() << std::endl;", "8\n",
                 "a class template's member defined out of its class, in a later cell"),
                ("template <class T> T WithMember::id(T x) { return x + 1; }\n"
                 "std::cout << use_member() << std::endl;", "8\n",
                 "a member template defined out of its class, in a later cell"),
                ("template <class T> template <class U> U Convert<T>::to(U u) { return u + 1; }\n"
                 "std::cout << use_convert() << std::endl;", "4\n",
                 "a class template's member template defined out of its class, in a later cell"),
                ("template <class T> int Shared<T>::count = 40;\n"
                 "std::cout << use_shared() << ' ' << Shared<int>::count << std::endl;", "41 41\n",
                 "a class template's static data member defined in a later cell"),
                ("template <class T> T scale_v = T(2.75);\n"
                 "std::cout << use_scale() << ' ' << scale_v<float> << std::endl;", "7.5 2.75\n",
                 "a variable template defined in a later cell: the earlier cell's scale_v<double> "
                 "and scale_v<int>")]:
            reply, msgs = execute(kc, code, timeout=60)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == out,
                  "%s (%r)" % (what, out), [reply, msgs])
        reply, msgs = execute(kc, "template <class T> T bad_for_strings(T x) { return x * 2; }\n"
                                  "std::cout << \"ran\";", timeout=60)
        text = "\n".join(reply.get("traceback", []))
        check(reply["status"] == "error" and reply.get("ename") == "CompileError"
              and "invalid operands to binary expression" in text
              and "requested here" in text and "an earlier cell used while it had none" in text
              and stream_text(msgs, "stdout") == "",
              "a template's body that does not compile for an earlier cell's use: a CompileError "
              "that says so, and the cell does not run", [reply, msgs])
        reply, msgs = execute(kc, "template <class T> T bad_for_strings(T x) { return x + x; }\n"
                                  "std::cout << use_bad() << std::endl;", timeout=60)
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "aa\n",
              "the body fixed, the earlier cell's use of it runs (aa)", [reply, msgs])

        # a class's static data member declared in its class and used in that cell, and defined
        # in a later cell (as a .hpp and its .cpp); a variable declared extern, defined later
        reply, msgs = execute(kc, "#include <string>\n"
                                  "struct Tally { static int total; static std::string label; };\n"
                                  "int bump_tally() { return ++Tally::total; }\n"
                                  "std::string tally_label() { return Tally::label + \"!\"; }\n"
                                  "extern double later_values[3];\n"
                                  "double later_sum() { return later_values[0] + later_values[2]; }")
        check(reply["status"] == "ok", "a class with static data members, functions that use "
              "them, and an extern array: the cell runs before they are defined", [reply, msgs])
        for code, ename, out in [
                ("std::cout << bump_tally() << std::endl;", "VariableNotDefined", ""),
                ("int Tally::total = 10;\nstd::cout << bump_tally() << std::endl;", None, "11\n"),
                ("std::cout << bump_tally() << std::endl;", None, "12\n"),
                ("std::cout << tally_label() << std::endl;", "VariableNotDefined", ""),
                ("std::string Tally::label = \"count\";\nstd::cout << tally_label() << std::endl;",
                 None, "count!\n"),
                ("double later_values[3] = {1.5, 2, 3};\nstd::cout << later_sum() << std::endl;",
                 None, "4.5\n")]:
            reply, msgs = execute(kc, code)
            text = "\n".join(reply.get("traceback", []))
            ok = (reply["status"] == "ok" if ename is None else
                  reply.get("ename") == ename and "was used, but no cell has defined it" in text
                  and ("Tally::total" in text or "Tally::label" in text))
            check(ok and stream_text(msgs, "stdout") == out,
                  "%s: %s" % (code.replace("\n", " "), ename or repr(out)), [reply, msgs])
        # the cells that define members, run again: a cell run twice is the normal case. A
        # static data member's definition assigns its value; a member function or constant
        # defined as before is kept; a function whose body changed keeps the advice above
        execute(kc, "struct Meter { static const int unit; int read() const; };")
        execute(kc, "const int Meter::unit = 2;\nint Meter::read() const { return unit * Tally::total; }")
        for code, out, note in [
                ("int Tally::total = 10;\nstd::cout << bump_tally() << std::endl;", "11\n",
                 "this cell assigned Tally::total the value its definition gives, which every cell sees."),
                ("int Tally::total = 20;\nstd::string Tally::label = \"sum\";\n"
                 "std::cout << bump_tally() << tally_label() << std::endl;", "21sum!\n",
                 "this cell assigned Tally::total and Tally::label the values their definitions "
                 "give, which every cell sees."),
                ("const int Meter::unit = 2;\n// the same, other blanks\nint Meter::read()  const {\n"
                 "  return unit * Tally::total; }\nstd::cout << Meter{}.read() << std::endl;", "42\n",
                 "Meter::unit and Meter::read are the same as before, and kept.")]:
            reply, msgs = execute(kc, code)
            check(reply["status"] == "ok" and stream_text(msgs, "stdout") == out
                  and "An earlier cell defined these members" in stream_text(msgs, "stderr")
                  and note in stream_text(msgs, "stderr"),
                  "a cell defining class members run again: %r, and says %r" % (out, note), [reply, msgs])
        reply, msgs = execute(kc, "const int Meter::unit = 3;")
        text = "\n".join(reply.get("traceback", []))
        check(reply["status"] == "error" and "Meter::unit was defined by an earlier cell" in text,
              "a constant member defined again with a new value: the advice to run the class's "
              "cell again", [reply, msgs])
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

    # atexit in a cell (glibc keeps it in libc_nonshared.a: a cell calling it did not link): the
    # function runs when the kernel shuts down, and the cell says so; so do the destructors of
    # the cells' globals (the kernel ends with std::exit, which ran neither)
    done = "/tmp/xenc_kernel_atexit_%d" % os.getpid()
    destroyed = "/tmp/xenc_kernel_destructor_%d" % os.getpid()
    for f in (done, destroyed):
        if os.path.exists(f):
            os.remove(f)
    km, kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=STARTUP_TIMEOUT, env=env)
    try:
        reply, msgs = execute(kc, "#include <cstdio>\n#include <cstdlib>\n"
                                  "std::atexit([] { std::FILE* f = std::fopen(\"%s\", \"w\"); "
                                  "std::fputs(\"ran\", f); std::fclose(f); });\n"
                                  "std::puts(\"registered\");" % done, timeout=60)
        check(reply["status"] == "ok" and stream_text(msgs, "stdout") == "registered\n"
              and "runs when the kernel shuts down" in stream_text(msgs, "stderr")
              and not os.path.exists(done),
              "atexit in a cell links, says when its function runs, and does not run it at the "
              "cell's end", [reply, msgs])
        reply, msgs = execute(kc, "struct LastWords { ~LastWords() { std::fclose(std::fopen(\"%s\", "
                                  "\"w\")); } };\nLastWords last_words;" % destroyed, timeout=60)
        check(reply["status"] == "ok" and not os.path.exists(destroyed),
              "a global with a destructor, defined in a cell", [reply, msgs])
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    check(os.path.exists(done) and open(done).read() == "ran",
          "the atexit function ran when the kernel shut down", done)
    check(os.path.exists(destroyed), "the global's destructor ran when the kernel shut down",
          destroyed)
    for f in (done, destroyed):
        if os.path.exists(f):
            os.remove(f)
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
