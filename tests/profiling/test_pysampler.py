#!/usr/bin/python3
"""Tests rpcscope's Python sampler, resources/profiling/python/sitecustomize.py.

    /usr/bin/python3 tests/profiling/test_pysampler.py [-v]

Runs grpc_echo_server.py (beside this file) and small `python3 -c` programs with the sampler's directory first on
PYTHONPATH, as rpcscope does, and checks the protocol: DIR/on turns sampling on and its removal writes
DIR/<pid>.folded; the stacks' CPU goes where the CPU went (a handler's spin, not the threads that wait); nothing is
counted while DIR/on is absent; the file is written again at exit and on SIGTERM, after which the process still
dies of SIGTERM; without RPCSCOPE_PYPROFILE_DIR nothing is written; the next sitecustomize on sys.path is imported
once, and its errors do not stop the program; a forked child writes its own file; nothing is printed on stdout.
Needs Debian's python3-grpcio. Every wait is bounded; only 127.0.0.1 and port 0 are used. Exits 0 when all pass,
1 with the failures on stderr otherwise.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SAMPLER_DIR = os.path.join(REPO, "resources", "profiling", "python")
SERVER = os.path.join(HERE, "grpc_echo_server.py")
PYTHON = sys.executable or "/usr/bin/python3"
VERBOSE = "-v" in sys.argv[1:]
# The spin of a Burn call. grpcio's own work costs some 400-800 us of server CPU a call (and more while sampling), so
# a 200 us spin would be a third of the CPU at most; with 3 ms it is about 80 %, and the sampler, which undercounts
# code between GIL releases (see sitecustomize.py), still finds well over half.
BURN_US = 3000
WINDOW_CALLS = 800
FRAME = re.compile(r"^[^;]+ \([^;]*:\d+\)$")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def log(message):
    if VERBOSE:
        print("  " + message, file=sys.stderr)


def wait_for(predicate, timeout, what):
    end = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > end:
            raise Failure("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(0.02)


def base_env(pythonpath, profile_dir=None, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RPCSCOPE_PYPROFILE")}
    env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    env.pop("PYTHONSTARTUP", None)
    if profile_dir is not None:
        env["RPCSCOPE_PYPROFILE_DIR"] = profile_dir
    env.update(extra)
    return env


def process_cpu(pid):
    """The process's user + system CPU in seconds (/proc, clock ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    """grpc_echo_server.py in a child process; its stderr goes to a file shown when something fails."""

    def __init__(self, env, workdir, args=()):
        self.stderr_path = os.path.join(workdir, "server-%d.stderr" % id(self))
        self.stderr = open(self.stderr_path, "w+")
        self.proc = subprocess.Popen([PYTHON, SERVER] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env, cwd=workdir)
        self.pid = self.proc.pid
        line = self._first_line(15)
        check(line.strip().isdigit(), "the server's first stdout line is not a port: %r%s" % (line, self.tail()))
        self.port = int(line)
        self.channel = grpc.insecure_channel("127.0.0.1:%d" % self.port)
        self.methods = {name: self.channel.unary_unary("/rpcscope.test.Echo/" + name) for name in ("Burn", "Pre")}

    def _first_line(self, timeout):
        box = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline().decode()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not box:
            self.kill()
            raise Failure("the server printed no port within %d s%s" % (timeout, self.tail()))
        return box[0]

    def calls(self, method, count, in_flight=8):
        """Makes @p count calls, @p in_flight at a time; every reply must echo the request."""
        stub = self.methods[method]
        pending = []
        for i in range(count):
            payload = b"%d" % i
            pending.append((payload, stub.future(payload, timeout=20)))
            if len(pending) >= in_flight:
                self._reap(pending.pop(0))
        for item in pending:
            self._reap(item)

    def _reap(self, item):
        payload, future = item
        try:
            reply = future.result(timeout=30)
        except grpc.RpcError as exc:
            raise Failure("call failed: %s%s" % (exc, self.tail()))
        check(reply == payload, "reply %r to %r" % (reply, payload))

    def terminate(self, timeout=15):
        """SIGTERM, then the exit status (negative: the signal that ended it)."""
        self.channel.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure("the server did not end within %d s of SIGTERM%s" % (timeout, self.tail()))

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def tail(self):
        try:
            self.stderr.flush()
            with open(self.stderr_path) as f:
                text = f.read()[-2000:]
            return "\n--- server stderr ---\n" + text if text.strip() else ""
        except OSError:
            return ""


