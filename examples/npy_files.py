"""The .npy files the examples' reference checks exchange with `symmflow run`
(--inputs, --save-outputs): little-endian f32 in C order, plain Python (no
numpy needed)."""
import array
import ast
import sys


def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{n}, " for n in shape)
    pad = 64 - (10 + len(header) + 1) % 64  # the whole header a multiple of 64 bytes, ending in '\n'
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1"))
        array.array("f", values).tofile(f)


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x93NUMPY\x01\x00":
        sys.exit(f"{path}: expected a .npy file of format version 1.0, found {data[:8]!r}")
    n = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + n].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        sys.exit(f"{path}: expected little-endian f32 in C order, found {header}")
    values = array.array("f")
    values.frombytes(data[10 + n:])
    return header["shape"], values
