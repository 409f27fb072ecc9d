#!/usr/bin/python3
"""Dynamic race check of `.sf` programs, in PyTorch.

    /usr/bin/python3 tests/diff/race_oracle.py FILE.sf... [--nproc N | --worlds 1,2,3,4]

Runs each program twice with the reference runner (tests/torch/sf_torch.py):
as it is, and *adversarially*: every receive buffer is poisoned (NaN, or
-123456789 for integers) from its post to its wait and gets its data only at
the wait; every send transmits a snapshot taken at its post. A race-free
program gives bitwise identical outputs and final inputs both ways. A program
that reads a receive buffer before its wait shows the poison in its results;
one that writes a send buffer or a receive buffer in flight fails the wait (the
send buffer changed / the poison is gone); one that never waits a P2P op fails
at its return. Independent of gen_programs.py's own model, so it validates it.

Prints one line per failure and `race: N passed, M failed`; exit 1 on any failure.
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "torch"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import sf_torch  # noqa: E402

POISON = {torch.float32: float("nan"), torch.float64: float("nan"), torch.float16: float("nan"),
          torch.bfloat16: float("nan"), torch.int32: -123456789, torch.int64: -123456789}


def _raw(t):
    return t.detach().contiguous().reshape(-1).view(torch.uint8).clone()


def install_adversary():
    """Wraps sf_torch.Dist's P2P posts: late delivery, poisoned receives, snapshotted sends."""
    orig_send, orig_recv = sf_torch.Dist.post_send, sf_torch.Dist.post_recv

    def post_send(self, op, t, peer, tag):
        snap = t.clone(memory_format=torch.contiguous_format)
        before = _raw(t)
        orig_send(self, op, snap, peer, tag)
        entry = self.works[-1]
        fin = entry[2]

        def check(t=t, before=before, fin=fin):
            if fin is not None:
                fin()
            if not torch.equal(_raw(t), before):
                raise sf_torch.OpError(op, "race: send buffer (peer %d, tag %d) written before its "
                                       "wait" % (peer, tag), rc=1)
        entry[0], entry[2] = t, check

    def post_recv(self, op, t, peer, tag):
        tmp = torch.empty(t.shape, dtype=t.dtype)
        orig_recv(self, op, tmp, peer, tag)
        entry = self.works[-1]
        fin = entry[2]
        poison = POISON.get(t.dtype)
        if poison is not None:
            t.fill_(poison)

        def deliver(t=t, tmp=tmp, fin=fin):
            if fin is not None:
                fin()
            intact = poison is None or bool((t.isnan() if poison != poison else t == poison).all())
            if not intact:
                raise sf_torch.OpError(op, "race: receive buffer (peer %d, tag %d) written before "
                                       "its wait" % (peer, tag), rc=1)
            t.copy_(tmp)
        entry[0], entry[2] = t, deliver

    def wait_all(self):
        if self.works:
            raise sf_torch.OpError("return", "%d P2P op(s) never waited with c10d::wait_tensor"
                                   % len(self.works), rc=1)

    sf_torch.Dist.post_send, sf_torch.Dist.post_recv = post_send, post_recv
    sf_torch.Dist.wait_all = wait_all


def outputs(d):
    return {f: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check_one(path, nproc, seed, timeout):
    """None when race-free, else a message."""
    with open(path) as f:
        text = f.read()
    tmp = tempfile.mkdtemp(prefix="sf-race-")
    try:
        plain, adv = os.path.join(tmp, "plain"), os.path.join(tmp, "adv")
        os.makedirs(plain)
        os.makedirs(adv)
        rc, err = sf_torch.run_program(text, nproc=nproc, seed=seed, out_dir=plain, filename=path,
                                       timeout=timeout)
        if rc != 0:
            last = err.strip().splitlines()
            return "the reference runner failed (rc %d): %s" % (rc, last[-1] if last else "")
        # the adversarial run, in a child so the patch stays out of this process
        pid = os.fork()
        if pid == 0:
            install_adversary()
            rc, err = sf_torch.run_program(text, nproc=nproc, seed=seed, out_dir=adv, filename=path,
                                           timeout=timeout)
            if rc != 0:
                with open(os.path.join(tmp, "adv.err"), "w") as f:
                    f.write(err)
            os._exit(rc)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            with open(os.path.join(tmp, "adv.err")) as f:
                return "adversarial run failed: " + f.read().strip().splitlines()[-1]
        a, b = outputs(plain), outputs(adv)
        if a.keys() != b.keys():
            return "different output files: %s vs %s" % (sorted(a), sorted(b))
        for k in a:
            if not same_bits(a[k], b[k]):
                return "%s differs when receives are delivered late (a read before a wait?)" % k
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--nproc", type=int, default=None, help="one world size for every file")
    ap.add_argument("--worlds", default="1,2,3,4",
                    help="without --nproc: the i-th file runs at the (i mod k)-th of these")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args(argv)
    worlds = [args.nproc] if args.nproc else [int(w) for w in args.worlds.split(",")]
    passed = failed = 0
    for i, path in enumerate(args.files):
        n = worlds[i % len(worlds)]
        msg = check_one(path, n, args.seed, args.timeout)
        if msg:
            failed += 1
            print("FAIL %s (nproc %d): %s" % (path, n, msg), flush=True)
        else:
            passed += 1
    print("race: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
