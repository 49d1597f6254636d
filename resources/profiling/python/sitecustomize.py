"""rpcscope's Python sampler.

rpcscope puts this file's directory first on PYTHONPATH of a Python server command it starts, so that Python's
`site` imports it at start-up as `sitecustomize`. It profiles the process's Python frames, weighted by thread CPU,
while rpcscope's load test runs.

Protocol (rpcscope's C++ side is written against it):

* Active only when the environment variable RPCSCOPE_PYPROFILE_DIR names a directory; otherwise this module does
  nothing but import the next `sitecustomize` on sys.path (Debian ships one). RPCSCOPE_PYPROFILE_HZ (default 250)
  sets the ticks per second (on average: each tick is jittered by up to half a period, so that the ticks do not
  lock onto a periodic load).
* A daemon thread ticks. Sampling is on while the file DIR/on exists; its content is the window number (an ASCII
  integer; write it to a temporary name and rename it over DIR/on). The CPU clocks of the threads that have Python
  frames (all but the sampler's own) are read at each tick; a thread's first reading in a window only sets its
  baseline, so CPU used while DIR/on was absent is never counted, and threads that use no CPU add nothing.
* When sampling turns off (DIR/on removed), at exit (atexit) and on SIGTERM (a handler is installed only when
  SIGTERM's disposition is SIG_DFL; it writes, restores SIG_DFL and raises SIGTERM again, so the process ends as it
  would have), the process writes DIR/<pid>.folded atomically (DIR/<pid>.folded.tmp, then rename) with the
  cumulative stacks of all its windows:

      # rpcscope-pyprofile 1
      # pid 12345
      # unit_ns 1000
      # window 3
      # samples 1234
      # cpu_us 456789
      # sampler_cpu_us 2345
      Thread._bootstrap (threading.py:975);...;Echo.Call (server.py:12) 4567

  `window` is the last window number seen, `samples` the ticks that found a thread running, `cpu_us` the CPU put on
  the stacks (the sum of the weights: the thread CPU of the windows, but for the CPU of a window in which no thread
  was ever found running), `sampler_cpu_us` the sampler thread's own CPU while sampling was on. Stacks are root
  first, frames joined by ';', a frame being "QUALNAME (FILE:LINE)": the code's qualified name, the base name of its
  file, its first line (so that all samples of a function merge); ';' in names becomes ':'. Heaviest first, weights
  in microseconds of thread CPU. At exit and on SIGTERM the file is written only by a process that saw DIR/on.
* After fork, the child starts afresh: its own sampler thread, its own stacks, its own DIR/<pid>.folded.

How a tick samples. A sampling thread needs the GIL to read the stacks, and that makes two things wrong with the
plain "each thread's CPU since the previous tick, on the stack it is in now":

* With the usual 5 ms switch interval, the sampler gets the GIL only when its holder releases it (to block, or to
  call C code that releases it), so every sample is taken at such a point, and the CPU of the Python code before
  each release lands on the frames that release it (a handler's own code is never seen, only grpc's sends and
  waits). So while on, the sampler wakes a little before the tick (LEAD, adapted to how long it takes to get the
  GIL), keeps the switch interval at ON_SWITCH at most, asks for LOW_SWITCH just before the tick, and restores the
  interval as soon as it has what it needs: at the tick, the holder is made to drop the GIL within about
  LOW_SWITCH, wherever it is. The frames and the thread clocks are then read in one C call (a map over C
  callables), which no other thread can interrupt.
* A worker that serves a call between two ticks and then waits would have the whole call's CPU put on its waiting
  frames. So only threads found running at the tick are sampled: those whose CPU clock moves during a short spin
  right after the frames are read (they run without the GIL), and the GIL's holder at the tick (the thread that
  used the most CPU since the sampler woke, if it used some). Each such thread's stack counts once, and the thread
  CPU of the window (all threads, but the sampler) is shared out over these samples when the window ends.

It remains an estimate: code that holds the GIL for less than about LOW_SWITCH plus a thread wake-up (some tens of
microseconds) between releases is undercounted, the frames around its releases overcounted; and asking for short
switch intervals around each tick makes the host's threads switch more often while sampling is on.

Creating the frame object of another thread's frame (sys._current_frames, f_back) allocates, an allocation may run
a garbage collection, and its finalizers may let other threads have the GIL; if the frame's thread returned from it
meanwhile, CPython 3.11 would link the new frame object to the popped frame and write into its memory (seen here as
frames turning into code objects, and crashes). So the cyclic GC is off while the sampler reads frames.

It never raises into the host program and never writes to stdout; a line on stderr says what went wrong, if
anything does.
"""

