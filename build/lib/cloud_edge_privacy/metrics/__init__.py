"""Metric functions ``f(y_true, y_pred)`` shared by our runner and the Ianvs testenv modules."""
