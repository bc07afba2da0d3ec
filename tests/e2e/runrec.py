"""What the e2e scripts' inline Python shares (tests/e2e/lib.sh, run.sh,
shape.sh, streams.sh, buffer.sh): a run's JSON outputs read back, and the
head of an experiment's meta.json. Those scripts run it with
lib.sh's e2e_py, which puts tests/e2e on the path."""
import json
import os
import platform
import subprocess
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(cmd):
    """A shell command's output, stripped, run in the checkout; None when
    it cannot be started."""
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              cwd=SRC).stdout.strip()
    except OSError:
        return None


def first_json(d, name):
    """The JSON document on the first line of d/name; None when the file
    is missing or that line is not JSON (a tool that failed)."""
    try:
        return json.loads(open(d + "/" + name).readline())
    except (OSError, ValueError):
        return None


def meta_head(command, dirty_paths=None):
    """meta.json's first fields: when, the command line, the commit (and
    with dirty_paths whether those paths have uncommitted changes), the
    kernel and the CPU count."""
    m = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": command,
         "git_commit": sh("git rev-parse HEAD")}
    if dirty_paths is not None:
        m["git_dirty"] = bool(sh("git status --porcelain -- " + dirty_paths))
    m["kernel"] = platform.release()
    m["cpus"] = os.cpu_count()
    return m
