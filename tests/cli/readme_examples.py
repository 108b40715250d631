#!/usr/bin/env python3
"""Runs every command of README's "Using it" block against the built `tessera`, as written.

The block is the first ```sh fence after the "## Using it" heading. Continued lines (a trailing
backslash) are joined, comments after " #" dropped, and each word `tessera` becomes the built
binary. Commands run one after another through bash (with pipefail) in a scratch folder, so the
files they write (a2d.json, mesh.json, ...) land there and later commands read them; inputs the
README names by a path inside the repository (topologies/examples/...) are linked into it.
Every command must exit 0. A pipe into a program that is not installed (Graphviz's `dot`) runs
the tessera part alone, and says so.

--part cpu runs the commands that need no GPU; --part gpu those that do (`--backend cuda`, and
`mpirun`), and exits 77 (ctest: skipped) when no GPU is present.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--tessera", required=True)
parser.add_argument("--readme", required=True)
parser.add_argument("--source", required=True, help="the repository root (for inputs named by path)")
parser.add_argument("--scratch", required=True)
parser.add_argument("--part", choices=["cpu", "gpu"], required=True)
parser.add_argument("--timeout-s", type=float, default=900)
args = parser.parse_args()


def using_it_commands(text):
    """The commands of the first sh block after '## Using it', continued lines joined."""
    section = text.split("\n## Using it\n", 1)
    if len(section) != 2:
        sys.exit("README has no '## Using it' section")
    block = re.search(r"```sh\n(.*?)```", section[1], re.S)
    if not block:
        sys.exit("README's 'Using it' section has no ```sh block")
    commands, pending = [], ""
    for line in block.group(1).splitlines():
        line = pending + line
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1] + " "
            continue
        pending = ""
        line = re.sub(r"\s#.*$", "", line).strip()  # a comment: '#' after a blank
        if line:
            commands.append(line)
    return commands


def needs_gpu(command):
    return "--backend cuda" in command or command.startswith("mpirun")


def gpu_present():
    if shutil.which("nvidia-smi") is None:
        return False
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return listing.returncode == 0 and "GPU" in listing.stdout


def link_inputs(command, scratch):
    """Relative paths into the repository (topologies/examples/x.yaml) are linked into the scratch folder."""
    for word in command.split():
        first = word.split("/")[0]
        if "/" in word and os.path.exists(os.path.join(args.source, word)):
            target = os.path.join(scratch, first)
            if not os.path.lexists(target):
                os.symlink(os.path.join(args.source, first), target)


def runnable(command):
    """The command as run, and a note when a piped-to program is missing."""
    stages = [stage.strip() for stage in command.split("|")]
    for stage in stages[1:]:
        program = stage.split()[0]
        if shutil.which(program) is None:
            return stages[0] + " > /dev/null", f"{program} is not installed: ran `{stages[0]}` alone"
    return command, ""


commands = using_it_commands(open(args.readme).read())
wanted = [c for c in commands if needs_gpu(c) == (args.part == "gpu")]
if args.part == "gpu" and not gpu_present():
    for command in wanted:
        print("skipped (no GPU): " + command)
    sys.exit(77)
if not wanted:
    sys.exit("no commands of this part in README's 'Using it' block")

os.makedirs(args.scratch, exist_ok=True)
environment = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
failures = 0
for command in wanted:
    link_inputs(command, args.scratch)
    shell, note = runnable(re.sub(r"(?<![\w/.-])tessera(?![\w/.-])", args.tessera, command))
    try:
        result = subprocess.run(["bash", "-o", "pipefail", "-c", shell], cwd=args.scratch, capture_output=True,
                                text=True, timeout=args.timeout_s, env=environment)
        code, error = result.returncode, result.stderr.strip().splitlines()[-1:] or [""]
    except subprocess.TimeoutExpired:
        code, error = "timeout", [f"more than {args.timeout_s:.0f} s"]
    status = "ok  " if code == 0 else "FAIL"
    failures += code != 0
    print(f"{status} {command}" + (f"   ({note})" if note else ""))
    if code != 0:
        print(f"     exit {code}: {error[0]}")
print(f"{len(wanted) - failures} of {len(wanted)} commands ran as written")
sys.exit(1 if failures else 0)