class Folded:
    """A DIR/<pid>.folded file, read and checked for form."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.inode = os.stat(path).st_ino
        self.header = {}
        self.stacks = []
        lines = self.text.splitlines()
        check(lines and lines[0] == "# rpcscope-pyprofile 1", "%s: first line %r" % (path, lines[:1]))
        for line in lines:
            if line.startswith("# "):
                key, _, value = line[2:].partition(" ")
                self.header[key] = value
                continue
            stack, _, weight = line.rpartition(" ")
            check(stack and weight.isdigit() and int(weight) > 0, "%s: bad stack line %r" % (path, line))
            for frame in stack.split(";"):
                check(FRAME.match(frame), "%s: bad frame %r in %r" % (path, frame, line))
            self.stacks.append((stack, int(weight)))
        for key in ("pid", "unit_ns", "window", "samples", "cpu_us", "sampler_cpu_us"):
            check(self.header.get(key, "").isdigit(), "%s: header %s missing or not a number: %r"
                  % (path, key, self.header.get(key)))
        check(self.header["unit_ns"] == "1000", "%s: unit_ns %s" % (path, self.header["unit_ns"]))
        weights = [w for _, w in self.stacks]
        check(weights == sorted(weights, reverse=True), "%s: stacks not heaviest first" % path)
        check(sum(weights) == self.cpu_us, "%s: the weights add up to %d, cpu_us is %d"
              % (path, sum(weights), self.cpu_us))
        check(len(set(s for s, _ in self.stacks)) == len(self.stacks), "%s: a stack appears twice" % path)

    def __getattr__(self, key):
        if key in ("pid", "window", "samples", "cpu_us", "sampler_cpu_us"):
            return int(self.header[key])
        raise AttributeError(key)

    def share(self, predicate):
        """The fraction of cpu_us on the stacks for which predicate(stack) holds."""
        return sum(w for s, w in self.stacks if predicate(s)) / max(self.cpu_us, 1)

    def summary(self, n=6):
        lines = ["%s %s" % (k, v) for k, v in self.header.items()]
        for stack, weight in self.stacks[:n]:
            frames = [f.split(" (")[0] for f in stack.split(";")]
            lines.append("%5.1f%% ...;%s" % (100.0 * weight / max(self.cpu_us, 1), ";".join(frames[-5:])))
        return "\n    ".join(lines)


def has_frame(name):
    return lambda stack: any(f.split(" (")[0].split(".")[-1] == name for f in stack.split(";"))


def write_on(directory, window):
    tmp = os.path.join(directory, "on.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % window)
    os.replace(tmp, os.path.join(directory, "on"))


def folded_when(directory, pid, window, timeout=10):
    path = os.path.join(directory, "%d.folded" % pid)

    def ready():
        try:
            folded = Folded(path)
        except (OSError, Failure):
            return None
        return folded if folded.window == window else None

    return wait_for(ready, timeout, "%s with window %d" % (path, window))


def run_python(code, env, cwd, timeout=30):
    proc = subprocess.run([PYTHON, "-c", code], env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=timeout)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


# ---- the tests


def test_profile(work):
    """A load test's window: where the CPU went, nothing counted while off, the file at SIGTERM."""
    profile = os.path.join(work, "profile")
    os.mkdir(profile)
    server = Server(base_env([SAMPLER_DIR], profile), work, ["--burn-us", str(BURN_US)])
    try:
        # Off: calls before DIR/on exists must add nothing (and no file is written: never on)
        server.calls("Pre", 300, in_flight=4)
        time.sleep(0.1)
        check(os.listdir(profile) == [], "files written before DIR/on existed: %s" % os.listdir(profile))

        cpu0 = process_cpu(server.pid)
        write_on(profile, 1)
        time.sleep(0.1)  # a few ticks: the sampler has seen DIR/on and set its baselines
        started = time.monotonic()
        server.calls("Burn", WINDOW_CALLS, in_flight=1)
        log("%d Burn calls in %.2f s" % (WINDOW_CALLS, time.monotonic() - started))
        os.unlink(os.path.join(profile, "on"))
        first = folded_when(profile, server.pid, 1)
        window_cpu = process_cpu(server.pid) - cpu0
        log("window 1, server CPU %.2f s:\n    %s" % (window_cpu, first.summary()))

        check(first.pid == server.pid, "# pid %d, the server is %d" % (first.pid, server.pid))
        check(first.samples > 20, "only %d samples" % first.samples)
        burn = first.share(has_frame("burn_cpu"))
        check(burn > 0.5, "burn_cpu has %.1f%% of cpu_us, expected most of it:\n    %s"
              % (100 * burn, first.summary()))
        check(has_frame("burn_cpu")(first.stacks[0][0]), "burn_cpu is not in the heaviest stack:\n    %s"
              % first.summary())
        idle = first.share(has_frame("wait_for_termination"))
        check(idle < 0.05, "wait_for_termination has %.1f%% of cpu_us:\n    %s" % (100 * idle, first.summary()))
        check(first.share(has_frame("pre_burn")) == 0, "pre_burn (called while off) was counted:\n    %s"
              % first.summary())
        # what was counted is this window's CPU: not the 300 calls before it, not much less than the window used
        check(first.cpu_us / 1e6 <= window_cpu * 1.1 + 0.05, "cpu_us %.3f s, but the server used %.3f s in the "
              "window: CPU from before DIR/on was counted" % (first.cpu_us / 1e6, window_cpu))
        check(first.cpu_us / 1e6 >= window_cpu * 0.6, "cpu_us %.3f s of the %.3f s the server used in the window"
              % (first.cpu_us / 1e6, window_cpu))
        check(first.sampler_cpu_us < first.cpu_us, "sampler_cpu_us %d >= cpu_us %d"
              % (first.sampler_cpu_us, first.cpu_us))
        print("  window 1: %d samples, cpu_us %d (server %.0f ms), burn_cpu %.1f%%, wait_for_termination %.2f%%, "
              "sampler %d us (%.1f%% of cpu_us)" % (first.samples, first.cpu_us, window_cpu * 1e3, 100 * burn,
                                                  100 * idle, first.sampler_cpu_us,
                                                  100.0 * first.sampler_cpu_us / first.cpu_us), file=sys.stderr)

        # Off again: these calls add nothing; SIGTERM rewrites the file, and the server still dies of SIGTERM
        server.calls("Pre", 300, in_flight=4)
        time.sleep(0.1)
        status = server.terminate()
        check(status == -signal.SIGTERM, "the server's exit status is %s, not death by SIGTERM%s"
              % (status, server.tail()))
        last = Folded(os.path.join(profile, "%d.folded" % server.pid))
        check(last.inode != first.inode, "the file was not written again at SIGTERM")
        check((last.window, last.samples, last.cpu_us, last.stacks) == (first.window, first.samples, first.cpu_us,
                                                                        first.stacks),
              "the file written at SIGTERM differs from the window's, though sampling was off:\n    %s\n  vs\n    %s"
              % (last.summary(), first.summary()))
        leftovers = sorted(set(os.listdir(profile)) - {"%d.folded" % server.pid})
        check(not leftovers, "other files in the profile directory: %s" % leftovers)
    finally:
        server.kill()


