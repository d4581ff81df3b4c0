"""Peak resident memory of one command, measured from a small process.

Linux keeps a process's peak RSS across fork and exec, so a command started straight from a big
test or benchmark interpreter reports at least that interpreter's memory (a 90 MiB test runner
made an 25 MiB trainio look like 91 MiB). Here a fresh interpreter, a few MiB, starts the
command and reads the command's own peak from wait4.

    from peak_rss import run_measured
    code, peak_mib, stderr = run_measured([trainio, "run", ...], cwd=..., env=...)
"""
import json
import os
import subprocess
import sys
import tempfile


def run_measured(cmd, cwd=None, env=None, timeout=300):
    """Runs `cmd` (stdout discarded) and returns (exit code, peak RSS in MiB, stderr text)."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as result:
        proc = subprocess.run(["/usr/bin/python3", os.path.abspath(__file__), result.name, *map(str, cmd)], cwd=cwd,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"peak_rss.py failed: {proc.stderr}")
        measured = json.load(result)
    return measured["exit_code"], measured["peak_kib"] / 1024, proc.stderr


if __name__ == "__main__":
    out, cmd = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped above
    with open(out, "w") as f:
        json.dump({"exit_code": child.returncode, "peak_kib": usage.ru_maxrss}, f)