import os
import sys


def _rpcscope_warn(message):
    """One line on stderr (never stdout: servers may speak a protocol there); never raises."""
    try:
        sys.stderr.write("rpcscope-pyprofile[%d]: %s\n" % (os.getpid(), message))
        sys.stderr.flush()
    except Exception:
        pass


class _RpcscopeThread(object):
    """What the sampler knows of one thread in the current window."""

    __slots__ = ("read", "thread", "last", "woke", "now", "spun", "window_ns", "counts")

    def __init__(self, read, thread, now):
        self.read = read  # a C callable that returns the thread's CPU clock in ns
        self.thread = thread  # threading's Thread object of the ident (None for a thread threading does not know)
        self.last = now  # CPU ns at the previous tick
        self.woke = None  # CPU ns when the sampler woke before this tick
        self.now = now  # CPU ns at this tick
        self.spun = now  # CPU ns after the spin that follows this tick's reading
        self.window_ns = 0  # CPU ns used in the current window
        self.counts = {}  # stack -> how many ticks of the current window found the thread running in it


class _RpcscopeSampler(object):
    """The sampler of one process (a forked child gets a fresh one via reset())."""

    MAX_DEPTH = 1024  # frames kept of a deeper stack (the leaf end); the root becomes "[truncated]"
    MAX_LABELS = 100000  # code objects whose labels are cached before the cache is emptied
    ON_SWITCH = 1e-3  # the longest GIL switch interval kept while sampling is on (s)
    LOW_SWITCH = 50e-6  # the switch interval asked for from the sampler's wake to the tick (s)
    LEAD = 500e-6  # how long before a tick the sampler first wakes (s); then adapted, within:
    LEAD_MIN = 150e-6
    LEAD_MARGIN = 100e-6  # over the 90th percentile of how late the sampler got the GIL after its wakes
    LATE_RUN = 30e-6  # when the sampler got the GIL after the tick: how long it lets the others run before reading
    SPIN = 15e-6  # the spin after the clocks are read: threads whose CPU moves meanwhile run without the GIL (s)
    HOLDER_MIN_NS = 20000  # CPU a thread must have used since the wake to be taken for the GIL's holder
    JITTER = 0.5  # each period is 1 +- JITTER times 1/HZ

    def __init__(self, directory, hz):
        import functools
        import gc
        import operator
        import random
        import threading
        import time

        self._gc = gc
        self._threading = threading
        self._time = time
        self._partial = functools.partial
        self._random = random.Random
        # calls a C callable from map() without running bytecode in between (operator.call is 3.11+)
        self._call = getattr(operator, "call", None) or (lambda f: f())
        self.directory = directory
        self.interval = 1.0 / hz
        self.on_path = os.path.join(directory, "on")
        self.exiting = False
        self.saved_switch = sys.getswitchinterval()  # the host's own switch interval, restored when off
        self.on_switch = min(self.saved_switch, self.ON_SWITCH)
        # Linux's CPU clock id of a thread, from its kernel tid (what glibc's pthread_getcpuclockid returns): used
        # for threads whose tid threading knows, so that pthread_getcpuclockid is not called on a pthread_t whose
        # thread may have ended meanwhile (reading a freed descriptor). Checked against pthread_getcpuclockid on this
        # live thread; a clock that Linux refuses (a stale tid) falls back to pthread_getcpuclockid (_add_thread).
        self.tid_clocks = False
        try:
            self.tid_clocks = (time.pthread_getcpuclockid(threading.get_ident())
                               == self._tid_clock(threading.get_native_id()))
        except Exception:
            pass
        # the spin: time.monotonic called from map() often enough to last about SPIN
        mono = time.monotonic
        start = time.perf_counter()
        list(map(self._call, [mono] * 1000))
        per_call = max((time.perf_counter() - start) / 1000, 5e-9)
        self.spin = [mono] * max(2, min(10000, int(self.SPIN / per_call)))
        self.reset()

    @staticmethod
    def _tid_clock(tid):
        return ((~tid) << 3) | 6  # CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK

    def reset(self):
        """Empty state for this process (at start, and in a forked child)."""
        self.lock = self._threading.Lock()  # guards the state below (the sampler thread vs. exit and SIGTERM)
        self.write_lock = self._threading.RLock()  # one writer at a time (reentrant: SIGTERM may hit a write)
        self.pid = os.getpid()
        self.rng = self._random()
        self.stacks = {}  # tuple of frame labels, root first -> CPU us (the windows that ended)
        self.threads = {}  # ident -> _RpcscopeThread
        self.retired = []  # the threads of the current window that ended
        self.labels = {}  # id(code) -> (code, label); the code is kept so that its id is not reused
        self.rest_ns = 0  # the sub-microsecond rest carried over to the next window
        self.window = 0
        self.samples = 0
        self.cpu_us = 0
        self.sampler_ns = 0
        self.own_last = 0
        self.on = False
        self.ever_on = False
        self.on_key = None
        self.lead = self.LEAD
        self.lateness = []
        self.errors = 0
        self.write_failed = False
        self.ident = None

    # ---- the sampler thread

    def start(self):
        t = self._threading.Thread(target=self._run, name="rpcscope-pysampler", daemon=True)
        t.start()

    def _run(self):
        time = self._time
        self.ident = self._threading.get_ident()
        pid = self.pid
        _rpcscope_low_timer_slack()
        deadline = time.monotonic()
        while not self.exiting and self.pid == pid:
            deadline += self.interval * (1.0 + self.JITTER * (2.0 * self.rng.random() - 1.0))
            try:
                sample = None
                if self.on:
                    self._sleep_until(deadline - self.lead)
                    if self.exiting or self.pid != pid:
                        break
                    sample = self._sample(deadline)
                else:
                    self._sleep_until(deadline)
                    if self.exiting or self.pid != pid:
                        break
                self._tick(sample)
                self.errors = 0
            except Exception as exc:
                self.errors += 1
                if self.errors == 1:
                    _rpcscope_warn("sampler tick failed: %r" % (exc,))
                if self.errors >= 100:
                    _rpcscope_warn("sampler stopped after 100 failed ticks in a row")
                    self._restore_switch()
                    return
            now = time.monotonic()
            if now > deadline + self.interval:  # late (a busy GIL): skip the missed ticks rather than catch up
                deadline = now
        self._restore_switch()

    def _sleep_until(self, when):
        delay = when - self._time.monotonic()
        if delay > 0:
            self._time.sleep(delay)

    def _switch_on(self):
        """The switch interval to keep while sampling: the host's, at most ON_SWITCH."""
        current = sys.getswitchinterval()
        if current not in (self.LOW_SWITCH, self.on_switch):
            self.saved_switch = current  # the host changed its own
        self.on_switch = min(self.saved_switch, self.ON_SWITCH)
        return self.on_switch

    def _restore_switch(self):
        try:
            if sys.getswitchinterval() in (self.LOW_SWITCH, self.on_switch):
                sys.setswitchinterval(self.saved_switch)
        except Exception:
            pass

    def _sample(self, deadline):
        """Called about LEAD before the tick at @p deadline, with the GIL. Reads the frames and the thread clocks at
        the tick; returns (ident -> top frame, eps_ns: how long the spin lasted)."""
        time = self._time
        woke = time.monotonic()
        on_switch = self._switch_on()
        self._note_lateness(woke - (deadline - self.lead))
        threads = list(self.threads.values())
        for state in threads:
            try:
                state.woke = state.read()
            except OSError:  # the thread ended
                state.woke = None
        reads = [state.read for state in threads]
        calls = [sys._current_frames] + reads + self.spin + reads
        gc = self._gc
        enabled = gc.isenabled()
        sys.setswitchinterval(self.LOW_SWITCH)
        try:
            time.sleep(deadline - woke if woke < deadline else self.LATE_RUN)
            gc.disable()  # see the module's doc: no collection while frame objects of other threads are made
            try:
                out = list(map(self._call, calls))  # one C call: no other thread runs meanwhile
            except OSError:  # a thread ended: read them one by one
                out = [calls[0]()] + [self._read(call) for call in calls[1:]]
            finally:
                if enabled:
                    gc.enable()
        finally:
            sys.setswitchinterval(on_switch)
        n = len(threads)
        spin = len(self.spin)
        for i, state in enumerate(threads):
            state.now = out[1 + i]
            state.spun = out[1 + n + spin + i]
        return out[0], (out[n + spin] - out[n + 1]) * 1e9

    @staticmethod
    def _read(call):
        try:
            return call()
        except OSError:
            return None

    def _note_lateness(self, late):
        """Adapts LEAD to how late the sampler gets the GIL after it wakes: early enough to have it before the
        tick, without keeping the short switch interval longer than needed."""
        history = self.lateness
        history.append(late)
        if len(history) >= 32:
            history.sort()
            self.lead = min(max(history[int(len(history) * 0.9)] + self.LEAD_MARGIN, self.LEAD_MIN),
                            self.interval / 4)
            del history[:]

    def _observe(self, frames, eps_ns):
        """Takes the tick's readings: adds the threads' CPU since the previous tick to the window, and returns the
        stacks of the threads found running (see the module's doc). Threads seen for the first time only get a
        baseline."""
        threads = self.threads
        active = self._threading._active
        own = self.ident
        holder = None
        most = self.HOLDER_MIN_NS
        running = []
        for ident, frame in frames.items():
            if ident == own:
                continue
            state = threads.get(ident)
            thread = active.get(ident)
            if state is not None and (state.thread is not thread or state.now is None):
                self.retired.append(threads.pop(ident))  # ended, or another thread got its ident
                state = None
            if state is None:
                self._add_thread(ident, thread)
                continue
            if state.now > state.last:
                state.window_ns += state.now - state.last
            state.last = state.now
            if state.spun is not None and eps_ns > 0 and state.spun - state.now >= eps_ns / 2:
                running.append((state, frame))  # runs without the GIL
            elif state.woke is not None and state.now - state.woke > most:
                most = state.now - state.woke
                holder = (state, frame)
        if holder is not None:
            running.append(holder)
        if len(threads) > len(frames):
            for ident in [i for i in threads if i not in frames]:
                self.retired.append(threads.pop(ident))
        if not running:
            return False
        gc = self._gc
        enabled = gc.isenabled()
        gc.disable()  # f_back makes frame objects
        try:
            for state, frame in running:
                stack = self._stack(frame)
                state.counts[stack] = state.counts.get(stack, 0) + 1
        finally:
            if enabled:
                gc.enable()
        return True

    def _add_thread(self, ident, thread):
        """Starts following a thread: its clock's first reading is its baseline."""
        clock = self._time.clock_gettime_ns
        tid = getattr(thread, "native_id", None) if thread is not None else None
        candidates = [self._tid_clock(tid)] if tid and self.tid_clocks else []
        # threading's native_id can be wrong (after fork, 3.11 keeps the parent's): Linux refuses the clock of a
        # thread of another process, and then pthread_getcpuclockid gives the right one
        candidates.append(None)
        for clock_id in candidates:
            try:
                if clock_id is None:
                    clock_id = self._time.pthread_getcpuclockid(ident)
                read = self._partial(clock, clock_id)
                self.threads[ident] = _RpcscopeThread(read, thread, read())
                return
            except Exception:  # not ours, or ended meanwhile
                pass

    def _baseline(self):
        """Off -> on: forgets the threads, so that what they used while off is not counted."""
        self.threads.clear()
        del self.retired[:]
        gc = self._gc
        enabled = gc.isenabled()
        gc.disable()
        try:
            idents = list(sys._current_frames())
        finally:
            if enabled:
                gc.enable()
        active = self._threading._active
        for ident in idents:
            if ident != self.ident:
                self._add_thread(ident, active.get(ident))

    def _tick(self, sample):
        """Checks DIR/on; takes @p sample (read while on) when it is still on."""
        try:
            st = os.stat(self.on_path)
        except OSError:
            st = None
        if st is not None:
            key = (st.st_mtime_ns, st.st_size, st.st_ino)
            if key != self.on_key:
                self._read_window(key)
        own = self._time.thread_time_ns()
        with self.lock:
            found = self._observe(*sample) if sample is not None and st is not None and self.on else False
            if self.on:
                self.sampler_ns += own - self.own_last
            self.own_last = own
            if st is None:
                if not self.on:
                    return
                # on -> off (a sample read meanwhile is dropped: it holds CPU used after DIR/on went)
                self.on = False
                self._restore_switch()
                self._end_window(self.stacks)
                self.threads.clear()
                del self.retired[:]
            elif not self.on:
                self.on = True
                self.ever_on = True
                self._baseline()
                return
            else:
                if found:
                    self.samples += 1
                return
        self.write()

    def _end_window(self, stacks, keep=False):
        """Puts the window's thread CPU on the stacks found running, into @p stacks: each thread's CPU on its own
        stacks, as often as it was found in each; the CPU of the threads never found running on all the stacks
        found, as often as they were. With @p keep, the window goes on (a file written while on). Returns the
        microseconds added."""
        threads = list(self.threads.values()) + self.retired
        shares = {}  # stack -> ns
        unplaced = self.rest_ns
        for state in threads:
            if state.counts:
                _rpcscope_share(shares, state.window_ns, state.counts)
            else:
                unplaced += state.window_ns
            if not keep:
                state.window_ns = 0
        counts = {}
        for state in threads:
            for stack, n in state.counts.items():
                counts[stack] = counts.get(stack, 0) + n
            if not keep:
                state.counts = {}
        if not keep:
            del self.retired[:]
        if not counts:
            if not keep:
                self.rest_ns = 0
            return 0  # no thread was found running: nothing to put the CPU on
        _rpcscope_share(shares, unplaced, counts)
        total_ns = sum(shares.values())
        total = int(total_ns) // 1000
        if not keep:
            self.rest_ns = int(total_ns) - total * 1000
            self.cpu_us += total
        _rpcscope_share(stacks, total, shares, whole=True)
        return total

    def _read_window(self, key):
        try:
            with open(self.on_path, "rb") as f:
                text = f.read(64)
            self.window = int(text.strip() or b"0")
            self.on_key = key
        except (OSError, ValueError):
            self.on_key = None  # read again next tick (it may have been caught half written)

    def _stack(self, frame):
        labels = self.labels
        out = []
        while frame is not None:
            code = frame.f_code
            entry = labels.get(id(code))
            if entry is None or entry[0] is not code:
                if len(labels) >= self.MAX_LABELS:
                    labels.clear()
                entry = (code, self._label(code))
                labels[id(code)] = entry
            out.append(entry[1])
            if len(out) >= self.MAX_DEPTH and frame.f_back is not None:
                out.append("[truncated]")
                break
            frame = frame.f_back
        out.reverse()
        return tuple(out)

    @staticmethod
    def _label(code):
        name = getattr(code, "co_qualname", None) or code.co_name
        label = "%s (%s:%d)" % (name, os.path.basename(code.co_filename), code.co_firstlineno)
        return label.replace(";", ":").replace("\n", " ").replace("\r", " ")

    # ---- the file

    def write(self):
        """Writes DIR/<pid>.folded (via DIR/<pid>.folded.tmp). Never raises."""
        try:
            with self.write_lock:
                if not self.lock.acquire(timeout=2.0):
                    return  # never hang the host's exit on a stuck sampler
                try:
                    stacks = dict(self.stacks)
                    cpu_us = self.cpu_us
                    if self.on:  # written while on (exit, SIGTERM): the window so far
                        cpu_us += self._end_window(stacks, keep=True)
                    header = (self.pid, self.window, self.samples, cpu_us, self.sampler_ns // 1000)
                finally:
                    self.lock.release()
                merged = {}
                for frames, us in stacks.items():
                    name = ";".join(frames)
                    merged[name] = merged.get(name, 0) + us
                lines = ["# rpcscope-pyprofile 1", "# pid %d" % header[0], "# unit_ns 1000",
                         "# window %d" % header[1], "# samples %d" % header[2], "# cpu_us %d" % header[3],
                         "# sampler_cpu_us %d" % header[4]]
                lines.extend("%s %d" % item for item in sorted(merged.items(), key=lambda kv: (-kv[1], kv[0])))
                path = os.path.join(self.directory, "%d.folded" % header[0])
                tmp = path + ".tmp"
                with open(tmp, "w", encoding="utf-8", errors="backslashreplace") as f:
                    f.write("\n".join(lines))
                    f.write("\n")
                os.replace(tmp, path)
        except Exception as exc:
            if not self.write_failed:
                self.write_failed = True
                _rpcscope_warn("cannot write the profile to %s: %r" % (self.directory, exc))

    def at_exit(self):
        self.exiting = True
        self._restore_switch()
        if self.ever_on and self.pid == os.getpid():
            self.write()

    def after_fork_in_child(self):
        try:
            self._restore_switch()  # the parent may have been sampling
            self.reset()
            if not self.exiting:
                self.start()
        except Exception as exc:
            _rpcscope_warn("cannot start the sampler in the forked child: %r" % (exc,))


def _rpcscope_share(into, amount, weights, whole=False):
    """Adds @p amount to the keys of @p into in proportion to @p weights (key -> weight > 0): as fractions, or with
    @p whole as integers that add up to amount exactly (largest remainders)."""
    total = sum(weights.values())
    if amount <= 0 or total <= 0:
        return
    if not whole:
        for key, weight in weights.items():
            into[key] = into.get(key, 0) + amount * weight / total
        return
    parts = []
    for key, weight in weights.items():
        exact = amount * weight / total
        parts.append((int(exact), exact - int(exact), key))
    left = amount - sum(p[0] for p in parts)
    parts.sort(key=lambda p: -p[1])
    for i, (part, _, key) in enumerate(parts):
        part += 1 if i < left else 0
        if part:
            into[key] = into.get(key, 0) + part


def _rpcscope_low_timer_slack():
    """Asks Linux for 1 us of timer slack for the calling thread (the sampler), instead of 50 us: its ticks and
    its GIL requests then come when asked. Best effort."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)  # PR_SET_TIMERSLACK
    except Exception:
        pass


def _rpcscope_install_sigterm(sampler):
    import signal

    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return  # the host has its own (or ignores it): its way of ending runs atexit, or does not end

    def on_sigterm(signum, frame):
        try:
            sampler.at_exit()
        except Exception:
            pass
        if signal.getsignal(signal.SIGTERM) is not on_sigterm:
            return  # the host installed its own handler later and chained to this one: let it end its way
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
            import time
            time.sleep(5)  # the signal ends the process well before this
        finally:
            os._exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_sigterm)


def _rpcscope_start():
    directory = os.environ.get("RPCSCOPE_PYPROFILE_DIR")
    if not directory:
        return None
    if not os.path.isdir(directory):
        _rpcscope_warn("RPCSCOPE_PYPROFILE_DIR %r is not a directory: not sampling" % (directory,))
        return None
    hz = 250.0
    text = os.environ.get("RPCSCOPE_PYPROFILE_HZ")
    if text:
        try:
            hz = float(text)
            if not 1.0 <= hz <= 10000.0:
                raise ValueError
        except ValueError:
            _rpcscope_warn("RPCSCOPE_PYPROFILE_HZ %r is not a number from 1 to 10000: using 250" % (text,))
            hz = 250.0
    import atexit
    import threading

    sampler = _RpcscopeSampler(os.path.abspath(directory), hz)
    sampler.start()
    atexit.register(sampler.at_exit)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=sampler.after_fork_in_child)
    if threading.current_thread() is threading.main_thread():
        try:
            _rpcscope_install_sigterm(sampler)
        except Exception as exc:
            _rpcscope_warn("no SIGTERM handler: %r" % (exc,))
    return sampler


def _rpcscope_chain():
    """Imports the next sitecustomize on sys.path after this file's directory (Debian ships one), as site would
    have without this one. Its errors are reported on one line of stderr, never raised."""
    try:
        import importlib.machinery
        import importlib.util

        own_file = os.path.realpath(__file__)
        own_dir = os.path.dirname(own_file)
        paths = list(sys.path)
        start = 0
        for i, entry in enumerate(paths):
            try:
                if os.path.realpath(entry or os.curdir) == own_dir:
                    start = i + 1
                    break
            except Exception:
                pass
        for entry in paths[start:]:
            if not isinstance(entry, str):
                continue
            spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
            if spec is None or spec.loader is None:
                continue
            if spec.origin and os.path.realpath(spec.origin) == own_file:
                continue  # ourselves again (our directory twice on sys.path)
            break
        else:
            return None
    except Exception as exc:
        _rpcscope_warn("cannot look for the next sitecustomize: %r" % (exc,))
        return None
    ours = sys.modules.get("sitecustomize")
    try:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module  # while it runs, as a plain import would have it
        spec.loader.exec_module(module)
    except Exception as exc:
        module = None
        _rpcscope_warn("error in the next sitecustomize (%s): %s: %s"
                       % (spec.origin, type(exc).__name__, str(exc).replace("\n", " ")))
    finally:
        if ours is not None:
            sys.modules["sitecustomize"] = ours
    return module


try:
    _rpcscope_sampler = _rpcscope_start()
except Exception as _exc:
    _rpcscope_sampler = None
    _rpcscope_warn("not sampling: %r" % (_exc,))
try:
    _rpcscope_next = _rpcscope_chain()
except Exception as _exc:  # SystemExit and KeyboardInterrupt go on, as they would from the next one alone
    _rpcscope_next = None
    _rpcscope_warn("cannot import the next sitecustomize: %r" % (_exc,))
