"""Spectral analysis of a long noisy sensor recording.

Synthesises two million samples of a vibration signal (three tones buried in
noise), finds its dominant frequencies with an FFT, band-pass filters it in the
frequency domain, computes robust amplitude statistics, and measures how
compressible the 2000 x 2000 covariance of windowed segments is with an SVD.
"""

import numpy as np

SAMPLE_RATE_HZ = 48_000.0


def synthesize_signal(rng: np.random.Generator) -> np.ndarray:
    """Three tones plus white noise plus a slow drift, 2 million samples."""
    t = np.arange(2_000_000) / SAMPLE_RATE_HZ
    tones = (
        1.00 * np.sin(2 * np.pi * 440.0 * t)
        + 0.50 * np.sin(2 * np.pi * 1_250.0 * t)
        + 0.25 * np.sin(2 * np.pi * 7_900.0 * t)
    )
    noise = rng.normal(0.0, 0.8, size=t.size)
    # Legacy global-state API, still very common in older analysis scripts.
    drift = np.cumsum(np.random.rand(2_000_000) - 0.5) * 1e-3
    return tones + noise + drift


def dominant_frequencies(signal: np.ndarray, top: int = 3, min_gap_hz: float = 50.0) -> list:
    """Return the `top` strongest positive frequencies in Hz, `min_gap_hz` apart."""
    spectrum = np.fft.fft(signal)
    freqs = np.fft.fftfreq(signal.size, d=1.0 / SAMPLE_RATE_HZ)
    magnitude = np.abs(spectrum[: signal.size // 2])
    magnitude[freqs[: signal.size // 2] < 20.0] = 0.0  # ignore DC and slow drift
    peaks: list = []
    for idx in np.argsort(magnitude)[::-1]:  # strongest bin first
        if all(abs(freqs[idx] - f) >= min_gap_hz for f in peaks):
            peaks.append(float(freqs[idx]))
            if len(peaks) == top:
                break
    return peaks


def band_pass(signal: np.ndarray, low_hz: float, high_hz: float) -> np.ndarray:
    """Zero every FFT bin outside [low_hz, high_hz] and transform back."""
    spectrum = np.fft.fft(signal)
    freqs = np.abs(np.fft.fftfreq(signal.size, d=1.0 / SAMPLE_RATE_HZ))
    spectrum[(freqs < low_hz) | (freqs > high_hz)] = 0.0
    return np.fft.ifft(spectrum).real


def robust_amplitude(signal: np.ndarray) -> dict:
    """Mean, spread and the 1st/99th percentiles read off a full sort."""
    ordered = np.sort(np.abs(signal))
    n = ordered.size
    return {
        "mean": round(float(np.mean(signal)), 5),
        "std": round(float(np.std(signal)), 5),
        "p01": round(float(ordered[n // 100]), 5),
        "p99": round(float(ordered[(99 * n) // 100]), 5),
    }


def segment_rank(signal: np.ndarray, energy: float = 0.95) -> int:
    """How many singular vectors capture `energy` of the segment covariance."""
    # 1000 consecutive windows of 2000 samples each, tapered at both ends.
    segments = signal[: 1000 * 2000].reshape(1000, 2000) * np.hanning(2000)
    covariance = segments.T @ segments / segments.shape[0]  # 2000 x 2000
    # Full SVD of a dense 2000 x 2000 matrix: O(n^3) work.
    _, s, _ = np.linalg.svd(covariance)
    cumulative = np.cumsum(s**2) / np.sum(s**2)
    return int(np.searchsorted(cumulative, energy) + 1)


def main() -> dict:
    np.random.seed(7)
    rng = np.random.default_rng(seed=7)
    signal = synthesize_signal(rng)

    peaks = dominant_frequencies(signal)
    filtered = band_pass(signal, 300.0, 2_000.0)
    stats = robust_amplitude(filtered)
    rank = segment_rank(signal)

    # A 3-tap smoothing kernel: far too small to be worth a GPU round trip.
    weights = np.array([0.25, 0.5, 0.25])
    kernel_gain = float(np.sum(weights))

    return {
        "peaks_hz": [round(f, 1) for f in peaks],
        "filtered": stats,
        "segment_rank_95": rank,
        "kernel_gain": kernel_gain,
    }


if __name__ == "__main__":
    print(main())
