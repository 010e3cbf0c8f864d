"""Writes the image fixtures of the codec cases (tests/ops/cases_image.cc) and what TensorFlow
decodes from them, so the cases compare our DecodeJpeg/DecodePng/DecodeBmp/DecodeImage with
TensorFlow's pixels.

    .venv-oracle/bin/python tests/testdata/images/make_images.py tests/testdata/images

JPEGs come from tf.io.encode_jpeg; PNGs from tf.io.encode_png, and the palette and 2-bit gray
ones (which TF cannot write) from the small writer below, as are the BMPs (TF has no encoder);
GIFs from Pillow (a still image, an interlaced one and an animation: its LZW coder) and from the
writer below (frames as rectangles off the canvas's corner, one past its edge, local colour
tables, transparent colours, an interlaced frame); WebPs from Pillow (lossy RGB, lossless
RGBA). For every (file, attrs) in DECODES the
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


def write_gif(width, height, palette, frames):
    """A GIF of `frames`: (left, top, indices [h, w], local palette or None, transparent index or
    None, interlace). Pixels go out as 9-bit literal codes with a clear code every 254 of them,
    so the code width never grows (valid LZW that any decoder reads)."""
    def colour_table(pal):
        bits = max(1, (len(pal) - 1).bit_length())
        return bits, bytes(np.array(pal, np.uint8).ravel()) + bytes(3 * ((1 << bits) - len(pal)))

    def lzw(indices):
        codes = [256]
        for i, v in enumerate(indices):
            if i and i % 254 == 0:
                codes.append(256)
            codes.append(int(v))
        codes.append(257)
        acc = nbits = 0
        out = bytearray()
        for c in codes:
            acc |= c << nbits
            nbits += 9
            while nbits >= 8:
                out.append(acc & 0xff)
                acc >>= 8
                nbits -= 8
        if nbits:
            out.append(acc)
        blocks = b"".join(bytes([len(out[i:i + 255])]) + out[i:i + 255]
                          for i in range(0, len(out), 255))
        return bytes([8]) + blocks + b"\x00"

    gbits, gtable = colour_table(palette)
    data = b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80 | (gbits - 1), 0, 0) + gtable
    for left, top, idx, local, transparent, interlace in frames:
        h, w = idx.shape
        if transparent is not None:
            data += b"\x21\xf9\x04" + struct.pack("<BHB", 1, 5, transparent) + b"\x00"
        else:  # a control block whose transparency flag is off: its index is not transparent
            data += b"\x21\xf9\x04" + struct.pack("<BHB", 0, 5, 0) + b"\x00"
        flags = 0x40 if interlace else 0
        table = b""
        if local is not None:
            lbits, table = colour_table(local)
            flags |= 0x80 | (lbits - 1)
        rows = list(idx)
        if interlace:
            rows = [idx[r] for start, step in ((0, 8), (4, 8), (2, 4), (1, 2))
                    for r in range(start, h, step)]
        data += b"," + struct.pack("<HHHHB", left, top, w, h, flags) + table
        data += lzw(np.concatenate(rows))
    return data + b";"


def write_gifs(rgb, rng):
    import io
    from PIL import Image

    def save(frames, **kw):
        buf = io.BytesIO()
        frames[0].save(buf, format="GIF", save_all=len(frames) > 1, append_images=frames[1:],
                       **kw)
        return buf.getvalue()

    still = Image.fromarray(rgb[:7, :9]).quantize(colors=16)
    big = np.kron(rgb[:9, :10], np.ones((2, 2, 1), np.uint8))  # 18 x 20: interlaced rows
    frames = []
    base = rgb[:10, :12].copy()
    for k in range(3):
        f = base.copy()
        f[2 + k:5 + k, 3:7] = [255 - 60 * k, 40 * k, 200]  # a block that moves
        frames.append(Image.fromarray(f).quantize(colors=32))
    return {"still.gif": save([still]),
            "interlace.gif": save([Image.fromarray(big).quantize(colors=64)], interlace=True),
            "anim.gif": save(frames, optimize=True, duration=50, loop=0),
            "sprite.gif": write_gif(8, 6, rng.integers(0, 256, (8, 3)), [
                (0, 0, rng.integers(0, 8, (6, 8)), None, 7, False),
                (2, 1, rng.integers(0, 4, (3, 4)), rng.integers(0, 256, (4, 3)), 0, False),
                (5, 3, rng.integers(0, 8, (3, 5)), None, None, True)])}


def write_webps(rgb):
    import io
    from PIL import Image

    def save(arr, **kw):
        buf = io.BytesIO()
        Image.fromarray(arr).save(buf, format="WEBP", **kw)
        return buf.getvalue()

    alpha = (np.arange(7 * 9).reshape(7, 9, 1) * 4).astype(np.uint8)
    return {"lossy.webp": save(rgb, quality=80),
            "alpha.webp": save(np.concatenate([rgb[:7, :9], alpha], -1), lossless=True)}


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
    files.update(write_gifs(rgb, rng))
    files.update(write_webps(rgb))
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
        elif op == "gif":
            img = tf.raw_ops.DecodeGif(contents=data, **attrs)
        elif op == "webp":
            img = tf.raw_ops.DecodeWebP(contents=data, **attrs)
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
    ("still.gif", "gif", "gif_c0", {}),
    ("still.gif", "jpeg", "c0", {}),
    ("still.gif", "png", "c3", {"channels": 3}),
    ("interlace.gif", "gif", "gif_c0", {}),
    ("anim.gif", "gif", "gif_c0", {}),
    ("anim.gif", "image", "img_c0", {}),
    ("anim.gif", "image", "img_first", {"expand_animations": False}),
    ("anim.gif", "image", "img_f32", {"dtype": tf.float32}),
    ("sprite.gif", "gif", "gif_c0", {}),
    ("sprite.gif", "image", "img_u16", {"dtype": tf.uint16}),
    ("rgb8.png", "gif", "gif_c0", {}),
    ("lossy.webp", "webp", "webp_c0", {}),
    ("lossy.webp", "webp", "webp_c3", {"channels": 3}),
    ("alpha.webp", "webp", "webp_c4", {"channels": 4}),
    ("alpha.webp", "image", "img_first", {"expand_animations": False}),
    ("lossy.webp", "gif", "gif_c0", {}),
]

if __name__ == "__main__":
    main(sys.argv[1])
