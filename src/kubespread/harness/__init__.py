"""The conformance and benchmark harness around the scheduler: ``evaluate`` answers a
conformance input document (../shared/conformance), ``bench`` times the scheduling cycles on
a benchmark input (../shared/bench). Used by the ``evaluate`` and ``bench`` commands; the
scheduler core does not depend on it."""
