"""Simulation over time: the virtual clock, the engine, scenarios and their results."""

from kubespread.sim.clock import Clock, Timer
from kubespread.sim.engine import EPOCH, Controller, Event, Simulation, SimulationError, timestamp

__all__ = [
    "EPOCH",
    "Clock",
    "Controller",
    "Event",
    "Simulation",
    "SimulationError",
    "Timer",
    "timestamp",
]
