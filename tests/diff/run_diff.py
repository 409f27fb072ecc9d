#!/usr/bin/env python3
"""Differential tests: eager vs compiled, bitwise, with `symmflow run --check`.

    python3 tests/diff/run_diff.py [--symmflow PATH] [--gen-count C] [--gen-seed S]
                                   [-j J] [--timeout SEC] [--filter TEXT] [-v]
                                   [--repro] [--open-repro] [--no-coll-during-p2p] [--runner torch]

Runs `SF run PROG --check --nproc N` for
  - every hand-written program in tests/diff/programs/ and examples/*/ at
    N = 2, 3 and 4, and
  - C generated programs (default 200, from a fixed seed; every fifth one
    world-agnostic) at N = 1, 2, 3, 4 in turn,
each under a timeout (default 60 s; -j 1 by default, as the ranks of one
program already use the cores). A failure prints the command that reproduces
it and the tail of its output. --repro adds tests/diff/repro/*.sf (reduced
findings, fixed: regression tests) and --open-repro tests/diff/repro_open/*.sf
(not fixed yet), each at the world size it names. The last line is exactly
`diff: N passed, M failed`; the exit status is 0 only when nothing failed.

--runner torch runs the same programs in the PyTorch reference runner
(tests/torch/sf_torch.py) instead: a check that the programs are valid, with no
eager/compiled comparison (programs in the `functional` form are skipped there).
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import gen_programs  # noqa: E402

DEFAULT_GEN_SEED = 20240611
TORCH_PYTHON = "/usr/bin/python3"  # Debian's python3-torch


def rel(p):
    r = os.path.relpath(p, os.getcwd())
    return p if r.startswith("../..") else r


class Case:
    def __init__(self, path, nproc, regen=None):
        self.path, self.nproc, self.regen = path, nproc, regen


def hand_written(nprocs, flt):
    """tests/diff/programs/*.sf, and examples/<ex>/*.sf (the blog kernel, halo2d, ring
    attention, the TP MLP, the pipelines; not examples/plugin/, whose program needs its
    library loaded). A program with a `# nproc: 2, 4` line runs at those sizes only, as
    in tests/torch/conformance.py (pipeline_1f1b.sf holds the stages of 2 and of 4)."""
    files = sorted(glob.glob(os.path.join(HERE, "programs", "*.sf")))
    files += sorted(f for f in glob.glob(os.path.join(ROOT, "examples", "*", "*.sf"))
                    if os.path.basename(os.path.dirname(f)) != "plugin")
    cases = []
    for f in files:
        m = re.search(r"^#\s*nproc:\s*([0-9 ,]+)$", open(f).read(), re.M)
        sizes = [int(n) for n in re.split(r"[ ,]+", m.group(1).strip())] if m else nprocs
        cases += [Case(f, n) for n in nprocs if n in sizes and flt in f]
    return cases


def repros(flt, folder="repro"):
    """tests/diff/<folder>/*.sf, each at the world size its `--nproc N` comment names."""
    d = os.path.join(HERE, folder)
    cases = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        path = os.path.join(d, f)
        if f.endswith(".sf") and flt in path:
            m = re.search(r"--nproc (\d+)", open(path).read())
            cases.append(Case(path, int(m.group(1)) if m else 2))
    return cases


def generated(count, seed, gen_dir, flt, coll_during_p2p=True):
    cases = []
    extra = "" if coll_during_p2p else " --no-coll-during-p2p"
    for i in range(count):
        agnostic = i % 5 == 4
        g, text = gen_programs.generate(seed, i, agnostic, coll_during_p2p)
        path = os.path.join(gen_dir, f"{g.name}.sf")
        if flt not in path:
            continue
        with open(path, "w") as f:
            f.write(text)
        regen = (f"python3 {rel(os.path.join(HERE, 'gen_programs.py'))} --seed {seed} "
                 f"--count {i + 1} --out DIR{' --world-agnostic' if agnostic else ''}{extra}  # then DIR/{g.name}.sf")
        cases.append(Case(path, i % 4 + 1, regen))
    return cases


def command(args, case, out_dir):
    if args.runner == "torch":
        return [TORCH_PYTHON, os.path.join(ROOT, "tests", "torch", "sf_torch.py"), rel(case.path),
                "--nproc", str(case.nproc), "--save-outputs", out_dir]
    return [args.symmflow, "run", rel(case.path), "--check", "--nproc", str(case.nproc)]


def hung(status, text):
    """A run that hung: the harness's limit, a rank's wait deadline, or the
    runtime's deadlock report (which names every rank's pending op)."""
    return status.startswith("timed out") or "timeout after" in text or "deadlock: " in text


def run_case(args, case):
    """(ok, message): message holds the exit status and the output's tail."""
    out_dir = tempfile.mkdtemp(prefix="sf-diff-out-")
    cmd = command(args, case, out_dir)
    try:
        # A rank's wait deadline well inside the harness's limit: a hang ends with
        # the runtime's own message naming what each rank waits for.
        env = dict(os.environ, SYMMFLOW_TIMEOUT=str(max(5, args.timeout // 3)))
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True, env=env)
        try:
            out, _ = proc.communicate(timeout=args.timeout)
            status = f"exit {proc.returncode}"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher and every rank it started
            out, _ = proc.communicate()
            status = f"timed out after {args.timeout} s"
        text = out.decode(errors="replace")
        ok = status == "exit 0"
        if ok and args.runner == "symmflow" and "check: OK" not in text:
            ok, status = False, "exit 0 without a 'check: OK' line"
        return ok, cmd, status, text
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def preflight(args):
    """None when the runner can run, else why not."""
    if args.runner == "torch":
        script = os.path.join(ROOT, "tests", "torch", "sf_torch.py")
        return None if os.path.exists(script) else f"{script} does not exist"
    if not os.access(args.symmflow, os.X_OK):
        return f"{args.symmflow} is not an executable (build it, or pass --symmflow)"
    try:
        r = subprocess.run([args.symmflow, "run", "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
    except subprocess.TimeoutExpired:
        return f"`{args.symmflow} run --help` timed out"
    if r.returncode != 0 or b"--check" not in r.stdout:
        return f"`{args.symmflow} run --help` has no --check (exit {r.returncode})"
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--symmflow", default=os.path.join(ROOT, "build", "dev", "symmflow"))
    ap.add_argument("--runner", choices=("symmflow", "torch"), default="symmflow")
    ap.add_argument("--gen-count", type=int, default=200)
    ap.add_argument("--gen-seed", type=int, default=DEFAULT_GEN_SEED)
    ap.add_argument("--gen-dir", help="write generated programs here and keep them "
                    "(default: a temporary directory, kept only when something failed)")
    ap.add_argument("--no-coll-during-p2p", action="store_true",
                    help="generate no collective while a P2P op is in flight (see gen_programs.py)")
    ap.add_argument("--hand-nprocs", default="2,3,4")
    ap.add_argument("--repro", action="store_true",
                    help="also run tests/diff/repro/*.sf (reduced, fixed findings) at their world size")
    ap.add_argument("--open-repro", action="store_true",
                    help="also run tests/diff/repro_open/*.sf (reduced findings not fixed yet)")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=60, help="seconds per program")
    ap.add_argument("--filter", default="", help="only programs whose path contains this")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every passing case too")
    args = ap.parse_args(argv)

    gen_dir = args.gen_dir or tempfile.mkdtemp(prefix="sf-diff-gen-")
    os.makedirs(gen_dir, exist_ok=True)
    cases = hand_written([int(n) for n in args.hand_nprocs.split(",") if n], args.filter)
    if args.repro:
        cases += repros(args.filter)
    if args.open_repro:
        cases += repros(args.filter, "repro_open")
    cases += generated(args.gen_count, args.gen_seed, gen_dir, args.filter, not args.no_coll_during_p2p)
    skipped = 0
    if args.runner == "torch":  # the reference runner refuses the functional form by design
        keep = [c for c in cases if " functional " not in open(c.path).read()]
        skipped, cases = len(cases) - len(keep), keep

    why = preflight(args)
    if why:
        print(f"run_diff: cannot run: {why}", file=sys.stderr)
        print(f"diff: 0 passed, {len(cases)} failed")
        return 2

    passed = failed = 0
    hangs = []  # (case, first attempt's status and output): hung once, passed when run again
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [(c, pool.submit(run_case, args, c)) for c in cases]
        for case, fut in futures:
            ok, cmd, status, text = fut.result()
            if not ok and hung(status, text):
                # An intermittent hang, not yet root-caused (seen about once in 3000
                # program runs of this suite, never when the program is run alone
                # 120 times): run it again, and say so below with the first attempt's
                # diagnostics (the deadlock report, or the ranks' wait deadlines,
                # name what each rank waits for and where).
                # Hanging twice is a failure.
                first = (status, text)
                ok, cmd, status, text = run_case(args, case)
                if ok:
                    hangs.append((case, first))
            if ok:
                passed += 1
                if args.verbose:
                    print(f"PASS {rel(case.path)} --nproc {case.nproc}", flush=True)
                continue
            failed += 1
            print(f"FAIL {rel(case.path)} --nproc {case.nproc}: {status}")
            print(f"  reproduce: {shlex.join(cmd)}")
            if case.regen:
                print(f"  regenerate: {case.regen}")
            for line in text.rstrip().splitlines()[-12:]:
                print(f"  | {line}")
            sys.stdout.flush()

    if args.gen_dir is None:
        if failed and args.gen_count > 0:
            print(f"generated programs kept in {gen_dir}")
        else:
            shutil.rmtree(gen_dir, ignore_errors=True)
    for case, (status, text) in hangs:
        print(f"HUNG ONCE, passed on the rerun: {rel(case.path)} --nproc {case.nproc}: {status}")
        for line in text.rstrip().splitlines()[-8:]:
            print(f"  | {line}")
    if skipped:
        print(f"({skipped} cases in the functional form skipped by the torch runner)")
    print(f"diff: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
