#!/usr/bin/env python3
"""interop.multihost: a notes cluster on Redis as several machines, with
faults, driven by the official TypeScript SDK client (multihost.mjs).

  multihost.py NOTES NODE MULTIHOST_MJS REDIS_SERVER REDIS_CLI NGINX

Needs root and iproute2's `ip`; without them it fails, saying so (it never
passes without having run). Each "machine" is a network namespace of this
run's own, named mcpmh<pid>-<host>, so two runs never meet:

                     front 10.213.F.0/24 (bridge brf)
      client .3 ---+--- nginx .2 ---+--- n1 .11   n2 .12   n3 .13
                   |                |      |        |        |
                   +----------------+------+--------+--------+
                                           |        |        |
                     back 10.213.B.0/24 (bridge brb)         |
      redis .2 ----------------------------+--------+--------+

Both bridges live in a seventh namespace, the switch (mcpmh<pid>-sw). Every
host's interface ("front", "back") is one end of a veth pair whose other end
(f-HOST, b-HOST) is a port of a bridge in the switch; the pairs are created
straight inside the namespaces, so nothing is added to the machine's own
network, and deleting the namespaces deletes every link. F and B are the
first pair of /24s in 10.213.0.0/16 that no address or route of the
machine's own namespace overlaps. Loopback is up in each namespace.

  - redis: redis-server on 10.213.B.2:6379, AOF with appendfsync always in a
    folder of this run's (so a write Redis acknowledged survives the
    restart the client asks for), no RDB snapshots; ready when it answers PING
    (redis-cli, run from n1's namespace, so over the back network).
  - n1, n2, n3: `notes --http 10.213.F.1K:8080 --node-id nK --state-key KEY
    --redis redis://10.213.B.2:6379/0 --node-lease 1500 --rate-limit
    LIMIT`, one shared state key, ready at their "listening on" line.
    Each answers for the tasks the others run (their records in Redis);
    the short lease has a killed node's tasks failed within 1.5 s of its
    last renewal, so the check of that is quick. For the rate-limit check
    LIMIT is 6/3600, with `--scopes "notes:read notes:write"`: every HTTP
    caller is then the subject "http", one principal, its budget one
    bucket in Redis. Then the nodes are restarted with 100000/3600 and no
    --scopes: each 2026-07-28 request is an anonymous caller of its own
    (mcp_server_set_rate_limit), never refused, but every call still takes
    its token through the library's Redis store, faults and all. (Not the
    subject "http" again: its bucket, drained by the first check, keeps
    its level under the new limit and refills at about 28 a second.)
  - nginx: on 10.213.F.2:80, plain HTTP, /mcp proxied round-robin to the
    three nodes (max_fails=1 fail_timeout=5s, proxy_next_upstream error
    timeout, as examples/deploy/cluster.sh); a legacy session's requests
    to the node its id names, with the next node as backup (nK's is
    n(K mod 3 + 1)), as cluster.sh --redis; and on 10.213.F.2:808K to nK
    alone; an access log naming the port and the upstream(s) each request
    went to. It sends "Host: localhost": a node without a token verifier
    takes only loopback Host names (DNS-rebinding protection), and notes
    has no flag to list others, so the client reaches one given node
    through its 808K port rather than at 10.213.F.1K:8080.
  - client: node multihost.mjs, the SDK v2 client pinned to 2026-07-28,
    through nginx's round-robin port or its port for one node.

multihost.mjs asks this harness for each fault with a line "@@ JSON" on its
standard output and reads the answer as one JSON line on its standard input:
restart the nodes with another limit (SIGTERM, each must exit 0), kill -9 a node, kill -9 Redis and start it again, take a node's back
link down (the switch's end: its cable pulled) and up, which nodes are
alive, nginx's access log. What it checks is in its header.

Not covered yet (issue 33 item 5 in notes): session adoption.

Every wait is bounded; the whole run is bounded by DEADLINE_S. Whatever
exits this (a failure, an exception, SIGTERM, SIGINT, the deadline), every
process it started is stopped and every namespace deleted; its children
are killed by the kernel if this process dies (PR_SET_PDEATHSIG), and
namespaces left by a run that was killed outright (its pid gone) are
deleted by the next run.
"""

import ctypes
import glob
import ipaddress
import json
import os
import re
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

