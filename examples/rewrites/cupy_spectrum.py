"""NumPy -> CuPy: a low-pass filter of a long signal in the frequency domain."""
import numpy as np


def denoise(signal, cutoff):
    spectrum = np.fft.rfft(signal)
    freqs = np.fft.rfftfreq(signal.size)
    spectrum[freqs > cutoff] = 0
    cleaned = np.fft.irfft(spectrum, n=signal.size)
    peak = np.max(np.abs(cleaned))
    return cleaned / peak


def inputs():
    rng = np.random.default_rng(7)
    t = np.arange(1 << 24) / (1 << 24)
    return (np.sin(2 * np.pi * 50 * t) + 0.5 * rng.standard_normal(t.size), 0.001)


def compute(signal, cutoff):
    return denoise(signal, cutoff)


def main():
    return compute(*inputs())


if __name__ == "__main__":
    print(main()[:5])
