#!/usr/bin/env python3
"""The layering check's own test (ctest layering_check_self_test): the check must fail.

Usage: self_test.py CHECKER FIXTURE

FIXTURE/violating is a small tree that breaks each rule of tools/check_layering.py once per form
(an include by name, an include by relative path, a CMake link, a CMake include directory);
FIXTURE/clean is the same tree with every rule kept (comments that only mention a module
included). The checker must report exactly the expected FILE:LINE: RULE lines for the first
(exit 1), nothing for the second (exit 0), and refuse a missing tree (exit 2).
"""

import os
import subprocess
import sys

EXPECTED = {
    "backend/CMakeLists.txt:4: backend-layers-downward",           # cpu links cuda
    "backend/cpu/src/cpu_executor.cpp:2: backend-layers-downward",  # cpu includes cuda by path
    "backend/cuda/cuda_executor.cpp:3: backend-layers-downward",    # cuda includes factory
    "backend/src/executor.cpp:2: backend-layers-downward",          # core includes cpu
    "backend/factory/src/make_executor.cpp:3: no-foreign-src",      # factory reaches into backend/src
    "cli/CMakeLists.txt:2: front-ends-through-scenario",            # links tessera_topologies
    "cli/main.cpp:3: front-ends-through-scenario",                  # indented '#  include'
    "gui/models/view.cpp:2: front-ends-through-scenario",           # <tessera/sim/...>
    "sweep/CMakeLists.txt:5: front-ends-through-scenario",          # links tessera_sim
    "python/src/module.cpp:2: front-ends-through-scenario",         # the Python module includes the simulator
    "sweep/CMakeLists.txt:4: no-foreign-src",                       # include directory ${var}/src
    "sweep/src/spec.cpp:2: front-ends-through-scenario",            # topologies by relative path
    "sweep/src/spec.cpp:2: no-foreign-src",                         # ... into its src/
    "core/CMakeLists.txt:4: core-includes-no-module",               # links tessera_schedules
    "core/include/tessera/core/problem.hpp:3: core-includes-no-module",
    "core/src/problem.cpp:2: core-includes-no-module",              # by relative path
    "sim/src/collective_loop.cpp:3: one-event-queue",               # an event type outside the engine
    "sim/src/collective_loop.cpp:4: one-event-queue",               # a heap outside min_queue.hpp
}


def run(checker, tree):
    result = subprocess.run([sys.executable, checker, tree], capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr


def main(argv):
    if len(argv) != 3:
        print("usage: self_test.py CHECKER FIXTURE", file=sys.stderr)
        return 2
    checker, fixture = argv[1], argv[2]
    checks = []  # (what, passed)

    code, out, err = run(checker, os.path.join(fixture, "violating"))
    reported = {": ".join(line.split(": ", 2)[:2]) for line in out.splitlines() if line}
    checks.append(("violating tree: exit 1", code == 1))
    checks += [(f"violating tree reports {line}", line in reported) for line in sorted(EXPECTED)]
    checks += [(f"violating tree: {line} is not a violation", False) for line in sorted(reported - EXPECTED)]
    checks.append(("violating tree: the rules broken are listed on stderr", "the rules broken" in err))

    code, out, err = run(checker, os.path.join(fixture, "clean"))
    checks.append(("clean tree: exit 0 with one summary line", code == 0 and len(out.splitlines()) == 1 and not err))

    code, _, _ = run(checker, os.path.join(fixture, "no-such-tree"))
    checks.append(("a missing tree: exit 2", code == 2))

    failed = [what for what, passed in checks if not passed]
    for what in failed:
        print(f"FAILED: {what}")
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