DEADLINE_S = 170  # the ctest TIMEOUT is 240
PREFIX = "mcpmh"
LIMIT = "6/3600"
LEASE_MS = 1500  # --node-lease: a killed node's tasks fail soon after
HOSTS_FRONT = {"nginx": 2, "client": 3, "n1": 11, "n2": 12, "n3": 13}
HOSTS_BACK = {"redis": 2, "n1": 11, "n2": 12, "n3": 13}
NODES = ("n1", "n2", "n3")
PORT = 8080

start = time.monotonic()
tag = f"{PREFIX}{os.getpid()}"
namespaces = []  # created, to delete
procs = {}  # name -> Popen
work = None  # this run's folder
failed = False


def log(msg):
    print(f"# [multihost {time.monotonic() - start:6.2f}s] {msg}", flush=True)


class Fatal(Exception):
    pass


def left():
    return DEADLINE_S - (time.monotonic() - start)


def run(*args, check=True, timeout=15):
    r = subprocess.run(list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True,
                       timeout=min(timeout, max(left(), 1)))
    if check and r.returncode != 0:
        raise Fatal(f"{' '.join(args)}: status {r.returncode}: "
                    f"{r.stderr.strip()}")
    return r


def ns(host):
    return f"{tag}-{host}"


_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    _libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def spawn(name, host, argv, **kw):
    """Starts argv in host's namespace (ip netns exec execs it: the pid is
    the program's), killed by the kernel if this harness dies."""
    p = subprocess.Popen(["ip", "netns", "exec", ns(host), *argv],
                         preexec_fn=_die_with_parent, **kw)
    procs[name] = p
    return p


def stop(name, sig=signal.SIGTERM, wait=10):
    """Signals name's process and waits (bounded) for its exit; returns the
    exit status (negative: the signal), or None if it had to be killed."""
    p = procs.get(name)
    if p is None:
        return None
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=5)
            return None
    return p.returncode


# ---- preconditions and addresses -------------------------------------------

def preconditions(tools):
    if os.geteuid() != 0:
        raise Fatal("needs root: it builds network namespaces, veth pairs "
                    "and bridges (run the interop tests as root, as CI does)")
    for t in ["ip", *tools]:
        if shutil.which(t) is None and not os.access(t, os.X_OK):
            raise Fatal(f"needs {t}, which is not installed here")


def pick_subnets():
    """The first pair of /24s 10.213.N.0 and 10.213.N+1.0 (N even) that no
    address or route of this machine's own namespace overlaps."""
    used = []
    out = run("ip", "-4", "-o", "addr", "show").stdout + \
        run("ip", "-4", "route", "show", "table", "all").stdout
    for m in re.finditer(r"\b(\d+\.\d+\.\d+\.\d+(?:/\d+)?)", out):
        try:
            used.append(ipaddress.ip_network(m.group(1), strict=False))
        except ValueError:
            pass
    used = [u for u in used if u.prefixlen > 0]
    for n in range(0, 254, 2):
        pair = [ipaddress.ip_network(f"10.213.{n + k}.0/24") for k in (0, 1)]
        if not any(p.overlaps(u) for p in pair for u in used):
            return n, n + 1
    raise Fatal("no two free /24s in 10.213.0.0/16 here")


def delete_namespace(space):
    """Kills what still runs in space (an nginx worker outlives its master
    by a moment), then deletes it. Returns ip's status."""
    for _ in range(20):
        pids = run("ip", "netns", "pids", space, check=False).stdout.split()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        time.sleep(0.05)
    return run("ip", "netns", "delete", space, check=False)


def clean_stale():
    """Deletes the namespaces and folders of earlier runs whose process is
    gone (killed outright: no cleanup of their own ran)."""
    r = run("ip", "netns", "list", check=False)
    for line in r.stdout.splitlines():
        m = re.match(rf"({PREFIX}(\d+)-\S+)", line)
        if m and not os.path.exists(f"/proc/{m.group(2)}"):
            log(f"deleting {m.group(1)}, left by a run that is gone")
            delete_namespace(m.group(1))
    for old in glob.glob(os.path.join(tempfile.gettempdir(),
                                      "libmcp-multihost-*")):
        m = re.match(r"libmcp-multihost-(\d+)-", os.path.basename(old))
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            shutil.rmtree(old, ignore_errors=True)


# ---- the network -----------------------------------------------------------

