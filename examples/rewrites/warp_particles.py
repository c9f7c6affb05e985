"""Particle update loop -> Warp kernel (checked for syntax and API names only)."""
import numpy as np


def integrate(positions, velocities, forces, dt):
    for i in range(len(positions)):
        velocities[i] += forces[i] * dt
        positions[i] += velocities[i] * dt


def inputs():
    rng = np.random.default_rng(5)
    n = 200_000
    return rng.random((n, 3)), np.zeros((n, 3)), rng.standard_normal((n, 3)), 0.01


def main():
    positions, velocities, forces, dt = inputs()
    integrate(positions, velocities, forces, dt)
    return positions
