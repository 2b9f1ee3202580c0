#!/usr/bin/python3
"""Writes the seed corpus of the reader fuzz targets (tests/fuzz/fuzz_targets.hpp).

    make_corpus.py OUT [--regressions DIR] [--clean]

OUT/<target>/ receives a few small valid files and a few slightly broken ones per target
(safetensors, npy, npz, index, idx), each under 64 KB, so that the fuzzer starts from every
format's main paths and the replay test (ctest label `fuzz`) runs them through the same entry
points. The files are generated here, not committed: numpy writes the .npy and .npz files (as
np.save, np.savez and np.savez_compressed do), struct and json the .safetensors files and the
indexes, gzip the compressed IDX files.

--regressions DIR also decodes DIR/<target>/*.hex (tests/fuzz/regressions/README.md) into
OUT/<target>/regression-<name>, so a fuzz run starts from every input that ever failed.
--clean first empties OUT/<target>/ (files left by an older version of this script).

Needs numpy only (/usr/bin/python3 on Debian, package python3-numpy).
"""

import argparse
import gzip
import io
import json
import os
import shutil
import struct
import sys
import zipfile

import numpy as np

TARGETS = ("safetensors", "npy", "npz", "index", "idx")
MAX_FILE = 64 * 1024


# ---------------------------------------------------------------------------------------------
# safetensors


