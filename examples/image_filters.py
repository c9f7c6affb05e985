"""Hand-written image preprocessing for a 2048 x 2048 grayscale frame.

Smooths a synthetic microscope frame with a 3x3 Gaussian blur stencil, maps
every pixel through a damped tone curve, and builds the running (cumulative)
intensity profile used to normalise exposure. All three steps are written as
explicit Python loops over pixel indices, the way prototypes often start.
"""

import math

import numpy as np


def synthetic_frame(h: int, w: int) -> np.ndarray:
    """Smooth blobs plus sensor noise, values roughly in [0, 1]."""
    rng = np.random.default_rng(seed=3)
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    blobs = np.sin(12.0 * xx) * np.cos(9.0 * yy) * 0.5 + 0.5
    return blobs + rng.normal(0.0, 0.05, size=(h, w))


def gaussian_blur(img: np.ndarray) -> np.ndarray:
    """3x3 binomial blur (1-2-1 / 2-4-2 / 1-2-1, divided by 16); border copied."""
    h, w = img.shape
    out = img.copy()
    for y in range(1, h - 1):
        for x in range(1, w - 1):
            out[y, x] = (
                img[y - 1, x - 1] + 2.0 * img[y - 1, x] + img[y - 1, x + 1]
                + 2.0 * img[y, x - 1] + 4.0 * img[y, x] + 2.0 * img[y, x + 1]
                + img[y + 1, x - 1] + 2.0 * img[y + 1, x] + img[y + 1, x + 1]
            ) / 16.0
    return out


def tone_curve(a: np.ndarray) -> np.ndarray:
    """Damped response curve, applied to each pixel independently."""
    n = a.size
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = math.sin(a[i]) * math.exp(-a[i])
    return out


def running_total(a: np.ndarray) -> np.ndarray:
    """Cumulative intensity; each entry depends on the one before it."""
    n = a.size
    acc = np.empty(n, dtype=np.float64)
    acc[0] = a[0]
    for i in range(1, n):
        acc[i] = acc[i - 1] + a[i]
    return acc


def main() -> dict:
    frame = synthetic_frame(2048, 2048)
    smoothed = gaussian_blur(frame)

    pixels = smoothed.ravel()
    toned = tone_curve(pixels)
    profile = running_total(toned)

    # Exposure scale: the pixel index at which half the total intensity is reached.
    half_index = int(np.searchsorted(profile, profile[-1] / 2.0))

    return {
        "noise_before": round(float(np.std(frame - smoothed)), 5),
        "toned_mean": round(float(toned.mean()), 5),
        "total_intensity": round(float(profile[-1]), 2),
        "half_intensity_row": half_index // frame.shape[1],
    }


if __name__ == "__main__":
    print(main())