def build_network(f, b):
    for host in ("sw", "redis", *NODES, "nginx", "client"):
        run("ip", "netns", "add", ns(host))
        namespaces.append(ns(host))
        run("ip", "-n", ns(host), "link", "set", "lo", "up")
    sw = ns("sw")
    for br in ("brf", "brb"):
        run("ip", "-n", sw, "link", "add", br, "type", "bridge")
        run("ip", "-n", sw, "link", "set", br, "up")
    for side, net, hosts, br in (("front", f, HOSTS_FRONT, "brf"),
                                 ("back", b, HOSTS_BACK, "brb")):
        for host, last in hosts.items():
            port = f"{side[0]}-{host}"
            run("ip", "-n", sw, "link", "add", port, "type", "veth", "peer",
                "name", side, "netns", ns(host))
            run("ip", "-n", sw, "link", "set", port, "master", br, "up")
            run("ip", "-n", ns(host), "addr", "add", f"10.213.{net}.{last}/24",
                "dev", side)
            run("ip", "-n", ns(host), "link", "set", side, "up")


# ---- the programs ----------------------------------------------------------

class Cluster:
    def __init__(self, args, f, b):
        self.notes, self.node, self.mjs, self.redis_server, self.redis_cli, \
            self.nginx = args
        self.f, self.b = f, b
        self.redis_addr = f"10.213.{b}.2"
        self.key = os.path.join(work, "state.key")
        with open(self.key, "wb") as fh:
            fh.write(secrets.token_bytes(48))

    def nginx_addr(self):
        return f"10.213.{self.f}.2"

    @staticmethod
    def node_port(node):
        return 8080 + int(node[1:])

    def addr(self, node):
        return f"10.213.{self.f}.{HOSTS_FRONT[node]}"

    def start_redis(self):
        d = os.path.join(work, "redis")
        os.makedirs(d, exist_ok=True)
        spawn("redis", "redis", [
            self.redis_server, "--bind", self.redis_addr, "--port", "6379",
            "--protected-mode", "no", "--save", "", "--appendonly", "yes",
            "--appendfsync", "always", "--dir", d, "--logfile",
            os.path.join(d, "redis.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        for _ in range(200):  # 10 s
            if procs["redis"].poll() is not None:
                raise Fatal(f"redis-server exited ({procs['redis'].returncode}); "
                            + tail(os.path.join(d, "redis.log")))
            r = run("ip", "netns", "exec", ns("n1"), self.redis_cli, "-h",
                    self.redis_addr, "-p", "6379", "ping", check=False,
                    timeout=5)
            if r.stdout.strip() == "PONG":
                return
            time.sleep(0.05)
        raise Fatal("redis-server did not answer PING within 10 s")

    def start_node(self, node, limit, one_subject):
        logf = os.path.join(work, f"{node}.log")
        if not re.fullmatch(r"\d+/\d+", limit):
            raise Fatal(f"a limit N/SECONDS, not {limit!r}")
        who = ["--scopes", "notes:read notes:write"] if one_subject else []
        with open(logf, "a") as err:
            err.write(f"---- start (--rate-limit {limit} {who})\n")
            err.flush()
            pos = err.tell()
            spawn(node, node, [
                self.notes, "--http", f"{self.addr(node)}:{PORT}", "--node-id",
                node, "--state-key", self.key, "--redis",
                f"redis://{self.redis_addr}:6379/0", "--node-lease",
                str(LEASE_MS), *who, "--rate-limit", limit],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=err)
        want = f"listening on http://{self.addr(node)}:{PORT}/mcp"
        for _ in range(300):  # 15 s
            with open(logf) as fh:
                fh.seek(pos)
                if want in fh.read():
                    return
            if procs[node].poll() is not None:
                raise Fatal(f"{node} exited ({procs[node].returncode}) before "
                            f"listening: {tail(logf)}")
            time.sleep(0.05)
        raise Fatal(f"{node}: no '{want}' within 15 s")

    def start_nginx(self):
        d = os.path.join(work, "nginx")
        os.makedirs(os.path.join(d, "tmp"))
        shutil.chown(os.path.join(d, "tmp"), "nobody")
        servers = "".join(
            f"    server {self.addr(n)}:{PORT} max_fails=1 fail_timeout=5s;\n"
            for n in NODES)
        # The nodes (plain HTTP, no token verifier) accept only loopback
        # Host names (DNS-rebinding protection, mcp_http_options): the
        # proxy says "localhost".
        proxy = """      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host localhost;
      proxy_buffering off;
      proxy_connect_timeout 2s;
      proxy_read_timeout 60s;"""
        one = "".join(f"""  server {{
    listen {self.nginx_addr()}:{self.node_port(n)};
    location = /mcp {{
      proxy_pass http://{self.addr(n)}:{PORT};
{proxy}
    }}
  }}
""" for n in NODES)
        # A legacy session goes to the node its id names; when that node
        # refuses the connection (it is down), to the next one (n3's:
        # n1), which adopts the session from Redis, as cluster.sh --redis
        # routes it.
        names = list(NODES)
        owners = "".join(f'    "~^{n}\\." node_{n};\n' for n in names)
        upstreams = "".join(
            f"  upstream node_{n} {{\n"
            f"    server {self.addr(n)}:{PORT} max_fails=1 fail_timeout=5s;\n"
            f"    server {self.addr(names[(i + 1) % len(names)])}:{PORT} "
            f"backup;\n    keepalive 8;\n  }}\n"
            for i, n in enumerate(names))
        conf = f"""daemon off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  log_format mh '$server_port $status $upstream_addr "$http_mcp_method"';
  access_log {d}/access.log mh;
  client_body_temp_path {d}/tmp/body;
  proxy_temp_path {d}/tmp/proxy;
  fastcgi_temp_path {d}/tmp/fastcgi;
  uwsgi_temp_path {d}/tmp/uwsgi;
  scgi_temp_path {d}/tmp/scgi;
  client_body_buffer_size 1m;
  upstream notes_any {{
{servers}    keepalive 16;
  }}
{upstreams}  map $http_mcp_session_id $mcp_upstream {{
    default notes_any;
{owners}  }}
  server {{
    listen {self.nginx_addr()}:80;
    location = /mcp {{
      proxy_pass http://$mcp_upstream;
{proxy}
      proxy_next_upstream error timeout;
    }}
  }}
{one}}}
"""
        path = os.path.join(d, "nginx.conf")
        with open(path, "w") as fh:
            fh.write(conf)
        errlog = os.path.join(d, "error.log")
        r = run("ip", "netns", "exec", ns("nginx"), self.nginx, "-t", "-q",
                "-p", d, "-e", errlog, "-c", path, check=False)
        if r.returncode != 0:
            raise Fatal(f"nginx -t: {r.stderr.strip()} {tail(errlog)}")
        spawn("nginx", "nginx", [self.nginx, "-p", d, "-e", errlog, "-c", path],
              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL)
        # Ready when its listening socket is there (ss, in its namespace).
        for _ in range(200):  # 10 s
            if procs["nginx"].poll() is not None:
                raise Fatal(f"nginx exited: {tail(errlog)}")
            r = run("ip", "netns", "exec", ns("nginx"), "ss", "-Hltn",
                    f"src {self.nginx_addr()}", check=False)
            if len(r.stdout.strip().splitlines()) == 1 + len(NODES):
                return
            time.sleep(0.05)
        raise Fatal("nginx did not listen within 10 s")

    # ---- the faults multihost.mjs asks for ----

    def restart_nodes(self, limit, one_subject):
        exits = {n: stop(n) for n in NODES if procs.get(n)}
        for n in NODES:
            self.start_node(n, limit, one_subject)
        return {"exits": exits}

    def kill_node(self, node):
        return {"status": stop(node, signal.SIGKILL)}

    def alive(self):
        return {n: procs[n].poll() is None for n in NODES}

    def redis_kill(self):
        return {"status": stop("redis", signal.SIGKILL)}

    def redis_start(self):
        self.start_redis()
        return {}

    def link(self, node, up):
        run("ip", "-n", ns("sw"), "link", "set", f"b-{node}",
            "up" if up else "down")
        return {}

    def access_log(self):
        with open(os.path.join(work, "nginx", "access.log")) as fh:
            return {"lines": fh.read().splitlines()}

    def serve(self, req):
        op = req.get("op")
        if op == "restart_nodes":
            return self.restart_nodes(str(req.get("limit")),
                                      bool(req.get("one_subject")))
        if op == "kill_node":
            return self.kill_node(req["node"])
        if op == "alive":
            return self.alive()
        if op == "redis_kill":
            return self.redis_kill()
        if op == "redis_start":
            return self.redis_start()
        if op == "link":
            return self.link(req["node"], bool(req["up"]))
        if op == "access_log":
            return self.access_log()
        raise Fatal(f"unknown request {req!r}")

    def handle(self, p, line):
        """One line of multihost.mjs: passed on, or a request answered."""
        if not line.startswith("@@ "):
            print(line, flush=True)
            return
        req = json.loads(line[3:])
        log(f"asked: {req}")
        try:
            ans = {"ok": True, **self.serve(req)}
        except (Fatal, subprocess.TimeoutExpired) as e:
            ans = {"ok": False, "error": str(e)}
        if req.get("op") != "access_log":
            log(f"answer: {json.dumps(ans)[:300]}")
        p.stdin.write((json.dumps(ans) + "\n").encode())
        p.stdin.flush()

    def drive(self):
        """Runs multihost.mjs in the client namespace, answering its
        requests, until it exits (bounded by the deadline)."""
        env = dict(os.environ,
                   MH_NGINX=f"http://10.213.{self.f}.2/mcp",
                   MH_NODES=json.dumps({
                       n: {"url": f"http://{self.nginx_addr()}:"
                                  f"{self.node_port(n)}/mcp",
                           "addr": f"{self.addr(n)}:{PORT}"} for n in NODES}),
                   MH_LIMIT=LIMIT,
                   MH_LEASE_MS=str(LEASE_MS),
                   MH_BUDGET_MS=str(int(max(left() - 15, 10) * 1000)))
        p = spawn("client", "client", [self.node, self.mjs],
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                  cwd=os.path.dirname(self.mjs))
        fd = p.stdout.fileno()
        pending = b""
        while True:
            if left() <= 5:
                raise Fatal("multihost.mjs still running at the deadline")
            # Its raw descriptor, and lines split here: a buffered reader
            # would keep lines select() then never reports.
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            while b"\n" in pending:
                raw, pending = pending.split(b"\n", 1)
                self.handle(p, raw.decode("utf-8", "replace"))
        return p.wait(timeout=max(min(left(), 10), 1))


def tail(path, n=15):
    try:
        with open(path) as fh:
            return "\n".join(fh.read().splitlines()[-n:])
    except OSError as e:
        return str(e)


def teardown():
    global failed
    # The nodes first (each must exit 0 on SIGTERM, whatever happened to
    # Redis and its link), then nginx (SIGQUIT: graceful), then Redis.
    for n in NODES:
        p = procs.get(n)
        if p is None:
            continue
        if p.poll() is not None:
            continue  # the one the kill -9 check killed
        st = stop(n)
        if st != 0:
            failed = True
            print(f"FAIL: {n} exits 0 on SIGTERM at the end -- {st}")
        else:
            print(f"PASS: {n} exits 0 on SIGTERM at the end")
    stop("client", signal.SIGKILL, wait=5)
    stop("nginx", signal.SIGQUIT)
    stop("redis")
    for name, p in procs.items():
        if p.poll() is None:
            p.kill()
            p.wait(timeout=5)
    for space in reversed(namespaces):
        r = delete_namespace(space)
        if r.returncode != 0:
            print(f"# could not delete {space}: {r.stderr.strip()}")
            failed = True


def on_signal(signum, _frame):
    raise Fatal(f"signal {signum}")


def main():
    global work, failed
    if len(sys.argv) != 7:
        sys.exit("usage: multihost.py NOTES NODE MULTIHOST_MJS REDIS_SERVER "
                 "REDIS_CLI NGINX")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(DEADLINE_S + 20)  # if a wait ever outlives its bound
    status = 1
    try:
        preconditions([sys.argv[1], sys.argv[2], *sys.argv[4:]])
        clean_stale()
        work = tempfile.mkdtemp(prefix=f"libmcp-multihost-{os.getpid()}-")
        os.chmod(work, 0o711)  # nginx's workers (nobody) reach nginx/tmp
        f, b = pick_subnets()
        log(f"namespaces {tag}-*, front 10.213.{f}.0/24, back 10.213.{b}.0/24")
        build_network(f, b)
        c = Cluster(sys.argv[1:], f, b)
        c.start_redis()
        for n in NODES:
            c.start_node(n, LIMIT, one_subject=True)
        c.start_nginx()
        log("cluster up")
        status = c.drive()
        log(f"multihost.mjs exited {status}")
    except Fatal as e:
        print(f"FAIL: multihost -- {e}")
        status = 1
    except Exception as e:  # noqa: BLE001 - report, then clean up
        print(f"FAIL: multihost -- {type(e).__name__}: {e}")
        status = 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            teardown()
        finally:
            if work:
                if status != 0 or failed:
                    for n in (*NODES, "redis/redis", "nginx/error"):
                        print(f"# ---- {n}.log\n{tail(os.path.join(work, n + '.log'), 30)}")
                shutil.rmtree(work, ignore_errors=True)
    ok = status == 0 and not failed
    log(f"{'PASS' if ok else 'FAIL'} in {time.monotonic() - start:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
