"""IoT time series before an LLM sees them (issue 14): Rehman et al.'s adaptive contextual DP, baselines,
STS / numeric-error metrics and attacks, over public series shipped in the sktime wheel.

Modules: :mod:`.data` (loaders), :mod:`.operator` (the release methods and their privacy maps),
:mod:`.attack`, :mod:`.ts_metrics`, :mod:`.bench` (prompts, models, the grid, tables) and
:mod:`.ianvs_modules` (what the Ianvs example's thin module files register).
"""
