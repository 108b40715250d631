#!/usr/bin/env python3
"""Checks the module layering of a Tessera source tree; registered as the ctest layering_check.

Usage: check_layering.py ROOT

Reads every C++/CUDA source under ROOT (its #include lines) and every CMakeLists.txt (its
target_link_libraries and include directories) and reports each break of these rules:

  front-ends-through-scenario  cli/, gui/, sweep/ and python/ reach the topologies (placement included)
                               and the simulator (tessera/topologies/..., tessera/sim/...) only
                               through scenario/: no include of their headers, no direct link.
  core-includes-no-module      core/ includes no other module's headers and links none.
  backend-layers-downward      backend libraries include (and link) only downward:
                               core (backend/include, backend/src) < cpu (backend/cpu) and
                               cuda (backend/cuda) < factory (backend/factory); cpu and cuda
                               never include each other.
  no-foreign-src               no source includes another module's src/ directory (by a relative
                               path, or through an include directory that points into it).

Each violation is one line, FILE:LINE: RULE: what, with FILE relative to ROOT. Exit status: 0
when there is none, 1 when there are some, 2 on a usage error. Python 3 standard library only.
"""

import os
import re
import sys

SOURCE_SUFFIXES = (".hpp", ".cpp", ".h", ".cc", ".cxx", ".cu", ".cuh", ".inl", ".ipp")
SKIPPED_DIRECTORIES = {".git", "build", "out", "node_modules", "__pycache__"}
# Trees of deliberate violations for the checker's own test; checked only when named as ROOT.
SKIPPED_PATHS = {"tests/layering/fixture"}

FRONT_ENDS = ("cli", "gui", "sweep", "python")
BEHIND_SCENARIO = ("topologies", "sim")
BEHIND_SCENARIO_TARGETS = {"tessera_topologies", "tessera_sim"}
CORE_TARGETS_ALLOWED = {"tessera_core", "tessera_warnings"}

# Backend layers, lowest first; a layer may use only layers of a lower rank (or itself).
BACKEND_RANK = {"core": 0, "cpu": 1, "cuda": 1, "factory": 2}
BACKEND_TARGET_LAYER = {
    "tessera_backend_core": "core",
    "tessera_backend_cpu": "cpu",
    "tessera_backend_cuda": "cuda",
    "tessera_cuda_kernels": "cuda",
    "tessera_backend": "factory",
}

# What each rule asks, printed under a failing run's list.
RULES = {
    "front-ends-through-scenario": "cli/, gui/, sweep/ and python/ reach tessera/topologies and tessera/sim only through "
                                   "tessera/scenario (its headers re-export the types front ends show)",
    "core-includes-no-module": "core/ includes and links no other module",
    "backend-layers-downward": "backend layers include and link only downward: core < cpu, cuda < factory; cpu and "
                               "cuda never include each other",
    "no-foreign-src": "no source includes another module's src/ directory",
    "one-event-queue": "sim/ has one event queue: the engine's (sim/include/tessera/sim/engine.hpp); a heap type "
                       "(std::priority_queue) is spelled only in sim/include/tessera/sim/min_queue.hpp and an event "
                       "type is declared only in the engine",
    "unreadable": "every source can be read",
}

INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
CMAKE_COMMAND = re.compile(r"\b(target_link_libraries|target_include_directories|include_directories)\s*\(", re.I)
CMAKE_SET = re.compile(r"^\s*set\s*\(\s*(\w+)\s+([^\s)]+)\s*\)", re.I | re.M)


class Violation:
    def __init__(self, path, line, rule, what):
        self.path, self.line, self.rule, self.what = path, line, rule, what

    def __str__(self):
        return f"{self.path}:{self.line}: {self.rule}: {self.what}"


def relative(root, path):
    return os.path.relpath(path, root).replace(os.sep, "/")


def walk(root):
    """Yields every file under root (relative, '/'-separated), skipping build trees and fixtures."""
    for directory, subdirectories, files in os.walk(root):
        rel_directory = relative(root, directory)
        subdirectories[:] = sorted(
            d for d in subdirectories
            if d not in SKIPPED_DIRECTORIES and not d.startswith("build")
            and (d if rel_directory == "." else rel_directory + "/" + d) not in SKIPPED_PATHS)
        for name in sorted(files):
            yield name if rel_directory == "." else rel_directory + "/" + name


def module_of(rel_path):
    return rel_path.split("/", 1)[0]


