"""Where in the user's source a call comes from, for errors and for the comment
each traced statement carries: the innermost frame that is neither torch's nor
symmflow's own."""
import os
import traceback

import torch

_TORCH_DIR = os.path.dirname(torch.__file__)
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame(frames):
    """The innermost frame that is the user's code (not torch's, not symmflow's)."""
    for f in reversed(frames):
        fn = os.path.abspath(f.filename)
        if not fn.startswith(_TORCH_DIR) and not fn.startswith(_PKG_DIR) and "<frozen" not in fn:
            return f
    return None


def caller():
    """The user's file:line that called into symmflow (for error messages)."""
    f = user_frame(traceback.extract_stack())
    return f"{f.filename}:{f.lineno}" if f else "<unknown location>"


def where(frame):
    """file:line: code of a frame (the comment on a traced statement)."""
    if frame is None:
        return "<unknown location>"
    code = (frame.line or "").strip()
    return f"{frame.filename}:{frame.lineno}" + (f": {code}" if code else "")
