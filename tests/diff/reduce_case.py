#!/usr/bin/python3
"""Shrinks a failing `.sf` program to a 1-minimal one that still fails the same way.

    /usr/bin/python3 tests/diff/reduce_case.py PROG.sf --nproc N --match REGEX
                     [--symmflow PATH] [--out SMALL.sf] [--timeout SEC]

Repeatedly deletes one statement with everything that uses its results (or
one returned value), keeping a candidate
when `SF run CAND --check --nproc N` still prints something matching REGEX
(e.g. 'MISMATCH', 'verifier \\(after reinplace\\)', or 'exit 139' for a
crash) and the candidate is still a valid, race-free program: it must run in
the PyTorch reference runner with identical results under adversarial P2P
delivery (race_oracle.py). Stops when no single deletion keeps the failure.
An intermittent failure needs --tries (a candidate fails when any try does).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)


def split_top(s):
    """Splits 'f32[2, 3], i64[4]' at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


class Program:
    """A .sf file as header, statement lines and the returned values."""

    def __init__(self, text):
        lines = [l for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
        self.head = lines[0]
        m = re.match(r"(.*->\s*\()(.*)(\)\s*\{\s*)$", self.head)
        self.head_pre, self.rtypes, self.head_post = m.group(1), split_top(m.group(2)), m.group(3)
        ret = [l for l in lines if l.strip().startswith("return")][0]
        self.rvals = [v.strip() for v in ret.strip()[len("return"):].split(",") if v.strip()]
        self.body = [l for l in lines[1:] if not l.strip().startswith("return") and l.strip() != "}"]

    def text(self):
        head = self.head_pre + ", ".join(self.rtypes) + self.head_post
        return "\n".join([head] + self.body + ["  return " + ", ".join(self.rvals), "}"]) + "\n"

    def without(self, stmt=None, ret=None):
        """A copy with statement `stmt` and every statement that uses what it
        defines (transitively; returned values too), or with returned value
        `ret`, deleted. None when nothing would be left to return."""
        p = Program(self.text())
        if ret is not None:
            del p.rvals[ret]
            del p.rtypes[ret]
            return p
        gone, names = {stmt}, set(defs(p.body[stmt]))
        for j in range(stmt + 1, len(p.body)):
            if uses(p.body[j]) & names:
                gone.add(j)
                names |= defs(p.body[j])
        p.body = [l for j, l in enumerate(p.body) if j not in gone]
        keep = [i for i, v in enumerate(p.rvals) if v not in names]
        if not keep:
            return None
        p.rvals = [p.rvals[i] for i in keep]
        p.rtypes = [p.rtypes[i] for i in keep]
        return p


def defs(line):
    """The values a statement defines."""
    lhs = line.split("=", 1)[0] if re.match(r"\s*%[\w.]+(\s*,\s*%[\w.]+)*\s*=", line) else ""
    return set(re.findall(r"%[\w.]+", lhs))


def uses(line):
    rhs = line.split("=", 1)[1] if defs(line) else line
    return set(re.findall(r"(?<![\w)\]])%[\w.]+", rhs))  # not the `%` of `(rank+1)%world`


def fails(args, text):
    """Does the program fail as --match says (in any of --tries runs)?"""
    return any(fails_once(args, text) for _ in range(args.tries))


def fails_once(args, text):
    with tempfile.NamedTemporaryFile("w", suffix=".sf", delete=False) as f:
        f.write(text)
    try:
        proc = subprocess.Popen([args.symmflow, "run", f.name, "--check", "--nproc", str(args.nproc)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=args.timeout)
            status = f"exit {proc.returncode}"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, _ = proc.communicate()
            status = "timed out"
        return re.search(args.match, out.decode(errors="replace") + "\n" + status) is not None
    finally:
        os.unlink(f.name)


def valid(args, text):
    import race_oracle
    with tempfile.NamedTemporaryFile("w", suffix=".sf", delete=False) as f:
        f.write(text)
    try:
        return race_oracle.check_one(f.name, args.nproc, 0, 120) is None
    finally:
        os.unlink(f.name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("program")
    ap.add_argument("--nproc", type=int, required=True)
    ap.add_argument("--match", required=True, help="regex over the output (+ 'exit N' / 'timed out')")
    ap.add_argument("--symmflow", default=os.path.join(ROOT, "build", "dev", "symmflow"))
    ap.add_argument("--timeout", type=int, default=30)
    ap.add_argument("--tries", type=int, default=1, help="runs per candidate, for intermittent failures")
    ap.add_argument("--out", help="write the reduced program here (default: stdout)")
    args = ap.parse_args(argv)
    with open(args.program) as f:
        prog = Program(f.read())
    if not fails(args, prog.text()):
        print("reduce_case: the program does not fail as --match says", file=sys.stderr)
        return 2
    def keep(cand):
        text = cand.text()
        return fails(args, text) and valid(args, text)

    progress = True
    while progress:
        progress = False
        i = 0
        while i < len(prog.body):
            cand = prog.without(stmt=i)
            if cand is not None and keep(cand):
                prog, progress = cand, True
                print(f"reduce_case: {len(prog.body)} statements", file=sys.stderr)
            else:
                i += 1
        i = 0
        while len(prog.rvals) > 1 and i < len(prog.rvals):
            cand = prog.without(ret=i)
            if keep(cand):
                prog, progress = cand, True
            else:
                i += 1
    text = f"# reduced from {os.path.basename(args.program)} (nproc {args.nproc}, /{args.match}/)\n" + prog.text()
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
