"""Writes the seed inputs of the `edits` fuzz target (format: src/edits.rs).

Run from fuzz/: python3 make_seeds.py. The seeds are committed; libFuzzer
grows its own corpus from them under target/fuzz-corpus/ (not committed).
"""

from pathlib import Path

CRLF, CR, EMOJI, CJK, NUL = b"\xc0", b"\xc1", b"\xf6", b"\xf7", b"\xfc"
UTF8, UTF16, UTF32 = 0, 1, 2
MIN_ELEMENTS_0, GTX_1080, RTX_4090 = 4, 0x10, 0x20


def change(l1, c1, l2, c2, text, new=True, whole=False):
    kind = (1 if new else 0) | (0b1110 if whole else 0)
    return b"\xff" + bytes([kind, l1, c1, l2, c2]) + text


SEEDS = {
    # Typing inside a function of a NumPy script, then deleting a line.
    "numpy_typing": bytes([UTF16])
    + b"import numpy as np\n\nsignal = np.random.rand(10_000_000)\n\ndef power(x):\n    return np.abs(np.fft.fft(x)) ** 2\n"
    + change(5, 11, 5, 11, b"s")
    + change(5, 12, 5, 12, b"q")
    + change(2, 0, 3, 0, b""),
    # CRLF line ends, a lone CR, CJK and an emoji before the edited call; UTF-8 positions.
    "crlf_cjk_emoji": bytes([UTF8])
    + b"import pandas as pd" + CRLF + b"df = pd.read_csv('" + CJK + b".csv')" + CRLF
    + b"s = '" + EMOJI + b"'; m = df.groupby('k')['v'].mean()" + CR + b"tail = 1" + CRLF
    + change(2, 9, 2, 9, b"x")
    + change(1, 2, 2, 3, CRLF, new=False)
    + change(3, 0, 3, 4, CR + b"z"),
    # Several changes in one notification, UTF-16 positions inside a surrogate pair, past the end.
    "surrogates_and_far_ranges": bytes([UTF16 | MIN_ELEMENTS_0])
    + b"import numpy as np\nlabel = '" + EMOJI + EMOJI + b"'\nx = np.sort(np.random.rand(100))\n"
    + change(1, 10, 1, 11, b"", new=True)
    + change(1, 9, 1, 13, EMOJI, new=False)
    + change(0xF5, 0, 0xFF, 0xFF, b"\ny = np.fft.fft(x)\n", new=False)
    + change(2, 200, 0, 3, b"", new=True),
    # Kernels and loops that the cache keys on, UTF-32 positions, a GPU target.
    "kernels_utf32": bytes([UTF32 | RTX_4090])
    + b"import numpy as np\nfrom numba import cuda\n\n@cuda.jit\ndef k(a, out):\n    i = cuda.grid(1)\n    out[i] = a[i] * 2.0\n\n"
    + b"def loop(a, out, n):\n    for i in range(n):\n        out[i] = a[i] + 1\n"
    + change(6, 4, 6, 4, b"if i < a.size:\n        ")
    + change(10, 23, 10, 23, b" * 3", new=False)
    + change(9, 4, 9, 7, b"while", new=True),
    # A whole-document change between ranged ones, NUL characters, an old GPU.
    "whole_document_and_nul": bytes([UTF16 | GTX_1080])
    + b"import cupy as cp\na = cp.random.rand(4096, 4096)\nb = a @ a\n"
    + change(0, 0, 0, 0, b"", whole=True)
    + b"import pandas as pd\ndf = pd.read_parquet('x')\n" + NUL + b"\n"
    + change(1, 3, 1, 3, b"2", new=False)
    + change(2, 0, 2, 1, b"", new=True),
}

out = Path(__file__).parent / "seeds" / "edits"
out.mkdir(parents=True, exist_ok=True)
for name, data in SEEDS.items():
    (out / name).write_bytes(data)
    print(out / name, len(data))
