"""Real public time series that install offline with the sktime 1.2.0 wheel (no download at run time).

Three attributes, each with a public domain (the range a value may take, known before seeing any data):

* ``acsf1`` / ``power``: ACS-F1 appliance consumption signatures (Gisler et al. 2013, as edited for the UCR
  archive by Schäfer and Leser 2017; ``sktime/datasets/data/ACSF1``).  The UCR copy is z-normalised per
  recording, so the unit is "standardised power"; one recording of 1460 readings is reduced on the edge to
  48 block peaks.  Sensitive event: an appliance burst (block peak above 3, a public threshold).
* ``solar`` / ``solar_generation``: GB national solar generation as a share of installed capacity, half-hourly,
  1-6 May 2021 (Sheffield Solar PV_Live; ``sktime/datasets/data/solar/solar.csv``); one day = 48 values.
* ``mitdb`` / ``heart_rate``: beat-to-beat heart rate (bpm) derived on the edge from the ECG excerpt in
  ``sktime/datasets/data/mitdb/mitdb.csv`` (360 Hz, 7500 samples, with a 0/1 anomaly label; the wheel ships no
  loader or documentation for it; it matches the MIT-BIH Arrhythmia Database format, PhysioNet).  25 beats, one
  premature beat gives a heart-rate spike (109 bpm) exactly where the label is 1.

Each dataset also names a *public calibration series* (another recording, another day, or a synthetic rhythm)
on which the adaptive method may choose ε without looking at the private series.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

DATASETS = ("acsf1", "solar", "mitdb")


@dataclass(frozen=True)
class Series:
    """One user's series of one attribute, as the edge holds it (never sent as is unless not sensitive)."""

    dataset: str
    series_id: str
    attribute: str
    unit: str
    step: str                      # what one index means, e.g. "half-hour"
    values: Tuple[float, ...]
    domain: Tuple[float, float]    # public range of the attribute (Δf = hi - lo)
    event_threshold: float         # a value above it is the sensitive event (appliance on, HR spike, ...)
    event_name: str
    user_id: str = ""
    source: str = ""

    @property
    def array(self) -> np.ndarray:
        return np.asarray(self.values, dtype=float)

    @property
    def sensitivity(self) -> float:
        """Δf = max - min of the public domain (the range sensitivity of one value)."""
        return float(self.domain[1] - self.domain[0])

    def events(self) -> np.ndarray:
        """Boolean mask of the sensitive event per index."""
        return self.array > self.event_threshold

    def to_dict(self) -> Dict:
        return {"dataset": self.dataset, "series_id": self.series_id, "attribute": self.attribute,
                "unit": self.unit, "step": self.step, "values": list(self.values), "domain": list(self.domain),
                "event_threshold": self.event_threshold, "event_name": self.event_name,
                "user_id": self.user_id, "source": self.source}

    @classmethod
    def from_dict(cls, d: Dict) -> "Series":
        return cls(d["dataset"], d["series_id"], d["attribute"], d["unit"], d["step"],
                   tuple(float(v) for v in d["values"]), (float(d["domain"][0]), float(d["domain"][1])),
                   float(d["event_threshold"]), d["event_name"], d.get("user_id", ""), d.get("source", ""))


def sktime_data_dir() -> Path:
    """The data folder inside the installed sktime wheel."""
    spec = importlib.util.find_spec("sktime")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("sktime is not installed (pip install -e '.[timeseries]' or scripts/setup.sh)")
    d = Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data"
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: sktime's bundled datasets are missing")
    return d


def read_ts_rows(path: Path) -> List[Tuple[np.ndarray, str]]:
    """Rows of a univariate ``.ts`` file (UCR/sktime format): (values, class label)."""
    rows: List[Tuple[np.ndarray, str]] = []
    in_data = False
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.lower().startswith("@data"):
            in_data = True
            continue
        if not in_data or line.startswith("@"):
            continue
        *dims, label = line.split(":")
        rows.append((np.array([float(v) for v in dims[0].split(",")]), label))
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return rows


# Recordings of ACS-F1 class 3, the class whose recordings have clear on-bursts (other classes are flat).
ACSF1_PRIVATE_ROWS = (10, 12, 13, 16, 19)   # train split
ACSF1_PUBLIC_ROW = 12                       # test split, used only for calibration


def _acsf1(split: str, row: int, length: int) -> Series:
    rows = read_ts_rows(sktime_data_dir() / "ACSF1" / f"ACSF1_{split.upper()}.ts")
    vals, label = rows[row]
    size = len(vals) // length
    x = np.round(vals[: size * length].reshape(length, size).max(axis=1), 2)
    return Series("acsf1", f"{split}-{row}", "power", "standardised power (z-score per recording)",
                  f"block of {size} readings (peak)", tuple(float(v) for v in x), (-1.0, 13.0), 3.0,
                  "appliance burst (peak above 3)", user_id=f"acsf1-{split}-{row}",
                  source=f"ACSF1 {split} row {row} (class {label}), peak of {size}-reading blocks")


def _solar_days() -> List[np.ndarray]:
    import csv

    with open(sktime_data_dir() / "solar" / "solar.csv", encoding="utf-8") as fh:
        vals = [float(r["solar_gen"]) for r in csv.DictReader(fh)]
    return [np.array(vals[i : i + 48]) for i in range(0, len(vals) - 47, 48)]


