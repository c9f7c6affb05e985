"""Python programs the tests open in the server."""

SPECTRUM = """\
import numpy as np

signal = np.random.rand(10_000_000)
spectrum = np.fft.fft(signal)
power = np.abs(spectrum) ** 2
print(power[0])
"""

# CJK identifiers and an emoji (two UTF-16 code units, four UTF-8 bytes)
# before the flagged call on the same line.
SPECTRUM_CJK = """\
import numpy as np

数据 = np.random.rand(10_000_000); 标签 = "😀"; 结果 = np.fft.fft(数据)
print(标签, 结果[:3])
"""

# What the random edits start from: a longer script with a finding on most lines.
SENSOR_REPORT = '''\
"""Band-pass a long sensor recording and summarise it."""

import numpy as np

SAMPLE_RATE_HZ = 48_000.0

t = np.arange(10_000_000) / SAMPLE_RATE_HZ
tones = np.sin(2 * np.pi * 440.0 * t) + 0.5 * np.sin(2 * np.pi * 1_250.0 * t)
noise = np.random.rand(10_000_000) - 0.5
信号 = tones + noise; 标签 = "传感器 😀"; signal = 信号

spectrum = np.fft.fft(signal)
freqs = np.abs(np.fft.fftfreq(signal.size, d=1.0 / SAMPLE_RATE_HZ))
spectrum[(freqs < 300.0) | (freqs > 2_000.0)] = 0.0
filtered = np.fft.ifft(spectrum).real

标题 = "😀 p99"; ordered = np.sort(np.abs(filtered))
print("p99", ordered[(99 * ordered.size) // 100])
print("mean", np.mean(filtered), "std", np.std(filtered))
'''

# Whole lines the random edits insert: realistic NumPy work (most of it
# flagged), comments with CJK text and emoji, and plain Python.
INSERTED_LINES = [
    "window = np.hanning(10_000_000)\n",
    "smoothed = np.convolve(signal, np.ones(64) / 64, mode='same')\n",
    "cov = np.cov(np.random.rand(2_000, 2_000))\n",
    "u, s, vt = np.linalg.svd(np.random.rand(2_000, 2_000))\n",
    "phase = np.angle(np.fft.fft(signal))\n",
    '标签 = "😀"; 频谱 = np.fft.fft(signal); 相位 = np.angle(np.fft.fft(signal))\n',
    "# 频谱分析: keep the top bins 📈\n",
    "标签 = '传感器 😀'\n",
    "threshold = 0.25\n",
    "\n",
]

IDENTIFIER_CHARS = "abcxyz_0123456789数据标签"
