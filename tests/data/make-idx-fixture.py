#!/usr/bin/env python3
"""Writes the tiny IDX fixture of tests/test_models.c into tests/data/idx-tiny/.

Two splits in the layout of Fashion-MNIST (gzip-compressed IDX files of unsigned bytes):
  train: 20 images of 6 rows x 7 columns, pixel (i, r, c) = (37 i + 11 r + 3 c) mod 256,
         label i mod 10
  t10k:  10 images of 6 x 7, pixel (i, r, c) = (5 i + 13 r + 17 c + 1) mod 256,
         label (3 i) mod 10
The test recomputes these formulas, so the expected values do not come from the reader.
The gzip header carries no name and mtime 0: the files are byte-for-byte reproducible.
Usage: tests/data/make-idx-fixture.py [OUTDIR]   (default: idx-tiny next to this script)
"""
import gzip
import os
import struct
import sys

ROWS, COLS = 6, 7


def write_gz(path, payload):
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(payload)


def images(n, pix):
    head = struct.pack(">BBBB", 0, 0, 8, 3) + struct.pack(">III", n, ROWS, COLS)
    body = bytes(pix(i, r, c) % 256 for i in range(n) for r in range(ROWS) for c in range(COLS))
    return head + body


def labels(n, lab):
    return struct.pack(">BBBB", 0, 0, 8, 1) + struct.pack(">I", n) + bytes(lab(i) for i in range(n))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "idx-tiny")
    os.makedirs(out, exist_ok=True)
    write_gz(os.path.join(out, "train-images-idx3-ubyte.gz"),
             images(20, lambda i, r, c: 37 * i + 11 * r + 3 * c))
    write_gz(os.path.join(out, "train-labels-idx1-ubyte.gz"), labels(20, lambda i: i % 10))
    write_gz(os.path.join(out, "t10k-images-idx3-ubyte.gz"),
             images(10, lambda i, r, c: 5 * i + 13 * r + 17 * c + 1))
    write_gz(os.path.join(out, "t10k-labels-idx1-ubyte.gz"), labels(10, lambda i: (3 * i) % 10))


if __name__ == "__main__":
    main()
