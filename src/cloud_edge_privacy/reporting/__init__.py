"""Reporting: report.md, the HTML leaderboard, plots and the CI check."""
