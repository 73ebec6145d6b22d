#!/usr/bin/python3
"""Checks a running `jupyter notebook` server as a student's browser would use it, then exits:

    jupyter_check.py SERVER_PID [--kernel xenc-cpp17] [--timeout 120]

1. finds the server started as process SERVER_PID (`jupyter notebook list --json`) and prints its
   URL (with the token, as Jupyter prints it);
2. that URL answers (HTTP 200, the file browser);
3. the server lists the kernelspec (GET /api/kernelspecs);
4. a kernel of it starts (POST /api/kernels) and, over the websocket the notebook page uses, runs
   a cell that includes the notebooks' setup header and prints 6 * 7: the reply is "ok" and "42"
   arrives as a stream message before the kernel's idle status; then the kernel is shut down
   (DELETE).
Each step prints a line; exit 1 at the first that fails. Used by `scripts/notebooks.sh --check`.
"""
import argparse
import json
import subprocess
import sys
import time
import urllib.request
import uuid

from tornado import ioloop, websocket


def fail(what):
    print("FAIL " + what)
    sys.exit(1)


def find_server(pid, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        listed = subprocess.run(["jupyter", "notebook", "list", "--json"], capture_output=True, text=True)
        for line in listed.stdout.splitlines():
            server = json.loads(line)
            if server.get("pid") == pid:
                return server
        time.sleep(0.5)
    fail("no jupyter notebook server with process id %d after %d s" % (pid, timeout))


def request(server, method, path, body=None):
    req = urllib.request.Request(server["url"].rstrip("/") + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": "token " + server["token"]})
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read().decode()
        return r.status, json.loads(text) if text and r.headers.get_content_type() == "application/json" else text


def run_cell(server, kernel_id, code, timeout):
    """Sends one execute_request over the kernel's websocket; returns (reply status, stdout, the
    message types seen, in order)."""
    url = server["url"].replace("http", "ws", 1).rstrip("/") + \
        "/api/kernels/%s/channels?token=%s" % (kernel_id, server["token"])
    session = uuid.uuid4().hex
    seen = []

    def send(ws, msg_type, content):
        msg_id = uuid.uuid4().hex
        ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "session": session, "username": "check",
                       "msg_type": msg_type, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": content}))
        return msg_id

    async def until_done(ws, msg_id, reply_type):
        """Reads the websocket until the request msg_id has its reply and its idle status. The
        reply comes on the shell channel and the output on IOPub: Jupyter forwards both over
        this one websocket in no set order, so printed text may arrive after the reply; on IOPub
        it comes before the idle status."""
        out, status, idle = "", None, False
        while status is None or not idle:
            text = await ws.read_message()
            if text is None:
                break
            msg = json.loads(text)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            seen.append(msg["msg_type"])
            if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
                out += msg["content"]["text"]
            elif msg["msg_type"] == reply_type:
                status = msg["content"]["status"]
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
        return status, out

    async def exchange():
        ws = await websocket.websocket_connect(url)
        # First a kernel_info request, as a notebook page sends: its idle status proves that this
        # websocket's IOPub subscription is live (Jupyter skips its own check, the "nudge", when
        # it thinks the new kernel is busy), so the cell's output cannot be lost to ZeroMQ's
        # slow joiner.
        await until_done(ws, send(ws, "kernel_info_request", {}), "kernel_info_reply")
        seen.clear()
        status, out = await until_done(ws, send(ws, "execute_request", {
            "code": code, "silent": False, "store_history": True, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": True}), "execute_reply")
        ws.close()
        return status, out

    try:
        status, out = ioloop.IOLoop.current().run_sync(exchange, timeout=timeout)
    except TimeoutError:
        fail("no reply and idle status within %d s; the cell's messages so far: %s" % (timeout, seen))
    return status, out, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pid", type=int)
    ap.add_argument("--kernel", default="xenc-cpp17")
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()

    server = find_server(args.pid, args.timeout)
    url = "%s?token=%s" % (server["url"], server["token"])
    print("Jupyter is serving %s at %s" % (server["notebook_dir"], url))
    with urllib.request.urlopen(url, timeout=30) as r:
        if r.status != 200:
            fail("%s answered HTTP %d" % (url, r.status))
    print("PASS the URL answers (HTTP 200)")

    _, specs = request(server, "GET", "/api/kernelspecs")
    if args.kernel not in specs["kernelspecs"]:
        fail("Jupyter does not list the kernelspec %s (it lists %s)" % (args.kernel, sorted(specs["kernelspecs"])))
    spec = specs["kernelspecs"][args.kernel]["spec"]
    print("PASS Jupyter lists the kernelspec %s (\"%s\", %s)" % (args.kernel, spec["display_name"], spec["argv"][0]))

    _, kernel = request(server, "POST", "/api/kernels", {"name": args.kernel})
    try:
        started = time.time()
        status, out, seen = run_cell(server, kernel["id"],
                               '#include "xenc/xenc_cling.hpp"\n#include <cstdio>\nstd::printf("%d\\n", 6 * 7);',
                               args.timeout)
        if status != "ok" or "42" not in out:
            fail("the kernel ran the cell with status %s and printed %r (messages: %s)" % (status, out, seen))
        print("PASS a %s kernel started by Jupyter ran the setup header and printed 42 (%.1f s)"
              % (args.kernel, time.time() - started))
    finally:
        request(server, "DELETE", "/api/kernels/" + kernel["id"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
