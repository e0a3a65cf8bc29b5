#!/usr/bin/env python3
"""Runs a command and checks its exit code.

    expect_exit.py CODE CMD [ARGS...]

Forwards the command's stdout and stderr unchanged and exits 0 when the
command exited with CODE; otherwise says what it got and exits 1. A command
killed by a signal (a crash) never matches.
"""
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: expect_exit.py CODE CMD [ARGS...]\n")
        return 2
    expected = int(sys.argv[1])
    proc = subprocess.run(sys.argv[2:], capture_output=True)
    sys.stdout.buffer.write(proc.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(proc.stderr)
    sys.stderr.flush()
    if proc.returncode != expected:
        what = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
                else f"exit code {proc.returncode}")
        sys.stderr.write(f"expect_exit: expected exit code {expected}, got {what}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
