// Runtime: loop, clocks, outputs.
