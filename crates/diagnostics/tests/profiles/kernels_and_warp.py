# A loop a CUDA kernel would run, and a particle loop for Warp: which package
# and which install line the advice names depends on the GPU and its driver.
import math

import numpy as np

N = 4_000_000


def damp(x, out):
    for i in range(N):
        out[i] = math.sin(x[i]) * math.exp(-0.1 * x[i])


def step(pos, vel, force, dt):
    for i in range(len(pos)):
        vel[i] += force[i] * dt
        pos[i] += vel[i] * dt


x = np.linspace(0.0, 1.0, N)
out = np.empty_like(x)
damp(x, out)