def test_off_and_chained(work):
    """No RPCSCOPE_PYPROFILE_DIR: nothing written, the server works, the next sitecustomize still runs (once)."""
    profile = os.path.join(work, "unused")
    os.mkdir(profile)
    write_on(profile, 1)  # would turn sampling on, were the directory given
    chained = os.path.join(work, "chained")
    os.mkdir(chained)
    marker = os.path.join(work, "marker")
    with open(os.path.join(chained, "sitecustomize.py"), "w") as f:
        f.write("import os\nwith open(os.environ['RPCSCOPE_TEST_MARKER'], 'a') as f:\n"
                "    f.write('%d\\n' % os.getpid())\n")
    env = base_env([SAMPLER_DIR, chained], RPCSCOPE_TEST_MARKER=marker)
    server = Server(env, work, ["--burn-us", "100"])
    try:
        server.calls("Burn", 200)
        status = server.terminate()
    finally:
        server.kill()
    check(status == -signal.SIGTERM, "exit status %s, not death by SIGTERM%s" % (status, server.tail()))
    check(os.listdir(profile) == ["on"], "files written without RPCSCOPE_PYPROFILE_DIR: %s" % os.listdir(profile))
    with open(marker) as f:
        pids = f.read().split()
    check(pids == [str(server.pid)], "the chained sitecustomize ran in %s, expected once in %d" % (pids, server.pid))
    check(server.tail() == "", "the server wrote on stderr:%s" % server.tail())


def test_chaining_details(work):
    """Our directory twice on PYTHONPATH, a chained sitecustomize that fails, stdout untouched, a bad HZ."""
    profile = os.path.join(work, "chain-profile")
    os.mkdir(profile)
    broken = os.path.join(work, "broken")
    os.mkdir(broken)
    with open(os.path.join(broken, "sitecustomize.py"), "w") as f:
        f.write("raise RuntimeError('chained sitecustomize failed on purpose')\n")
    code = ("import sys, threading\n"
            "names = [t.name for t in threading.enumerate()]\n"
            "print('hello', names.count('rpcscope-pysampler'), sys.modules['sitecustomize'].__file__)\n")
    env = base_env([SAMPLER_DIR, SAMPLER_DIR, broken], profile, RPCSCOPE_PYPROFILE_HZ="lots")
    status, out, err = run_python(code, env, work)
    own = os.path.join(SAMPLER_DIR, "sitecustomize.py")
    check(status == 0, "exit status %d; stderr:\n%s" % (status, err))
    check(out == "hello 1 %s\n" % own, "stdout %r (one sampler thread, our sitecustomize expected)" % out)
    lines = err.splitlines()
    check(len(lines) == 2 and "RPCSCOPE_PYPROFILE_HZ" in lines[0] and "chained sitecustomize failed" in lines[1],
          "stderr should be one line on HZ and one on the failed chained sitecustomize, not:\n%s" % err)
    check(os.listdir(profile) == [], "a process never on wrote %s" % os.listdir(profile))

    # a directory that does not exist: one line on stderr, nothing else happens
    env = base_env([SAMPLER_DIR], os.path.join(work, "missing"))
    status, out, err = run_python("print('ok')", env, work)
    check((status, out) == (0, "ok\n") and len(err.splitlines()) == 1, "missing directory: %s %r %r"
          % (status, out, err))


