#!/usr/bin/env python3
"""Hostile checkpoint files (issue 26), written into the folder given: each costs a careless reader
time, memory or silence. tests/hostile/measure.sh times a reader on each with /usr/bin/time -v.

  many_keys.safetensors      64,000 empty tensors (3.7 MB header): quadratic under an ordered JSON map
  header_limit.safetensors   a header of ~10^8 bytes (the format's limit) of 1.6 million empty tensors
  metadata_limit.safetensors ~10^8 bytes of "__metadata__" keys, one real tensor
  index/                     a sharded index of 500,000 keys over one shard of 500,000 empty tensors
  forged_600k.npz            a 600 KB deflate stream whose directory and .npy header claim 620 MB of
                             float16 (2.5 GB as float64); the stream holds 600 KB
  forged_20m.npz             the same with 20 MB claiming 20.6 GB (zip64): 82 GB as float64
  crc_flip.npz               one flipped bit in a stored member's data (numpy raises BadZipFile)
"""
import json
import os
import struct
import sys
import zlib

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def safetensors(path, header, data=b""):
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def empty_entries(n, prefix="t"):
    return {f"{prefix}{i:07d}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(n)}


safetensors(f"{out}/many_keys.safetensors", empty_entries(64_000))
safetensors(f"{out}/header_limit.safetensors", empty_entries(1_600_000))  # ~ 0.99e8 bytes
meta = {f"k{i:09d}": "v" for i in range(5_800_000)}                      # ~ 0.99e8 bytes
w = np.arange(12, dtype="<f4")
safetensors(f"{out}/metadata_limit.safetensors",
            {"__metadata__": meta, "w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}}, w.tobytes())
os.makedirs(f"{out}/index", exist_ok=True)
n = 500_000
safetensors(f"{out}/index/model-00001-of-00001.safetensors", empty_entries(n))
with open(f"{out}/index/model.safetensors.index.json", "w") as f:
    json.dump({"metadata": {"total_size": 0},
               "weight_map": {f"t{i:07d}": "model-00001-of-00001.safetensors" for i in range(n)}}, f)


def zip_one(path, name, payload, method, claimed_size, crc=None):
    """A one-member zip archive as numpy writes it (zip64 extra fields), by hand so that the directory
    can claim any size. payload: the member's bytes as stored (compressed when method is 8)."""
    name = name.encode()
    crc = crc if crc is not None else 0
    local_extra = struct.pack("<HHQQ", 1, 16, claimed_size, len(payload))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, method, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                        len(name), len(local_extra)) + name + local_extra
    big = claimed_size >= 0xFFFFFFFF
    cd_extra = struct.pack("<HHQ", 1, 8, claimed_size) if big else b""
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, method, 0, 0, crc, len(payload),
                          0xFFFFFFFF if big else claimed_size, len(name), len(cd_extra), 0, 0, 0, 0, 0) + name + cd_extra
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(payload), 0)
    with open(path, "wb") as f:
        f.write(local + payload + central + end)


def forged_npz(path, compressed_bytes, dtype="<f2"):
    # Random bytes do not compress: the stream inflates to about its own size. The .npy header claims
    # what deflate's 1032-fold bound allows, and the directory agrees with it.
    itemsize = int(dtype[-1])
    cols = 1024  # a matrix, so that checkpoint_spectra takes it for a layer and loads it
    rows = (compressed_bytes * 1030) // itemsize // cols
    count = rows * cols
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (dtype, rows, cols)
    header += " " * (-(len(header) + 11) % 64) + "\n"
    npy_head = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
    body = npy_head + np.random.default_rng(1).bytes(compressed_bytes)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    stream = c.compress(body) + c.flush()
    zip_one(path, "w.npy", stream, 8, len(npy_head) + count * itemsize, zlib.crc32(body))


forged_npz(f"{out}/forged_600k.npz", 600_000)
forged_npz(f"{out}/forged_20m.npz", 20_000_000)

np.savez(f"{out}/crc_flip.npz", w=np.arange(4096, dtype=np.float64).reshape(64, 64))
b = bytearray(open(f"{out}/crc_flip.npz", "rb").read())
b[4000] ^= 0x10
open(f"{out}/crc_flip.npz", "wb").write(b)