def backend_layer_of_path(rel_path):
    """The backend layer a file under backend/ belongs to."""
    parts = rel_path.split("/")
    if len(parts) > 2 and parts[1] in ("cpu", "cuda", "factory"):
        return parts[1]
    return "core"


def backend_layer_of_include(include):
    """The layer of a tessera/backend/... header: tessera/backend/cpu/x.hpp is cpu's."""
    rest = include.split("/")[2:]
    return rest[0] if len(rest) > 1 and rest[0] in ("cpu", "cuda", "factory") else "core"


def src_owner(root, rel_path):
    """The directory whose src/ holds rel_path (e.g. 'topologies' for topologies/src/x.hpp), or None."""
    parts = rel_path.split("/")
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == "src":
            return "/".join(parts[:index])
    return None


def own_unit(root, rel_path):
    """The deepest directory above rel_path that has a src/ of its own: the library the file is in."""
    parts = rel_path.split("/")[:-1]
    for length in range(len(parts), 0, -1):
        candidate = "/".join(parts[:length])
        if parts[length - 1] != "src" and os.path.isdir(os.path.join(root, candidate, "src")):
            return candidate
    return module_of(rel_path)


def inside(rel_path, directory):
    return directory == "" or rel_path == directory or rel_path.startswith(directory + "/")


HEAP_TYPE = re.compile(r"\bpriority_queue\b")
EVENT_TYPE = re.compile(r"\b(struct|class)\s+\w*Event\b")
THE_HEAP = "sim/include/tessera/sim/min_queue.hpp"
THE_ENGINE = ("sim/include/tessera/sim/engine.hpp", "sim/src/engine.cpp")


def check_event_queue(rel_path, lines, violations):
    """A second event loop in sim/ would bring its own heap or its own event type."""
    for number, text in enumerate(lines, start=1):
        code = text.split("//", 1)[0]
        if HEAP_TYPE.search(code) and rel_path != THE_HEAP:
            violations.append(Violation(rel_path, number, "one-event-queue",
                                        "spells a heap type; use MinQueue (min_queue.hpp) inside the engine"))
        if EVENT_TYPE.search(code) and rel_path not in THE_ENGINE:
            violations.append(Violation(rel_path, number, "one-event-queue",
                                        "declares an event type outside the engine"))


def check_source(root, rel_path, violations):
    module = module_of(rel_path)
    try:
        with open(os.path.join(root, rel_path), encoding="utf-8", errors="replace") as file:
            lines = file.readlines()
    except OSError as error:
        violations.append(Violation(rel_path, 0, "unreadable", str(error)))
        return
    if module == "sim":
        check_event_queue(rel_path, lines, violations)
    for number, text in enumerate(lines, start=1):
        match = INCLUDE_LINE.match(text)
        if not match:
            continue
        quote, include = match.groups()
        target_module = include.split("/")[1] if include.startswith("tessera/") and include.count("/") >= 2 else None
        # A quoted include is looked up beside the file first: that is where a relative path lands.
        resolved = None
        if quote == '"':
            beside = os.path.normpath(os.path.join(root, os.path.dirname(rel_path), include))
            if os.path.isfile(beside):
                resolved = relative(root, beside)

        if resolved is not None and target_module is None:
            target_module = module_of(resolved)

        if module in FRONT_ENDS and target_module in BEHIND_SCENARIO:
            violations.append(Violation(
                rel_path, number, "front-ends-through-scenario",
                f"includes {include}; reach it through a tessera/scenario header"))
        if module == "core":
            if target_module is not None and target_module != "core":
                violations.append(Violation(rel_path, number, "core-includes-no-module",
                                            f"includes {include}, a header of another module"))
        if module == "backend":
            target_layer = None
            if resolved is not None and module_of(resolved) == "backend":
                target_layer = backend_layer_of_path(resolved)
            elif target_module == "backend":
                target_layer = backend_layer_of_include(include)
            layer = backend_layer_of_path(rel_path)
            if target_layer is not None and target_layer != layer and \
                    BACKEND_RANK[target_layer] >= BACKEND_RANK[layer]:
                violations.append(Violation(
                    rel_path, number, "backend-layers-downward",
                    f"backend {layer} includes {include} (backend {target_layer})"))
        if resolved is not None:
            owner = src_owner(root, resolved)
            if owner is not None and owner != own_unit(root, rel_path):
                violations.append(Violation(
                    rel_path, number, "no-foreign-src",
                    f"includes {include}, inside {owner}/src/"))


