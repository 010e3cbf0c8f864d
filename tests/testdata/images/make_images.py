"""Writes the image fixtures of the codec cases (tests/ops/cases_image.cc) and what TensorFlow
decodes from them, so the cases compare our DecodeJpeg/DecodePng/DecodeBmp/DecodeImage with
TensorFlow's pixels.

    .venv-oracle/bin/python tests/testdata/images/make_images.py tests/testdata/images

JPEGs come from tf.io.encode_jpeg; PNGs from tf.io.encode_png, and the palette and 2-bit gray
ones (which TF cannot write) from the small writer below, as are the BMPs (TF has no encoder). For every (file, attrs) in DECODES the
decoded image is saved as <file>.<tag>.npy.
"""
import os
import struct
import sys
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def write_png(rows, width, height, bit_depth, color_type, extra=b""):
    """rows: the filtered-free scanline bytes (filter byte 0 added here)."""
    raw = b"".join(b"\x00" + r for r in rows)
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + extra +
            png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))


def write_bmp(pixels, top_down=False):
    """An uncompressed BMP of pixels [h, w, c] (c = 1, 3 BGR or 4 BGRA as stored), rows padded
    to 4 bytes, bottom-up unless top_down (a negative height)."""
    h, w, c = pixels.shape
    row = (w * c + 3) // 4 * 4
    rows = [pixels[i].tobytes().ljust(row, b"\x00") for i in range(h)]
    if not top_down:
        rows = rows[::-1]
    header = 54
    info = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, c * 8, 0, row * h, 2835,
                       2835, 0, 0)
    return (b"BM" + struct.pack("<IHHI", header + row * h, 0, 0, header) + info +
            b"".join(rows))


def main(out):
    rng = np.random.default_rng(9)
    y, x = np.mgrid[0:13, 0:20]
    smooth = np.stack([x * 12, y * 18, (x + y) * 7], -1) + rng.integers(0, 30, (13, 20, 3))
    rgb = np.clip(smooth, 0, 255).astype(np.uint8)
    files = {
        "rgb.jpg": tf.io.encode_jpeg(rgb, quality=90).numpy(),
        "gray.jpg": tf.io.encode_jpeg(rgb[:11, :9, :1], quality=85).numpy(),
        "progressive.jpg": tf.io.encode_jpeg(rgb, quality=75, progressive=True).numpy(),
        "rgb8.png": tf.io.encode_png(rgb).numpy(),
        "rgba16.png": tf.io.encode_png(
            (rng.integers(0, 65536, (7, 5, 4))).astype(np.uint16)).numpy(),
        "graya8.png": tf.io.encode_png(rng.integers(0, 256, (6, 4, 2)).astype(np.uint8)).numpy(),
    }
    # A 4-colour palette image with a tRNS chunk, and a 2-bit grayscale one.
    pal = bytes([255, 0, 0, 0, 255, 0, 0, 0, 255, 250, 250, 250])
    idx = rng.integers(0, 4, (5, 6)).astype(np.uint8)
    files["palette.png"] = write_png([bytes(r) for r in idx], 6, 5, 8, 3,
                                     png_chunk(b"PLTE", pal) + png_chunk(b"tRNS", bytes([255, 128, 0])))
    g2 = rng.integers(0, 4, (3, 8)).astype(np.uint8)
    packed = [bytes([(r[i] << 6) | (r[i + 1] << 4) | (r[i + 2] << 2) | r[i + 3]
                     for i in range(0, 8, 4)]) for r in g2]
    files["gray2.png"] = write_png(packed, 8, 3, 2, 0)
    # BMPs: 24-bit bottom-up with row padding (width 5), 32-bit top-down, 8-bit gray.
    files["bgr24.bmp"] = write_bmp(rgb[:4, :5, ::-1].copy())
    files["bgra32.bmp"] = write_bmp(rng.integers(0, 256, (3, 4, 4)).astype(np.uint8), True)
    files["gray8.bmp"] = write_bmp(rgb[:3, :6, :1].copy())
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    for name, op, tag, attrs in DECODES:
        data = files[name]
        if op == "jpeg":
            img = tf.raw_ops.DecodeJpeg(contents=data, **attrs)
        elif op == "png":
            img = tf.raw_ops.DecodePng(contents=data, **attrs)
        elif op == "bmp":
            img = tf.raw_ops.DecodeBmp(contents=data, **attrs)
        else:
            img = tf.raw_ops.DecodeImage(contents=data, **attrs)
        np.save(os.path.join(out, f"{name}.{tag}.npy"), img.numpy())


# (file, op, tag, attrs): the decodes the cases check.
DECODES = [
    ("rgb.jpg", "jpeg", "c0", {}),
    ("rgb.jpg", "jpeg", "c1", {"channels": 1}),
    ("rgb.jpg", "jpeg", "r2", {"ratio": 2}),
    ("rgb.jpg", "jpeg", "accurate", {"dct_method": "INTEGER_ACCURATE", "fancy_upscaling": False}),
    ("gray.jpg", "jpeg", "c3", {"channels": 3}),
    ("progressive.jpg", "jpeg", "c0", {}),
    ("rgb.jpg", "png", "u16", {"dtype": tf.uint16}),
    ("rgb8.png", "png", "c0", {}),
    ("rgb8.png", "png", "c4u16", {"channels": 4, "dtype": tf.uint16}),
    ("rgb8.png", "jpeg", "c0", {}),
    ("rgba16.png", "png", "c0u16", {"dtype": tf.uint16}),
    ("rgba16.png", "png", "c3", {"channels": 3}),
    ("graya8.png", "png", "c0", {}),
    ("graya8.png", "png", "c3", {"channels": 3}),
    ("palette.png", "png", "c0", {}),
    ("palette.png", "png", "c3", {"channels": 3}),
    ("gray2.png", "png", "c0", {}),
    ("gray2.png", "png", "c4", {"channels": 4}),
    ("bgr24.bmp", "bmp", "c0", {}),
    ("bgr24.bmp", "bmp", "c4", {"channels": 4}),
    ("bgra32.bmp", "bmp", "c0", {}),
    ("bgra32.bmp", "bmp", "c3", {"channels": 3}),
    ("gray8.bmp", "bmp", "c3", {"channels": 3}),
    ("gray8.bmp", "image", "img_c0", {}),
    ("bgr24.bmp", "image", "img_f32", {"dtype": tf.float32}),
    ("bgr24.bmp", "image", "img_u16", {"dtype": tf.uint16, "expand_animations": False}),
    ("rgb.jpg", "image", "img_c0", {}),
    ("rgb.jpg", "image", "img_f32", {"dtype": tf.float32}),
    ("rgb.jpg", "image", "img_c1u16", {"channels": 1, "dtype": tf.uint16}),
    ("rgb8.png", "image", "img_f32", {"dtype": tf.float32}),
    ("rgba16.png", "image", "img_f32", {"dtype": tf.float32}),
    ("palette.png", "image", "img_c4", {"channels": 4, "expand_animations": False}),
]

if __name__ == "__main__":
    main(sys.argv[1])