def safetensors(entries, metadata=None, pad=True, header_override=None, data_extra=b""):
    """entries: list of (name, dtype, shape, bytes). Offsets follow the list's order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = header_override if header_override is not None else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data + data_extra


def safetensors_files():
    rng = np.random.default_rng(1)
    f32 = rng.standard_normal((2, 3)).astype("<f4")
    f64 = rng.standard_normal(4).astype("<f8")
    f16 = rng.standard_normal((2, 2)).astype("<f2")
    bf16 = (np.array([1.5], dtype="<f4").view("<u4") >> 16).astype("<u2")  # 1.5 as bfloat16
    i64 = np.arange(3, dtype="<i8")
    t3 = rng.standard_normal((2, 2, 3)).astype("<f4")
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], dtype="<f4")
    full = [("w", "F32", f32.shape, f32.tobytes()), ("b", "F64", f64.shape, f64.tobytes()),
            ("h", "F16", f16.shape, f16.tobytes()), ("s", "BF16", (), bf16.tobytes()),
            ("ids", "I64", i64.shape, i64.tobytes()), ("conv", "F32", t3.shape, t3.tobytes())]
    out = {
        "valid_all_dtypes.safetensors": safetensors(full, metadata={"format": "pt"}),
        "valid_one.safetensors": safetensors([full[0]]),
        "valid_special_values.safetensors": safetensors([("x", "F32", special.shape, special.tobytes())]),
        "valid_empty_tensor.safetensors": safetensors([("e", "F32", (0, 3), b""), full[1]]),
        "valid_unknown_dtype.safetensors": safetensors([("q", "F8_E4M3", (4,), b"\x01\x02\x03\x04"), full[0]]),
        "valid_unpadded.safetensors": safetensors([full[1]], pad=False),
        "valid_empty_header.safetensors": safetensors([], header_override=b"{}"),
    }
    good = out["valid_all_dtypes.safetensors"]
    n = struct.unpack("<Q", good[:8])[0]
    out["broken_truncated.safetensors"] = good[:-5]
    out["broken_header_size.safetensors"] = struct.pack("<Q", n + 1000) + good[8:]
    out["broken_huge_header_size.safetensors"] = struct.pack("<Q", 2**63) + good[8:]
    out["broken_json.safetensors"] = good[:8] + good[8:8 + n // 2] + b"\x00" * (n - n // 2) + good[8 + n:]
    out["broken_trailing_data.safetensors"] = good + b"\x00" * 8
    out["broken_overlap.safetensors"] = safetensors([], header_override=json.dumps({
        "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode(), data_extra=b"\x00" * 12)
    out["broken_offsets_out_of_bounds.safetensors"] = safetensors([], header_override=json.dumps({
        "a": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}}).encode(), data_extra=b"\x00" * 8)
    out["broken_byte_count.safetensors"] = safetensors([("a", "F32", (3,), b"\x00" * 8)])
    out["broken_duplicate_key.safetensors"] = safetensors([], header_override=(
        b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
        b'"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}'), data_extra=b"\x00" * 8)
    out["broken_missing_dtype.safetensors"] = safetensors([], header_override=json.dumps({
        "a": {"shape": [1], "data_offsets": [0, 4]}}).encode(), data_extra=b"\x00" * 4)
    out["broken_negative_shape.safetensors"] = safetensors([], header_override=json.dumps({
        "a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}).encode(), data_extra=b"\x00" * 4)
    out["broken_shape_overflow.safetensors"] = safetensors([], header_override=json.dumps({
        "a": {"dtype": "F32", "shape": [2**32, 2**32, 4], "data_offsets": [0, 0]}}).encode())
    out["broken_nesting.safetensors"] = safetensors([], header_override=b"[" * 2000 + b"]" * 2000)
    out["broken_short.safetensors"] = b"\x10\x00\x00"
    return out


# ---------------------------------------------------------------------------------------------
# npy


def npy(array, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array, allow_pickle=False)
    else:
        np.lib.format.write_array(buf, array, version=version, allow_pickle=False)
    return buf.getvalue()


def npy_files():
    rng = np.random.default_rng(2)
    m = rng.standard_normal((3, 4))
    out = {
        "valid_f64.npy": npy(m),
        "valid_f32.npy": npy(m.astype("<f4")),
        "valid_f16.npy": npy(m.astype("<f2")),
        "valid_big_endian.npy": npy(m.astype(">f8")),
        "valid_fortran.npy": npy(np.asfortranarray(m.astype("<f4"))),
        "valid_vector.npy": npy(rng.standard_normal(5)),
        "valid_scalar.npy": npy(np.float64(2.5)),
        "valid_empty.npy": npy(np.zeros((0, 3))),
        "valid_3d.npy": npy(rng.standard_normal((2, 3, 2)).astype("<f4")),
        "valid_fortran_3d.npy": npy(np.asfortranarray(rng.standard_normal((2, 3, 2)))),
        "valid_v2.npy": npy(m, version=(2, 0)),
        "valid_v3.npy": npy(m.astype("<f4"), version=(3, 0)),
        "valid_int64.npy": npy(np.arange(6, dtype="<i8").reshape(2, 3)),
        "valid_structured.npy": npy(np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")])),
        "valid_special_values.npy": npy(np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324])),
    }
    good = out["valid_f64.npy"]
    out["broken_truncated.npy"] = good[:-3]
    out["broken_trailing.npy"] = good + b"\x00" * 8
    out["broken_magic.npy"] = b"\x93NUMPZ" + good[6:]
    out["broken_header_len.npy"] = good[:8] + struct.pack("<H", 0xFFFF) + good[10:]
    out["broken_version.npy"] = good[:6] + b"\x09\x00" + good[8:]
    header = good[10:10 + struct.unpack("<H", good[8:10])[0]]
    for name, new in [("broken_dict.npy", header.replace(b"'descr'", b"'decsr'")),
                      ("broken_shape.npy", header.replace(b"(3, 4)", b"(3, -4)")),
                      ("broken_huge_shape.npy", header.replace(b"(3, 4)", b"(99999999999, 99999999999)")),
                      ("broken_fortran_value.npy", header.replace(b"False", b"Maybe")),
                      ("broken_descr.npy", header.replace(b"<f8", b"<f9"))]:
        new = new.rstrip(b"\n ")
        new += b" " * (-(10 + len(new) + 1) % 64) + b"\n"
        out[name] = good[:8] + struct.pack("<H", len(new)) + new + good[10 + len(header):]
    out["broken_empty.npy"] = b""
    return out


# ---------------------------------------------------------------------------------------------
# npz


def savez(compressed, **arrays):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def zip_of(members, compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = compression
            z.writestr(info, data)
    return buf.getvalue()


def npz_files():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal(5).astype("<f4")
    c = np.asfortranarray(rng.standard_normal((2, 3, 2)).astype(">f8"))
    i = np.arange(4, dtype="<i8")
    ones = np.ones((64, 64))  # compresses well: deflated much smaller than its size
    out = {
        "valid_savez.npz": savez(False, a=a, b=b, c=c, i=i),
        "valid_savez_compressed.npz": savez(True, a=a, b=b, c=c, i=i),
        "valid_compressed_ones.npz": savez(True, ones=ones),
        "valid_empty_array.npz": savez(False, e=np.zeros((0, 2))),
        "valid_other_member.npz": zip_of([("x.npy", npy(a)), ("readme.txt", b"not an array\n")]),
        "valid_deflated_zipfile.npz": zip_of([("w.npy", npy(a.astype("<f2"))), ("v.npy", npy(b))],
                                             zipfile.ZIP_DEFLATED),
        "valid_empty_archive.npz": zip_of([]),
    }
    good = out["valid_savez.npz"]
    comp = out["valid_savez_compressed.npz"]
    out["broken_truncated.npz"] = good[:-40]
    out["broken_truncated_compressed.npz"] = comp[: len(comp) // 2]
    flipped = bytearray(comp)
    flipped[len(comp) // 3] ^= 0x55  # inside a deflated member
    out["broken_flipped_compressed.npz"] = bytes(flipped)
    flipped = bytearray(good)
    flipped[200] ^= 0x01  # inside a stored member's data or header
    out["broken_flipped_stored.npz"] = bytes(flipped)
    eocd = good.rfind(b"PK\x05\x06")
    broken = bytearray(good)
    broken[eocd + 16:eocd + 20] = struct.pack("<I", len(good) + 100)  # central directory offset
    out["broken_cd_offset.npz"] = bytes(broken)
    out["broken_not_npy.npz"] = zip_of([("x.npy", b"\x93NUMPY garbage")])
    out["broken_only_eocd.npz"] = b"PK\x05\x06" + b"\x00" * 18
    return out


# ---------------------------------------------------------------------------------------------
# sharded index: the shards are fixed, written by the fuzz target itself (fuzz_targets.cpp,
# index_folder()): model-00001-of-00002.safetensors holds a (F32 2x3), b (F64 3), s (BF16 0-d);
# model-00002-of-00002.safetensors holds c (F16 2x2), i (I64 2), t (F32 2x2x2).

SHARD1 = "model-00001-of-00002.safetensors"
SHARD2 = "model-00002-of-00002.safetensors"


def index(weight_map, metadata=None, raw=None):
    if raw is not None:
        return raw
    doc = {}
    if metadata is not None:
        doc["metadata"] = metadata
    doc["weight_map"] = weight_map
    return json.dumps(doc, indent=2).encode()


def index_files():
    full = {"a": SHARD1, "b": SHARD1, "s": SHARD1, "c": SHARD2, "i": SHARD2, "t": SHARD2}
    return {
        "valid_full.json": index(full, metadata={"total_size": 106}),
        "valid_one_shard.json": index({"a": SHARD1}),
        "valid_partial.json": index({"a": SHARD1, "c": SHARD2}),
        "broken_missing_shard.json": index({"a": "model-00003-of-00003.safetensors"}),
        "broken_wrong_shard.json": index({"a": SHARD2}),
        "broken_unknown_tensor.json": index({"zzz": SHARD1}),
        "broken_path.json": index({"a": "../" + SHARD1}),
        "broken_absolute.json": index({"a": "/dev/null"}),
        "broken_self.json": index({"a": "model.safetensors.index.json"}),
        "broken_empty_map.json": index({}),
        "broken_not_object.json": index(None, raw=b'["weight_map"]'),
        "broken_value_type.json": index({"a": 7}),
        "broken_duplicate.json": index(None, raw=('{"weight_map": {"a": "%s", "a": "%s"}}' % (SHARD1, SHARD1)).encode()),
        "broken_nesting.json": index(None, raw=b'{"weight_map": ' + b"[" * 500 + b"]" * 500 + b"}"),
        "broken_truncated.json": index(full)[:-10],
    }


# ---------------------------------------------------------------------------------------------
# IDX (Fashion-MNIST's format)

IDX_TYPES = {np.dtype("u1"): 0x08, np.dtype("i1"): 0x09, np.dtype(">i2"): 0x0B, np.dtype(">i4"): 0x0C,
             np.dtype(">f4"): 0x0D, np.dtype(">f8"): 0x0E}


def idx(array, type_code=None):
    array = np.asarray(array)
    code = type_code if type_code is not None else IDX_TYPES[array.dtype]
    return bytes([0, 0, code, array.ndim]) + b"".join(struct.pack(">I", d) for d in array.shape) + array.tobytes()


def gz(data):
    return gzip.compress(data, mtime=0)


def idx_files():
    rng = np.random.default_rng(4)
    images = rng.integers(0, 256, size=(3, 28, 28), dtype=np.uint8)
    labels = np.array([9, 0, 3, 7, 1], dtype=np.uint8)
    out = {
        "valid_images-idx3-ubyte": idx(images),
        "valid_labels-idx1-ubyte": idx(labels),
        "valid_i8-idx1": idx(np.array([-3, 0, 4], dtype="i1")),
        "valid_i16-idx2": idx(np.arange(6, dtype=">i2").reshape(2, 3)),
        "valid_i32-idx1": idx(np.array([-70000, 5, 2**31 - 1], dtype=">i4")),
        "valid_f32-idx2": idx(rng.standard_normal((2, 2)).astype(">f4")),
        "valid_f64-idx3": idx(rng.standard_normal((2, 2, 2)).astype(">f8")),
        "valid_empty-idx1": idx(np.zeros(0, dtype=np.uint8)),
        "valid_images-idx3-ubyte.gz": gz(idx(images)),
        "valid_labels-idx1-ubyte.gz": gz(idx(labels)),
        "valid_f64-idx1.gz": gz(idx(np.array([1.0, -2.5]).astype(">f8"))),
    }
    good = idx(labels)
    out["broken_truncated-idx1"] = good[:-1]
    out["broken_trailing-idx1"] = good + b"\x00"
    out["broken_type-idx1"] = good[:2] + b"\x07" + good[3:]
    out["broken_magic-idx1"] = b"\x01" + good[1:]
    out["broken_huge_dims-idx3"] = bytes([0, 0, 8, 3]) + struct.pack(">III", 2**31, 2**31, 2**31)
    out["broken_short"] = b"\x00\x00\x08"
    z = bytearray(gz(idx(images)))
    z[-6] ^= 0xFF  # the CRC-32
    out["broken_crc.gz"] = bytes(z)
    out["broken_truncated.gz"] = gz(idx(images))[:200]
    out["broken_gz_trailing-idx1.gz"] = gz(good + b"\x00\x00")
    out["broken_gz_lying_header.gz"] = gz(bytes([0, 0, 8, 3]) + struct.pack(">III", 60000, 28, 28) + b"\x00" * 100)
    return out


# ---------------------------------------------------------------------------------------------


def decode_hex(path):
    digits = []
    with open(path, encoding="ascii") as f:
        for line in f:
            if line.lstrip().startswith("#"):
                continue
            digits.append("".join(line.split()))
    return bytes.fromhex("".join(digits))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="output folder (OUT/<target>/ per target)")
    parser.add_argument("--regressions", help="folder of <target>/*.hex regression inputs to decode into OUT too")
    parser.add_argument("--clean", action="store_true", help="empty OUT/<target>/ first")
    args = parser.parse_args()

    makers = {"safetensors": safetensors_files, "npy": npy_files, "npz": npz_files, "index": index_files,
              "idx": idx_files}
    total = 0
    for target in TARGETS:
        folder = os.path.join(args.out, target)
        if args.clean:
            shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder, exist_ok=True)
        files = makers[target]()
        if args.regressions:
            rdir = os.path.join(args.regressions, target)
            if os.path.isdir(rdir):
                for name in sorted(os.listdir(rdir)):
                    if name.endswith(".hex"):
                        files["regression-" + name[:-4]] = decode_hex(os.path.join(rdir, name))
        for name, data in files.items():
            if len(data) > MAX_FILE and not name.startswith("regression-"):
                sys.exit(f"make_corpus.py: {target}/{name} is {len(data)} bytes, over {MAX_FILE}")
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        total += len(files)
        print(f"{target}: {len(files)} files in {folder}")
    print(f"{total} files")


if __name__ == "__main__":
    main()