def cmake_commands(text):
    """Yields (command, arguments as (token, line) pairs) for the commands this checker reads."""
    without_comments = re.sub(r"#[^\n]*", lambda m: " " * len(m.group(0)), text)
    for match in CMAKE_COMMAND.finditer(without_comments):
        depth, at = 1, match.end()
        while at < len(without_comments) and depth > 0:
            depth += {"(": 1, ")": -1}.get(without_comments[at], 0)
            at += 1
        body_start = match.end()
        arguments = []
        for token in re.finditer(r"[^\s()]+", without_comments[body_start:at - 1]):
            line = without_comments.count("\n", 0, body_start + token.start()) + 1
            arguments.append((token.group(0), line))
        yield match.group(1).lower(), arguments


def expand(token, root, cmake_dir, variables):
    """A path argument as a path relative to root, or None when it cannot be told."""
    for name, value in variables.items():
        token = token.replace("${" + name + "}", value)
    token = token.replace("${PROJECT_SOURCE_DIR}", root).replace("${CMAKE_SOURCE_DIR}", root)
    token = token.replace("${CMAKE_CURRENT_SOURCE_DIR}", os.path.join(root, cmake_dir))
    if "${" in token or "$<" in token:
        return None
    path = token if os.path.isabs(token) else os.path.join(root, cmake_dir, token)
    return relative(root, os.path.normpath(path))


def check_cmake(root, rel_path, violations):
    module = module_of(rel_path)
    cmake_dir = os.path.dirname(rel_path)
    with open(os.path.join(root, rel_path), encoding="utf-8", errors="replace") as file:
        text = file.read()
    variables = {}
    for name, value in CMAKE_SET.findall(text):
        expanded = expand(value, root, cmake_dir, {})
        if expanded is not None:
            variables[name] = os.path.join(root, expanded)
    keywords = {"PUBLIC", "PRIVATE", "INTERFACE", "BEFORE", "AFTER", "SYSTEM"}
    for command, arguments in cmake_commands(text):
        if not arguments:
            continue
        if command == "target_link_libraries":
            target = arguments[0][0]
            for token, line in arguments[1:]:
                if module in FRONT_ENDS and token in BEHIND_SCENARIO_TARGETS:
                    violations.append(Violation(
                        rel_path, line, "front-ends-through-scenario",
                        f"{target} links {token}; tessera_scenario brings what front ends need"))
                if module == "core" and token.startswith("tessera_") and token not in CORE_TARGETS_ALLOWED:
                    violations.append(Violation(rel_path, line, "core-includes-no-module",
                                                f"{target} links {token}"))
                if target in BACKEND_TARGET_LAYER and token in BACKEND_TARGET_LAYER:
                    layer, target_layer = BACKEND_TARGET_LAYER[target], BACKEND_TARGET_LAYER[token]
                    if target_layer != layer and BACKEND_RANK[target_layer] >= BACKEND_RANK[layer]:
                        violations.append(Violation(
                            rel_path, line, "backend-layers-downward",
                            f"{target} (backend {layer}) links {token} (backend {target_layer})"))
        else:  # include directories
            start = 1 if command == "target_include_directories" else 0
            for token, line in arguments[start:]:
                if token.upper() in keywords:
                    continue
                path = expand(token, root, cmake_dir, variables)
                if path is None or path.startswith(".."):
                    continue
                owner = src_owner(root, path + "/")
                if owner is not None and not inside(cmake_dir, owner):
                    violations.append(Violation(
                        rel_path, line, "no-foreign-src",
                        f"adds the include directory {token}, inside {owner}/src/"))


def check_tree(root):
    violations = []
    files = 0
    for rel_path in walk(root):
        if rel_path.endswith(SOURCE_SUFFIXES):
            files += 1
            check_source(root, rel_path, violations)
        elif os.path.basename(rel_path) == "CMakeLists.txt":
            files += 1
            check_cmake(root, rel_path, violations)
    return files, violations


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check_layering.py ROOT (the source tree to check)", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    files, violations = check_tree(root)
    for violation in violations:
        print(violation)
    if violations:
        print(f"layering: {len(violations)} violation(s) in {files} files; the rules broken:", file=sys.stderr)
        for rule in sorted({violation.rule for violation in violations}):
            print(f"  {rule}: {RULES[rule]}", file=sys.stderr)
        return 1
    print(f"layering: {files} files, no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
