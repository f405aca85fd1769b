#!/usr/bin/env python3
"""Checks that every number a tutorial page quotes from a program is what the program prints.

Usage:
  prose_numbers.py DOC.md --run NAME=COMMAND [--run NAME=COMMAND ...] [--facts DIR] [--mutation-test]

Each --run NAME=COMMAND runs COMMAND (split like a shell line; `{tmp}` becomes a fresh
temporary directory shared by the runs of this call), in the order given, and keeps its
output under NAME. Exit status 77 from a program means "skipped" (e.g. no numpy): the
claims on its output are not checked and this script exits 77 if nothing failed.
--facts DIR adds a pseudo-program `facts` whose output is computed here from the
programs in DIR (and DIR/solutions): `max_program_lines=N` (the longest .cpp/.hpp/.py
file), `programs=N` and `chapters=N` (the pages NN-*.md or NNa-*.md beside DOC.md).

The markup, read in DOC.md (docs/tutorial/README.md explains it to readers):

  <!-- output: NAME -->   before an indented or fenced code block: every line of the
      block except `...` must equal a line NAME printed, in the same order. Lines are
      compared token by token: the text between numbers must be equal (runs of blanks
      count as one), and each quoted number must agree with the printed one to the
      digits quoted (|printed - quoted| <= half a unit of the quoted last digit). A
      quoted `<B` (or `>B`) stands for a number whose digits depend on the machine and
      claims |printed| < B (> B).
  NUMBER<!-- KEY -->     in prose: NUMBER agrees with the value KEY names, to the digits
  NUMBER<!-- KEY < -->   quoted; with `<` (`>`) the value is below (above) NUMBER.
      KEY is [NAME:]WHAT, NAME defaulting to the first --run. WHAT is either a template
      in double quotes, `"angle {} rad"`, whose `{}` is the number and whose `...` skips
      any text, found on exactly one output line; or a bare word, the value of the check
      line of that name (`check: WHAT kind=VALUE ...`) or of exactly one `WHAT=VALUE`.

A block holding a `check:` line that is not marked as output is an error, so a quoted
check line cannot escape the test; so is a relative link to a file that does not exist. --mutation-test also proves the test can fail: it
moves the last digit of every quoted number by two units, one at a time, and requires
each such edit to be caught.
"""
import argparse
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile

NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
TOKEN_RE = re.compile(r"[<>]" + NUM + r"|(?<![\d.])" + NUM)
MARK_RE = re.compile(r"(" + NUM + r")<!--\s*(.*?)\s*-->")
OUTPUT_RE = re.compile(r"<!--\s*output:\s*(\S+)\s*-->")
WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
         "eleven": 11, "twelve": 12}
WORD_MARK_RE = re.compile(r"\b(" + "|".join(WORDS) + r")<!--\s*(.*?)\s*-->", re.IGNORECASE)


def normalise(text):
    """Unicode minus to ASCII, so prose written with − compares with printed -."""
    return text.replace("\u2212", "-")


def prose(line):
    """The line normalised, with `code spans` blanked (a marker shown as code is not one);
    every index is kept."""
    return re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), normalise(line))


def value(token):
    return float(token.replace(",", ""))


def agrees(quoted, printed):
    """printed agrees with quoted to the digits quoted (half a unit of the last one)."""
    q = value(quoted)
    mant, _, exp = quoted.replace(",", "").lower().lstrip("+-").partition("e")
    decimals = len(mant.partition(".")[2])
    unit = 10.0 ** ((int(exp) if exp else 0) - decimals)
    return abs(printed - q) <= 0.5 * unit * (1 + 1e-9) + 1e-300


def claim_holds(quoted, printed):
    if quoted[0] == "<":
        return abs(printed) < value(quoted[1:])
    if quoted[0] == ">":
        return abs(printed) > value(quoted[1:])
    return agrees(quoted, printed)


def split(line):
    """A line as (texts, numbers): texts has one more entry than numbers."""
    line = normalise(line)
    texts, numbers, pos = [], [], 0
    for m in TOKEN_RE.finditer(line):
        texts.append(" ".join(line[pos:m.start()].split()))
        numbers.append(m.group(0))
        pos = m.end()
    texts.append(" ".join(line[pos:].split()))
    return texts, numbers


def line_matches(quoted, printed):
    qt, qn = split(quoted)
    pt, pn = split(printed)
    if qt != pt or len(qn) != len(pn):
        return False
    return all(claim_holds(q, value(p)) for q, p in zip(qn, pn))


