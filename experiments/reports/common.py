"""Helpers every report uses: running (or, in a check, reading) the sweeps, derived tables and
figures, and the formatting of numbers. Standard library only."""
import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

# experiments/: each experiment's folder is beside this package.
ROOT = Path(__file__).resolve().parent.parent


class Run:
    """How this run treats its outputs: write them (running the sweeps and `tessera plot`), or
    check them (read the committed results, recompute every table and report, and compare)."""
    tessera = None
    check = False
    mismatches = []


RUN = Run()


def output(path, text):
    """Writes `text` to `path`, or in a check compares it with what the file holds."""
    path = Path(path)
    if RUN.check:
        if not path.exists() or path.read_text() != text:
            RUN.mismatches.append(str(path.relative_to(ROOT.parent)))
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def write_report(experiment, text):
    output(ROOT / experiment / "REPORT.md", text)


# --- running -----------------------------------------------------------------------------------

def sweep(experiment, stem):
    """Runs (or resumes) experiments/EXPERIMENT/STEM.yaml; returns its ok rows as dicts."""
    directory = ROOT / experiment
    out = directory / "results" / stem
    if RUN.check:
        return read_results(out)
    # From the repository root: specs name topology files relative to it.
    command = [RUN.tessera, "sweep", str((directory / (stem + ".yaml")).relative_to(ROOT.parent)), "--out",
               str(out.relative_to(ROOT.parent)), "-q"]
    run = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT.parent)
    if run.returncode == 2 and "holds the results of other inputs" in run.stderr:
        # The spec (or the tool) changed since these results: they are derived data, start over.
        print("report.py: %s changed; running it again from scratch" % stem, flush=True)
        shutil.rmtree(out)
        run = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT.parent)
    if run.returncode != 0:
        sys.exit("report.py: %s failed:\n%s" % (" ".join(command), run.stderr))
    return read_results(out)


def read_results(out):
    """The rows of OUT/results.csv, with the integer columns as integers."""
    if not (out / "results.csv").exists():
        sys.exit("report.py: %s/results.csv is missing; run report.py without --check first" % out)
    with open(out / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        for key in ("gpus", "seq_tokens", "kv_heads"):
            if row.get(key):
                row[key] = int(row[key])
    return rows


def ok(rows):
    return [row for row in rows if row["status"] == "ok"]


def num(row, column):
    return float(row[column])


def plot(experiment, csv_path, name, *arguments):
    """Draws results/derived/NAME.{svg,png} from a CSV with `tessera plot`; returns the PNG path."""
    out = ROOT / experiment / "results" / "derived" / name
    if RUN.check:
        # The figure is drawn from the derived CSV, which the check compares; the image itself is
        # only looked for.
        if not Path("%s.png" % out).exists():
            RUN.mismatches.append("%s.png (missing)" % out.relative_to(ROOT.parent))
        return "results/derived/%s.png" % name
    for extension in ("svg", "png"):
        subprocess.run([RUN.tessera, "plot", str(csv_path), "-o", "%s.%s" % (out, extension), *arguments],
                       check=True, stdout=subprocess.DEVNULL)
    return "results/derived/%s.png" % name


def write_csv(experiment, name, header, rows):
    path = ROOT / experiment / "results" / "derived" / (name + ".csv")
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    output(path, text.getvalue())
    return path


# --- formatting --------------------------------------------------------------------------------

def table(header, rows, align=None):
    align = align or ["r"] * len(header)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if a == "r" else ":---" for a in align) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def gb(value):
    return "%.2f GB" % (value / 1e9)


def ms(value):
    return "%.0f ms" % (value * 1e3) if value >= 0.1 else "%.1f ms" % (value * 1e3)


def pct(value):
    return "%.1f %%" % (100 * value)


def times(value):
    return "%.2fx" % value


def tokens(count):
    for unit, size in (("M", 1 << 20), ("K", 1 << 10)):
        if count % size == 0:
            return "%d%s" % (count // size, unit)
    return "%.3fM" % (count / (1 << 20))


def best(rows, key="time_s"):
    return min(rows, key=lambda row: num(row, key))


def image(path, alt):
    return "![%s](%s)\n" % (alt, path)


def version(experiment, stem):
    """The tool that wrote a sweep's results, as its sweep.json records it."""
    with open(ROOT / experiment / "results" / stem / "sweep.json") as handle:
        record = json.load(handle)
    return "%s %s" % (record["tool"], record["version"])


def header(title, specs, experiment):
    spec_list = ", ".join("[`%s.yaml`](%s.yaml)" % (stem, stem) for stem in specs)
    return ("# %s\n\n*Generated by `python3 experiments/report.py` with %s from %s; do not edit by hand.*\n\n"
            % (title, version(experiment, specs[0]), spec_list))
