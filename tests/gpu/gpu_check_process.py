"""gpu-check's step processes: each step's command runs in a process group of its own, with its
output in a log, stopped (SIGTERM, then SIGKILL) past its budget or when gpu-check is signalled."""
import os
import signal
import subprocess
import time


class Stopped(Exception):
    """SIGTERM, SIGINT or SIGHUP arrived: stop the step, export, exit."""


class StopRequest:
    """What on_signal saw. While a step's process is being started (Popen between fork and
    return) the handler only records the signal: an exception there would lose the process
    and leave it running; run_process raises once it holds the process."""
    signal_name = None
    defer = False


def on_signal(signum, _frame):
    StopRequest.signal_name = signal.Signals(signum).name
    if not StopRequest.defer:
        raise Stopped(StopRequest.signal_name)


def run_process(ctx, name, argv, budget, env=None):
    """Runs argv with its output in work/NAME.log; stopped (SIGTERM, then SIGKILL) past
    budget seconds. Returns (exit code or None when stopped, seconds)."""
    log_path = os.path.join(ctx.work, f"{name}.log")
    t0 = time.monotonic()
    with open(log_path, "w") as out:
        out.write("$ " + " ".join(argv) + "\n")
        out.flush()
        # Its own process group, not its own session (a caller that ends what it leaves running
        # finds a process by its session), so the step can be stopped as a whole.
        StopRequest.defer = True
        try:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env or ctx.env, process_group=0)
        except BaseException:
            StopRequest.defer = False
            raise
        try:
            ctx.child = proc
            StopRequest.defer = False
            if StopRequest.signal_name:  # it came while the process was being started
                raise Stopped(StopRequest.signal_name)
            rc = proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            rc = None
        except Stopped:
            stop_group(proc)
            raise
        finally:
            ctx.child = None
    return rc, time.monotonic() - t0


def stop_group(proc):
    """SIGTERM to the process group, then SIGKILL (15 s in all: gpu_check.KILL_GRACE_S)."""
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue


def tail(path, lines=6):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:]).rstrip()
    except OSError:
        return ""
