"""pyfind.py -- run a script with a python3 that has the Debian modules it needs.

The python3 first on PATH may lack Debian's python3-matplotlib,
python3-numpy and python3-scipy (a pyenv shim, say, while Debian's own
python3 has them).  A figure script calls ensure() before it imports
matplotlib (report.py: ensure(("numpy", "scipy"))): when an import fails,
the script is run again, same arguments, with the next python3 on PATH
that can import them all, or it exits with a message saying what to
install.  Run on its own, it prints that interpreter (exit 1 if none).
"""
import os
import subprocess
import sys

REEXEC = "KV_PYFIND_REEXEC"  # set in the second run, so it never loops
MODULES = ("matplotlib", "numpy", "scipy")


def has_modules(python, modules=MODULES):
    return subprocess.call([python, "-c", "import " + ", ".join(modules)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) == 0


def other_pythons():
    """Every other python3 on PATH, in PATH order."""
    seen = {os.path.realpath(sys.executable)}
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d or ".", "python3")
        if os.access(p, os.X_OK) and os.path.realpath(p) not in seen:
            seen.add(os.path.realpath(p))
            yield p


def find(modules=MODULES):
    """This interpreter if it has the modules, else the first other one; None."""
    try:
        for m in modules:
            __import__(m)
        return sys.executable
    except ImportError:
        return next((p for p in other_pythons() if has_modules(p, modules)), None)


def ensure(modules=MODULES):
    python = find(modules)
    if python == sys.executable:
        return
    if python and not os.environ.get(REEXEC):
        os.environ[REEXEC] = "1"
        os.execv(python, [python] + sys.argv)
    sys.exit(f"error: {', '.join(modules)} not found for {sys.executable} nor any other python3 on "
             "PATH: install Debian's " + ", ".join("python3-" + m for m in modules) + " (`make deps`)")


if __name__ == "__main__":
    python = find()
    print(python or "none")
    sys.exit(0 if python else 1)
