#!/usr/bin/env python3
"""Test of `make demo`'s script, examples/demo.sh, and so of the token
minting of examples/dev_token.sh it uses.

    demo_test.py SOURCE-DIR BUILD-DIR [--inspector]

`make demo PORT=N` hands N to demo.sh (8080 without it). Runs demo.sh on a free loopback port against this build (in a scratch
folder whose examples/ is the build's), then pastes the curl command it
prints: with its token the tools are listed (200), without it the server
answers 401 with a challenge naming the protected resource metadata. A
token minted with notes:read only is refused add_note with 403
insufficient_scope. The printed Inspector command names the same URL and
token, and pins the Inspector and the Node.js it runs on to exact versions
(an unpinned npx picks, on the system's Node.js 20, an Inspector that
crashes). With --inspector (which needs the npm registry) that command is
run as printed, in the Inspector's CLI mode, and must list the tools. Ctrl-C (SIGINT to the process group) stops the server with status 0.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def fail(msg):
    print("FAIL: demo: " + msg, file=sys.stderr)
    sys.exit(1)


def sh(cmd, cwd, timeout=120):
    p = subprocess.run(["bash", "-c", "set -euo pipefail\n" + cmd], cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout


def check_make_port(src):
    """`make demo` passes PORT (default 8080) to demo.sh: checked with
    make -n, which runs none of the recipe."""
    # Not the flags and variables of a make this test may run under (make
    # check PORT=...).
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PORT")}
    for args, port in (([], "8080"), (["PORT=18123"], "18123")):
        p = subprocess.run(["make", "-n", "-C", src, "demo"] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=60, env=env)
        want = "bash examples/demo.sh build " + port
        if p.returncode != 0 or want not in p.stdout.splitlines():
            fail("make -n demo %s does not run '%s':\n%s" % (
                " ".join(args), want, p.stdout))


def check_inspector_line(line, url, token):
    """The Inspector command: npx with both packages at exact versions."""
    pins = re.findall(r" -p (\S+)", line)
    names = {}
    for pin in pins:
        m = re.fullmatch(r"(@?[^@\s]+)@(\d+\.\d+\.\d+)", pin)
        if not m:
            fail("the Inspector command has an unpinned package %r:\n%s" % (
                pin, line))
        names[m.group(1)] = m.group(2)
    if set(names) != {"@modelcontextprotocol/inspector", "node"}:
        fail("the Inspector command must pin the Inspector and node:\n" + line)
    if int(names["node"].split(".")[0]) < 22:
        fail("the Inspector needs Node.js 22.19 or newer:\n" + line)
    if not line.startswith("npx -y ") or " mcp-inspector --server-url " + \
            url + " " not in line or token not in line:
        fail("the Inspector command lacks the URL or the token:\n" + line)


def run_inspector(line, work):
    """The printed command in the Inspector's CLI mode: lists the tools."""
    cli = line.replace(" mcp-inspector ", " mcp-inspector --cli ", 1) + \
        " --method tools/list"
    rc, out = sh(cli, work, timeout=600)
    if rc != 0 or '"name": "delete_note"' not in out:
        fail("the printed Inspector command, in CLI mode: %d\n%s" % (rc, out))


def main():
    src, build = sys.argv[1], os.path.abspath(sys.argv[2])
    inspector_run = sys.argv[3:] == ["--inspector"]
    check_make_port(src)
    work = tempfile.mkdtemp(prefix="libmcp-demo-")
    os.symlink(os.path.join(build, "examples"), os.path.join(work, "examples"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = os.path.join(work, "demo.log")
    with open(log, "w") as out:
        proc = subprocess.Popen(
            ["bash", os.path.join(src, "examples", "demo.sh"), work,
             str(port)], stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        text = ""
        while "listening on" not in text:
            if proc.poll() is not None or time.monotonic() > deadline:
                fail("did not start:\n" + text)
            time.sleep(0.05)
            with open(log) as f:
                text = f.read()
        url = "http://127.0.0.1:%d/mcp" % port
        curl = [l for l in text.splitlines() if l.startswith("curl ")]
        inspector = [l for l in text.splitlines()
                     if l.startswith("npx ") and " mcp-inspector " in l]
        token = open(os.path.join(work, "demo", "token")).read().strip()
        if len(curl) != 1 or len(inspector) != 1:
            fail("expected one curl and one Inspector line:\n" + text)
        if url not in curl[0]:
            fail("the printed curl command lacks the URL:\n" + text)
        check_inspector_line(inspector[0], url, token)
        if inspector_run:
            run_inspector(inspector[0], work)
        rc, out = sh(curl[0], work)
        if rc != 0 or '"name":"delete_note"' not in out:
            fail("the printed curl command: %d\n%s" % (rc, out))
        unauth = re.sub(r' -H "Authorization: Bearer [^"]*"', "", curl[0])
        rc, out = sh(unauth + " -i", work)
        if " 401 " not in out or "resource_metadata=" not in out:
            fail("without the token:\n" + out)
        rc, reader = sh(
            "%s token %s/demo https://auth.dev.invalid %s notes:read" % (
                os.path.join(src, "examples", "dev_token.sh"), work, url),
            work)
        if rc != 0:
            fail("dev_token.sh token: " + reader)
        add = (curl[0].replace("Mcp-Method: tools/list",
                               "Mcp-Method: tools/call' -H 'Mcp-Name: "
                               "add_note")
               .replace(token, reader.strip())
               .replace('"method":"tools/list","params":{',
                        '"method":"tools/call","params":{"name":"add_note",'
                        '"arguments":{"title":"t","text":"x"},'))
        rc, out = sh(add + " -i", work)
        if " 403 " not in out or 'error="insufficient_scope"' not in out \
                or "notes:write" not in out:
            fail("add_note with notes:read only:\n" + out)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            fail("Ctrl-C did not stop the server")
    if rc != 0:
        with open(log) as f:
            fail("exit status %d after Ctrl-C:\n%s" % (rc, f.read()))
    shutil.rmtree(work, ignore_errors=True)
    print("PASS: demo (port %d)" % port)


if __name__ == "__main__":
    main()
