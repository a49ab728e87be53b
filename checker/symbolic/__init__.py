"""Symbolic checking with z3: bounded model checking, k-induction and IC3/PDR, over the
model's symbolic twin (``model.interface.SymbolicModel``)."""