def _solar(day: int, length: int) -> Series:
    """48 half-hours; 24 hourly means; fewer: hourly means centred on the daylight hours."""
    x = _solar_days()[day]
    step = "half-hour from 00:00"
    if length < 48:
        x = x.reshape(24, 2).mean(axis=1)
        step = "hour from 00:00"
        if length < 24:
            start = 12 - length // 2
            x = x[start : start + length]
            step = f"hour from {start:02d}:00"
    return Series("solar", f"day-{day}", "solar_generation", "share of installed capacity", step,
                  tuple(float(v) for v in np.round(x, 3)), (0.0, 1.0), 0.3, "generation above 30% of capacity",
                  user_id=f"solar-day-{day}", source=f"sktime solar.csv (PV_Live GB), day {day} from 2021-05-01")


def ecg_heart_rate(fs: float = 360.0) -> Tuple[np.ndarray, np.ndarray]:
    """Beat-to-beat heart rate (bpm) from the mitdb ECG excerpt, and whether each beat is labelled anomalous."""
    import csv

    from scipy.signal import find_peaks

    with open(sktime_data_dir() / "mitdb" / "mitdb.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    ecg = np.array([float(r["data"]) for r in rows])
    lab = np.array([int(float(r["label"])) for r in rows])
    peaks, _ = find_peaks(ecg, distance=int(0.3 * fs), prominence=0.5)
    hr = 60.0 * fs / np.diff(peaks)
    anomalous = np.array([lab[p] == 1 for p in peaks[1:]])
    return np.round(hr, 1), anomalous


def _mitdb(length: int) -> Series:
    hr, _ = ecg_heart_rate()  # 25 beats; ``length`` keeps the last beats (the spike is the second to last)
    x = hr[-length:] if length < len(hr) else hr
    return Series("mitdb", "record-excerpt", "heart_rate", "beats per minute", "beat", tuple(float(v) for v in x), (30.0, 200.0),
                  100.0, "heart-rate spike above 100 bpm", user_id="mitdb-patient",
                  source="sktime mitdb.csv ECG excerpt, R peaks by scipy find_peaks")


def load_series(dataset: str, length: int = 24, index: int = 0) -> Series:
    """The private series ``index`` of ``dataset`` (``length`` values; mitdb has 25 beats at most)."""
    if dataset == "acsf1":
        return _acsf1("train", ACSF1_PRIVATE_ROWS[index], length)
    if dataset == "solar":
        return _solar(1 + index, length)  # day 0 is the public calibration day
    if dataset == "mitdb":
        if index != 0:
            raise ValueError("mitdb has one recording (index 0)")
        return _mitdb(length)
    raise ValueError(f"unknown dataset {dataset!r}; known: {DATASETS}")


def calibration_series(dataset: str, length: int = 24, seed: int = 0) -> Series:
    """Public data of the same attribute for choosing ε without the private series.

    acsf1: a recording of the test split; solar: 1 May 2021 (not used as a private day); mitdb: a synthetic
    sinus rhythm (72 bpm, breathing modulation, one premature beat) drawn from ``seed``.
    """
    if dataset == "acsf1":
        return _acsf1("test", ACSF1_PUBLIC_ROW, length)
    if dataset == "solar":
        return _solar(0, length)
    if dataset == "mitdb":
        rng = np.random.default_rng(seed)
        n = min(length, 25)
        t = np.arange(n)
        hr = 72 + 3 * np.sin(2 * np.pi * t / 5) + rng.normal(0, 1.0, n)
        hr[n - 2] = 110.0
        return Series("mitdb", "synthetic-rhythm", "heart_rate", "beats per minute", "beat", tuple(float(v) for v in np.round(hr, 1)),
                      (30.0, 200.0), 100.0, "heart-rate spike above 100 bpm", user_id="public-synthetic",
                      source="synthetic sinus rhythm (public calibration)")
    raise ValueError(f"unknown dataset {dataset!r}; known: {DATASETS}")


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    origin: str
    licence: str
    notes: List[str] = field(default_factory=list)


DATASET_INFO: Dict[str, DatasetInfo] = {
    "acsf1": DatasetInfo("ACS-F1 (UCR archive copy)", "Gisler et al. 2013, edited by Schäfer & Leser 2017; shipped "
                         "in the sktime 1.2.0 wheel (BSD-3-Clause package)",
                         "UCR time-series archive, free for research use with citation"),
    "solar": DatasetInfo("GB national solar PV_Live estimates", "Sheffield Solar PV_Live API sample stored in the "
                         "sktime 1.2.0 wheel", "PV_Live data, free with attribution to Sheffield Solar"),
    "mitdb": DatasetInfo("ECG excerpt with anomaly labels", "file shipped in the sktime 1.2.0 wheel without a loader; "
                         "format of the MIT-BIH Arrhythmia Database (PhysioNet)",
                         "MIT-BIH Arrhythmia Database: ODC Attribution License 1.0 on PhysioNet (provenance of the "
                         "excerpt not documented by sktime)"),
}


def default_series(length: int = 24, per_dataset: int = 1, datasets: Optional[Tuple[str, ...]] = None) -> List[Series]:
    """The benchmark's private series: ``per_dataset`` of each dataset (mitdb has one)."""
    out: List[Series] = []
    for ds in datasets or DATASETS:
        n = 1 if ds == "mitdb" else per_dataset
        out.extend(load_series(ds, length, i) for i in range(n))
    return out