def test_host_sigterm_handler(work):
    """A host with its own SIGTERM handler keeps it; the file is written at exit."""
    profile = os.path.join(work, "host-profile")
    os.mkdir(profile)
    write_on(profile, 7)
    code = ("import os, signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda *a: sys.exit(3))\n"
            "def hot():\n"
            "    end = time.thread_time() + 0.3\n"
            "    while time.thread_time() < end: pass\n"
            "hot()\n"
            "os.kill(os.getpid(), signal.SIGTERM)\n"
            "time.sleep(5)\n")
    proc = subprocess.Popen([PYTHON, "-c", code], env=base_env([SAMPLER_DIR], profile), cwd=work,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=30)
    check(proc.returncode == 3, "exit status %s (the host's handler exits 3); stderr: %s" % (proc.returncode, err))
    folded = Folded(os.path.join(profile, "%d.folded" % proc.pid))
    check(folded.window == 7 and folded.share(has_frame("hot")) > 0.5, "at exit:\n    %s" % folded.summary())
    check(out == b"", "stdout %r" % out)


def test_fork(work):
    """A forked child samples on its own and writes its own file."""
    profile = os.path.join(work, "fork-profile")
    os.mkdir(profile)
    write_on(profile, 2)
    code = ("import os, sys, time\n"
            "d = os.environ['RPCSCOPE_PYPROFILE_DIR']\n"
            "def spin(seconds):\n"
            "    end = time.thread_time() + seconds\n"
            "    while time.thread_time() < end: pass\n"
            "def child_work(): spin(0.4)\n"
            "def parent_work(): spin(0.4)\n"
            "def wait_off():\n"
            "    end = time.monotonic() + 20\n"
            "    while os.path.exists(os.path.join(d, 'on')) and time.monotonic() < end: time.sleep(0.01)\n"
            "    time.sleep(0.3)\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    child_work(); open(os.path.join(d, 'child.done'), 'w').close(); wait_off(); os._exit(0)\n"
            "parent_work(); open(os.path.join(d, 'parent.done'), 'w').close()\n"
            "print(pid, flush=True)\n"
            "os.waitpid(pid, 0)\n")
    proc = subprocess.Popen([PYTHON, "-c", code], env=base_env([SAMPLER_DIR], profile), cwd=work,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: all(os.path.exists(os.path.join(profile, n)) for n in ("child.done", "parent.done")), 20,
                 "both processes to have spun")
        os.unlink(os.path.join(profile, "on"))
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    check(proc.returncode == 0, "exit status %s; stderr: %s" % (proc.returncode, err))
    child = int(out.split()[0])
    parent_file = folded_when(profile, proc.pid, 2)
    child_file = folded_when(profile, child, 2)
    check(parent_file.share(has_frame("parent_work")) > 0.5 and parent_file.share(has_frame("child_work")) == 0,
          "the parent's file:\n    %s" % parent_file.summary())
    check(child_file.share(has_frame("child_work")) > 0.5 and child_file.share(has_frame("parent_work")) == 0,
          "the child's file:\n    %s" % child_file.summary())


TESTS = [test_profile, test_off_and_chained, test_chaining_details, test_host_sigterm_handler, test_fork]


def main():
    if not os.path.isfile(os.path.join(SAMPLER_DIR, "sitecustomize.py")):
        print("test_pysampler: no sitecustomize.py in %s" % SAMPLER_DIR, file=sys.stderr)
        return 1
    failures = 0
    work = tempfile.mkdtemp(prefix="rpcscope-pysampler-test-")
    try:
        for test in TESTS:
            directory = os.path.join(work, test.__name__)
            os.mkdir(directory)
            started = time.monotonic()
            try:
                test(directory)
                print("PASS %s (%.1f s)" % (test.__name__, time.monotonic() - started), file=sys.stderr)
            except Failure as exc:
                failures += 1
                print("FAIL %s: %s" % (test.__name__, exc), file=sys.stderr)
            except Exception as exc:  # a bug in the test, or a timeout of subprocess
                failures += 1
                print("FAIL %s: %s: %s" % (test.__name__, type(exc).__name__, exc), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d of %d tests failed" % (failures, len(TESTS)) if failures else "all %d tests passed" % len(TESTS),
          file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
