"""scripts/ianvs_parity.py: every response cache is private to a run, warm runs reuse their own, and the
wall-clock and cache-state metrics are not what decides parity."""
import csv
import importlib.util

from conftest import REPO


def _parity():
    spec = importlib.util.spec_from_file_location("ianvs_parity", REPO / "scripts" / "ianvs_parity.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_private_cache_shares_models_but_no_response_cache(tmp_path, monkeypatch):
    parity = _parity()
    real = tmp_path / "real"
    for name in ("models", "wheels", "trir", "edge_cache", "cloud_cache", "judge_cache"):
        (real / name).mkdir(parents=True)
    (real / "llama_server_1234.log").write_text("")
    monkeypatch.setenv("CEP_CACHE_DIR", str(real))
    run = parity.private_cache(tmp_path / "run")
    assert sorted(p.name for p in run.iterdir()) == ["models", "trir", "wheels"]
    assert all((run / n).is_symlink() for n in ("models", "trir", "wheels"))
    (run / "edge_cache").mkdir()                               # the fresh run fills its own caches ...
    (run / "edge_cache" / "entry.json").write_text("{}")
    warm = parity.private_cache(tmp_path / "run", fresh=False)  # ... the warm run keeps them
    assert (warm / "edge_cache" / "entry.json").exists()
    fresh = parity.private_cache(tmp_path / "run", fresh=True)  # a fresh run starts empty again
    assert not (fresh / "edge_cache").exists() and (real / "edge_cache").exists()


def test_wall_clock_and_cache_state_metrics_do_not_decide_parity(tmp_path, capsys):
    parity = _parity()
    cols = ["rank", "algorithm", "sels", "latency_mean_ms", "cache_replays", "lo_pct", "edge_energy_j", "paradigm",
            "cloudmodel-privacy_method", "time", "url"]
    rows = {"fresh": ["1", "a", "0.25", "1234.5", "0", "3.1", "12.5", "jointinference", "placeholder", "t1", "u1"],
            "warm": ["1", "a", "0.25", "", "3", "", "9.75", "jointinference", "placeholder", "t2", "u2"]}
    for name, row in rows.items():
        with open(tmp_path / f"{name}.csv", "w", newline="") as fh:
            csv.writer(fh).writerows([cols, row])
    args = ["--compare", str(tmp_path / "fresh.csv"), str(tmp_path / "warm.csv")]
    assert parity.main(args) == 0
    # PRISM's edge energy is measured like latency; metrics the files do not have are not listed
    assert "not compared: latency_mean_ms, lo_pct, edge_energy_j, cache_replays)" in capsys.readouterr().out
    assert parity.main(args + ["--compare-all"]) == 1


def test_console_cells_print_an_infinite_epsilon():
    """The time-series job's unprotected row has ts_epsilon_series = inf: `run` printed its rank files, then
    crashed on the console board (exit 1), so the parity command failed on that job."""
    from cloud_edge_privacy.reporting.leaderboard import fmt_cell

    assert [fmt_cell(v) for v in ("inf", float("-inf"), "2400.0", "0.25", "")] == ["inf", "-inf", "2400", "0.250", ""]


def test_compare_many_runs_prints_them_side_by_side(tmp_path, capsys):
    parity = _parity()
    cols = ["rank", "algorithm", "sels", "latency_mean_ms", "paradigm", "cloudmodel-privacy_method", "time", "url"]
    runs = {"ianvs-fresh": "0.25", "ianvs-warm": "0.25", "ours-fresh": "0.25", "ours-warm": "0.5"}
    for name, sels in runs.items():
        with open(tmp_path / f"{name}.csv", "w", newline="") as fh:
            csv.writer(fh).writerows([cols, ["1", "a", sels, "10", "jointinference", "placeholder", "t", "u"],
                                      ["2", "a", "0.75", "20", "jointinference", "none", "t", "u"]])
    args = ["--compare", *(str(tmp_path / f"{n}.csv") for n in runs)]
    assert parity.main(args) == 1                                  # ours-warm differs on one value
    out = capsys.readouterr().out
    assert "| privacy_method=placeholder | sels | 0.25 | 0.25 | 0.25 | 0.5 | NO |" in out
    assert "| privacy_method=none | sels | 0.75 | 0.75 | 0.75 | 0.75 | yes |" in out
    assert "latency_mean_ms |" not in out                          # wall clock: not in the table either
    assert parity.main(args[:3]) == 0                               # the first two runs agree
