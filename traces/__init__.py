"""Counterexample traces: ``itf`` (export, ITF JSON as Apalache and Quint write it),
``load`` (read an ITF trace or a hand-written action list), ``replay`` (re-execute one
step by step), ``shrink`` (minimise one), ``text`` and ``html`` (views)."""