class Doc:
    """The claims of one markdown page: output blocks and marked prose numbers."""

    def __init__(self, text):
        self.blocks = []  # (program, first line number, [lines])
        self.marks = []   # (line number, quoted, key)
        self.errors = []
        lines = text.split("\n")
        i, pending = 0, None
        while i < len(lines):
            line = lines[i]
            m = OUTPUT_RE.search(line)
            if m:
                pending = (m.group(1), i + 1)
                i += 1
                continue
            if line.startswith("```"):
                j = i + 1
                while j < len(lines) and not lines[j].startswith("```"):
                    j += 1
                self._block(pending, i + 2, lines[i + 1:j])
                pending, i = None, j + 1
                continue
            if line.startswith("    ") and (i == 0 or not lines[i - 1].strip() or pending):
                j = i
                while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                    j += 1
                while j > i and not lines[j - 1].strip():
                    j -= 1
                self._block(pending, i + 1, [l[4:] for l in lines[i:j]])
                pending, i = None, j
                continue
            if pending and line.strip():
                self.errors.append(f"line {pending[1]}: <!-- output: {pending[0]} --> is not followed by a code block")
                pending = None
            for m in MARK_RE.finditer(prose(line)):
                self.marks.append((i + 1, m.group(1), m.group(2)))
            for m in WORD_MARK_RE.finditer(prose(line)):
                self.marks.append((i + 1, str(WORDS[m.group(1).lower()]), m.group(2)))
            i += 1

    def _block(self, pending, first, block):
        if pending:
            self.blocks.append((pending[0], first, block))
        elif any(l.lstrip().startswith("check: ") for l in block):
            self.errors.append(f"line {first}: a block quotes a check: line but has no <!-- output: NAME --> marker")


def broken_links(text, directory):
    """Relative links [text](path) whose file does not exist."""
    bad = []
    for n, line in enumerate(text.split("\n"), 1):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", line):
            if "://" not in target and not os.path.exists(os.path.join(directory, target)):
                bad.append(f"line {n}: link to {target}, which does not exist")
    return bad


def find_value(output, what):
    """The number WHAT names in a program's output, or an error string."""
    if what.startswith('"') and what.endswith('"'):
        parts = what[1:-1].split("{}")
        if len(parts) != 2:
            return None, f"template {what} needs exactly one {{}}"
        # literal text, `...` skipping any text, a run of blanks matching any run
        parts = [r"\s+".join(".*?".join(map(re.escape, w.split("..."))) for w in re.split(r"\s+", p)) for p in parts]
        pattern = re.compile(parts[0] + "(" + NUM + r")(?![\d.])" + parts[1])
        found = [m.group(1) for line in output for m in [pattern.search(line)] if m]
    else:
        check = re.compile(r"^check: " + re.escape(what) + r" \w+=(" + NUM + r") ")
        found = [m.group(1) for line in output for m in [check.search(line)] if m]
        if not found:
            kv = re.compile(r"(?<![\w.])" + re.escape(what) + r"\s*=\s*(" + NUM + r")")
            found = [m.group(1) for line in output for m in kv.finditer(line)]
    if len(found) != 1:
        return None, f"{what} found {len(found)} times in the output (want exactly once)"
    return value(found[0]), None


def check(doc, outputs, default, skipped):
    """Failure messages for every claim of doc that the outputs contradict."""
    failures = list(doc.errors)
    for program, first, block in doc.blocks:
        if program in skipped:
            continue
        if program not in outputs:
            failures.append(f"line {first}: no --run named {program}")
            continue
        out, pos = outputs[program], 0
        for k, quoted in enumerate(block):
            if quoted.strip() in ("...", ""):
                continue
            j = next((j for j in range(pos, len(out)) if line_matches(quoted, out[j])), None)
            if j is None:
                near = next((o for o in out if split(o)[0] == split(quoted)[0]), None)
                hint = f"\n    printed: {near}" if near else " (no printed line has this text)"
                failures.append(f"line {first + k}: quoted output not printed by {program}, in order:\n"
                                f"    quoted:  {quoted}{hint}")
            else:
                pos = j + 1
    for line, quoted, key in doc.marks:
        relation = "="
        if key.endswith(("<", ">")):
            relation, key = key[-1], key[:-1].rstrip()
        program, _, what = key.rpartition(":") if not key.startswith('"') else ("", "", key)
        program = program or default
        if program in skipped:
            continue
        if program not in outputs:
            failures.append(f"line {line}: no --run named {program}")
            continue
        printed, err = find_value(outputs[program], what)
        if err:
            failures.append(f"line {line}: {program}: {err}")
            continue
        ok = {"=": agrees(quoted, printed), "<": printed < value(quoted), ">": printed > value(quoted)}[relation]
        if not ok:
            says = {"=": "", "<": "below ", ">": "above "}[relation]
            failures.append(f"line {line}: the text says {what} is {says}{quoted}; {program} printed {printed:.6g}")
    return failures


