"""How the commands draw what more than one of them shows: the spread table, placements and
preemptions, the HTML report of a placement. Rendering only; the numbers come from the layers
below."""
