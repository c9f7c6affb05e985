"""Particle simulation of 100,000 dust grains in a harmonic trap.

Each time step computes the force on every (unit-mass) particle: a harmonic
trap pulling it towards the origin, linear drag, and gravity. Velocities and
positions are then advanced with semi-implicit Euler integration, written as a
Python loop over particle indices inside the time-step loop.
"""

import numpy as np

N_PARTICLES = 100_000
N_STEPS = 20
TRAP_STIFFNESS = 4.0
DRAG = 0.1
GRAVITY = np.array([0.0, 0.0, -9.81])


def initial_state(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Positions in a cube around the origin, small random velocities."""
    positions = rng.uniform(-1.0, 1.0, size=(N_PARTICLES, 3))
    velocities = rng.normal(0.0, 0.1, size=(N_PARTICLES, 3))
    return positions, velocities


def compute_forces(positions: np.ndarray, velocities: np.ndarray) -> np.ndarray:
    """Trap + drag + gravity on every particle, shape (N_PARTICLES, 3)."""
    return -TRAP_STIFFNESS * positions - DRAG * velocities + GRAVITY


def kinetic_energy(velocities: np.ndarray) -> float:
    # Unit masses: E = 1/2 * sum |v|^2.
    return float(0.5 * np.sum(velocities**2))


def main() -> dict:
    rng = np.random.default_rng(seed=5)
    positions, velocities = initial_state(rng)
    forces = np.zeros((N_PARTICLES, 3))
    dt = 1e-3
    energy_start = kinetic_energy(velocities)

    for _ in range(N_STEPS):
        forces[:] = compute_forces(positions, velocities)
        # Each particle's update reads and writes only its own row.
        for i in range(len(positions)):
            velocities[i] += forces[i] * dt
            positions[i] += velocities[i] * dt

    centre = positions.mean(axis=0)
    return {
        "steps": N_STEPS,
        "simulated_time": round(N_STEPS * dt, 6),
        "kinetic_energy_start": round(energy_start, 3),
        "kinetic_energy_end": round(kinetic_energy(velocities), 3),
        "centre_of_mass": [round(float(c), 5) for c in centre],
        "max_radius": round(float(np.linalg.norm(positions, axis=1).max()), 4),
    }


if __name__ == "__main__":
    print(main())