def mutate(token):
    """The quoted token with its last mantissa digit moved by two units."""
    m = re.match(r"^([<>]?[-+]?[\d,.]*?)(\d)((?:[eE][-+]?\d+)?)$", token)
    d = int(m.group(2))
    return m.group(1) + str(d - 2 if d >= 2 else d + 2) + m.group(3)


def mutation_test(text, outputs, default, skipped):
    """Edits each quoted value (not a bound) in turn; every edit must be caught."""
    uncaught, edits = [], 0
    lines = text.split("\n")
    for n, line in enumerate(lines):
        # the same positions in the normalised line (− to - keeps every index)
        for s, e in [(m.start(1), m.end(1)) for m in MARK_RE.finditer(prose(line))
                     if not m.group(2).endswith(("<", ">"))]:
            plain = normalise(line)
            edited = lines[:n] + [plain[:s] + mutate(plain[s:e]) + plain[e:]] + lines[n + 1:]
            edits += 1
            if not check(Doc("\n".join(edited)), outputs, default, skipped):
                uncaught.append(f"line {n + 1}: editing {plain[s:e]} to {mutate(plain[s:e])} was not caught")
    doc = Doc(text)
    for program, first, block in doc.blocks:
        if program in skipped:
            continue
        for k, quoted in enumerate(block):
            for m in TOKEN_RE.finditer(quoted):
                if m.group(0)[0] in "<>":
                    continue
                n = first - 1 + k
                original = lines[n]
                offset = original.index(quoted)
                s, e = offset + m.start(), offset + m.end()
                edited = lines[:n] + [original[:s] + mutate(original[s:e]) + original[e:]] + lines[n + 1:]
                edits += 1
                if not check(Doc("\n".join(edited)), outputs, default, skipped):
                    uncaught.append(f"line {n + 1}: editing {m.group(0)} to {mutate(m.group(0))} was not caught")
    return edits, uncaught


def facts(directory, docs):
    files = []
    for d in (directory, os.path.join(directory, "solutions")):
        if os.path.isdir(d):
            files += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith((".cpp", ".hpp", ".py"))]
    lengths = {f: sum(1 for _ in open(f, encoding="utf-8")) for f in files}
    longest = max(lengths, key=lengths.get)
    programs = sum(1 for f in files if f.endswith((".cpp", ".py")))
    chapters = sum(1 for f in os.listdir(docs) if re.match(r"\d\d[a-z]?-.*\.md$", f))
    return [f"max_program_lines={lengths[longest]} ({os.path.relpath(longest, directory)})", f"programs={programs}",
            f"chapters={chapters}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("doc")
    ap.add_argument("--run", action="append", default=[], metavar="NAME=COMMAND")
    ap.add_argument("--facts", metavar="DIR")
    ap.add_argument("--mutation-test", action="store_true")
    args = ap.parse_args()
    text = open(args.doc, encoding="utf-8").read()
    outputs, skipped, order = {}, set(), []
    with tempfile.TemporaryDirectory(prefix="prose_numbers_") as tmp:
        for spec in args.run:
            name, _, command = spec.partition("=")
            argv = [a.replace("{tmp}", tmp) for a in shlex.split(command)]
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            order.append(name)
            if proc.returncode == 77:
                print(f"prose_numbers: {name} skipped (exit 77); its claims are not checked")
                skipped.add(name)
            elif proc.returncode != 0:
                print(proc.stdout)
                print(f"prose_numbers: {name} exited {proc.returncode}")
                return 1
            outputs[name] = proc.stdout.split("\n")
    if args.facts:
        outputs["facts"] = facts(args.facts, os.path.dirname(os.path.abspath(args.doc)))
        order.append("facts")
    doc = Doc(text)
    default = order[0] if order else None
    failures = check(doc, outputs, default, skipped) + broken_links(text, os.path.dirname(os.path.abspath(args.doc)))
    quoted_lines = sum(len([l for l in b if l.strip() not in ("", "...")]) for _, _, b in doc.blocks)
    for f in failures:
        print(f"{args.doc}:{f}")
    if failures:
        print(f"prose_numbers: {len(failures)} claim(s) of {args.doc} contradict the output")
        return 1
    print(f"prose_numbers: {args.doc}: {quoted_lines} quoted output lines and {len(doc.marks)} marked numbers "
          f"agree with {', '.join(order)}")
    if args.mutation_test:
        edits, uncaught = mutation_test(text, outputs, default, skipped)
        for u in uncaught:
            print(f"{args.doc}:{u}")
        if uncaught:
            return 1
        print(f"prose_numbers: all {edits} one-digit edits of quoted numbers were caught")
    return 77 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
