"""Tests of the spec layer: versions, attributes, geometry."""
