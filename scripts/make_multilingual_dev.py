"""Rebuild data/multilingual/multilingual_dev.json from public, licensed NER corpora.

The set measures the detector on non-English and non-Latin text: about 30 short real texts per
language (zh, ko, ja, ru, es, fr, de), each with its human entity annotations as character
offsets, in the TAB-like format of data/prompts/pupa_tnb_tab.json.  Nothing here is generated:
every text is a sentence, or 2-3 consecutive sentences of one source document, copied from the
source file; every mention is the source's own annotation, only its label mapped to a TAB
category (the source's label is kept in ``source_label``).

Sources are read straight out of git snapshots at pinned commits (``git show COMMIT:PATH``), so
the output depends only on those commits and on the seed.  ``--mirror-dir`` holds one bare git
directory per repository, named ``<owner>+<name>/repo`` (or ``<owner>+<name>/repo/.git``), as
``git clone --bare https://github.com/<owner>/<name> <mirror-dir>/<owner>+<name>/repo`` makes.

Per language, texts of 20-400 characters are candidates; with ``random.Random(SEED)`` the script
draws 24 that contain at least one mention and 6 that contain none (20 %, so over-masking of
entity-free text is measured), then shuffles them.  Each mention's text is asserted to equal
``text[start:end]``.

``--split train`` builds the training set data/multilingual/multilingual_train.json instead: 260
texts per language (208 with a mention, 52 without; ko: 260 with, as every KLUE dev sentence has one;
260 keeps the file under 2.5 MB), drawn with ``random.Random(SEED + 1)`` from
the source's train split where the mirrored snapshot has it (zh, es), from another split otherwise
(ru: factRuEval's testset/, the repository has no train folder; de: GermEval's test file, as its
train file is not in the snapshot), and, where the source has no split (ja, fr) or no other labelled
split is at hand (ko), from the texts the dev draw did not use, leaving out every source document
(fr, es, ru: file; ja: Wikipedia article, ``curid``; de: source URL; zh, ko: sentence) that a dev text
came from.  The dev draw is recomputed and checked against the dev JSON on disk, and the script
asserts that no training text equals, contains or is contained in a dev text, and that no training
text shares a source document with one.  Building the training set does not touch the dev JSON.

``--split train-large`` builds the larger training set data/multilingual/multilingual_train_large.jsonl:
the same sources, selection rules, exclusions and assertions as ``--split train``, but up to 900 texts
per language (720 with a mention, 180 without; where a source has fewer candidates it takes what there
is, and the report says so), drawn with ``random.Random(SEED + 2)``, in compact JSON Lines, one object a
line: ``{"doc_id": "mll-<lang>-<n>", "language", "source", "source_ref", "text", "mentions": [[start,
end, "TAB_TYPE"], ...]}`` (offsets into ``text``, end exclusive).  It is disjoint from the dev set only;
it may share texts with multilingual_train.json, which it replaces for training.  The file is kept under
4.5 MB (asserted).

Run (from the repository root):
    python3 scripts/make_multilingual_dev.py --mirror-dir /work/.mirror
    python3 scripts/make_multilingual_dev.py --mirror-dir /work/.mirror --split train
    python3 scripts/make_multilingual_dev.py --mirror-dir /work/.mirror --split train-large
The first writes data/multilingual/multilingual_dev.json, the second
data/multilingual/multilingual_train.json, the third data/multilingual/multilingual_train_large.jsonl;
all print counts per language.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

SEED = 49
N_WITH_ENTITIES = 24
N_WITHOUT_ENTITIES = 6
MIN_CHARS = 20
MAX_CHARS = 400
MAX_SENTENCES_PER_TEXT = 3

# The training split (--split train): a different seed, so the dev draw above is unchanged.
TRAIN_SEED = SEED + 1
TRAIN_N_WITH_ENTITIES = 208  # 260 texts per language, 80 % / 20 % as the dev set; 260 keeps the
TRAIN_N_WITHOUT_ENTITIES = 52  # training JSON under 2.5 MB

# The large training split (--split train-large): its own seed, up to 900 texts per language, 80 % / 20 %.
TRAIN_LARGE_SEED = SEED + 2
TRAIN_LARGE_N_WITH_ENTITIES = 720
TRAIN_LARGE_N_WITHOUT_ENTITIES = 180
TRAIN_LARGE_MAX_BYTES = 4_500_000  # lower both caps uniformly if the JSONL outgrows this
TRAIN_SPLITS = ("train", "train-large")

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "data" / "multilingual" / "multilingual_dev.json"
DEFAULT_TRAIN_OUT = REPO_ROOT / "data" / "multilingual" / "multilingual_train.json"
DEFAULT_TRAIN_LARGE_OUT = REPO_ROOT / "data" / "multilingual" / "multilingual_train_large.jsonl"

# (start, end, TAB category, source label); offsets into the candidate's text, end exclusive.
Span = Tuple[int, int, str, str]


@dataclass(frozen=True)
class Source:
    """One pinned source file set."""

    lang: str
    script: str
    name: str  # short source name: meta.source and the annotator key
    repo: str  # owner/name on GitHub
    commit: str
    paths: Tuple[str, ...]  # files, or folders (a trailing "/") whose files are read
    split: str
    licence: str


SOURCES: Dict[str, Source] = {
    "zh": Source("zh", "Han", "uner-zh-gsdsimp", "UniversalNER/UNER_Chinese-GSDSIMP",
                 "1f0307599dece7b83f4cba90ce9b63ef37a7b162", ("zh_gsdsimp-ud-dev.iob2",), "dev",
                 "CC BY-SA 4.0"),
    "ko": Source("ko", "Hangul", "klue-ner", "KLUE-benchmark/KLUE",
                 "3efd98708a40ff49251fddde35453f8fbb11f536",
                 ("klue_benchmark/klue-ner-v1.1/klue-ner-v1.1_dev.tsv",), "dev", "CC BY-SA 4.0"),
    "ja": Source("ja", "Han+Kana", "stockmark-ner-wikipedia", "stockmarkteam/ner-wikipedia-dataset",
                 "5e525c2132c0e87cce890b8b92639a0cf357c1f3", ("ner.json",),
                 "all (the dataset has no split)", "CC BY-SA 3.0"),
    "ru": Source("ru", "Cyrillic", "factrueval-2016", "dialogue-evaluation/factRuEval-2016",
                 "dfe96237fce79fde13b2021d1938587e4ea3042e", ("devset/",), "devset", "MIT"),
    "es": Source("es", "Latin", "meddocan", "PlanTL-GOB-ES/SPACCC_MEDDOCAN",
                 "783a6df385c975b328c99bcffb54196a9ba4078a", ("corpus/dev/brat/",), "dev", "CC BY 4.0"),
    "fr": Source("fr", "Latin", "winer-fr", "YoannDupont/WiNER-fr",
                 "0fe35f0d687f27f230b550a09fed1d641a4b1601", ("2016/", "2017/", "2018/"),
                 "all (the corpus has no split)", "texts CC BY 2.5 (Wikinews), annotations CC BY 4.0"),
    "de": Source("de", "Latin", "germeval-2014", "MaviccPRP/ger_ner_evals",
                 "091199e6d30885f6bba18dfd1ba1c7ea1dd51898", ("corpora/germaner/NER-de-dev.tsv",), "dev",
                 "CC BY 4.0"),
}

# The training split's sources: the same repositories, commits and licences as SOURCES.
# ko: klue-ner-v1.1_train.tsv and de: NER-de-train.tsv are files of 4 MiB and more, which the
# mirrored snapshots do not hold; ko then uses the dev file's other sentences (KLUE publishes no
# labelled test split), de GermEval's test file (a whole split of its own, like ru's testset/).
TRAIN_SOURCES: Dict[str, Source] = {
    "zh": replace(SOURCES["zh"], paths=("zh_gsdsimp-ud-train.iob2",), split="train"),
    "ko": replace(SOURCES["ko"], split="dev (sentences not in the dev set)"),
    "ja": replace(SOURCES["ja"], split="all (articles not in the dev set)"),
    "ru": replace(SOURCES["ru"], paths=("testset/",), split="testset"),
    "es": replace(SOURCES["es"], paths=("corpus/train/brat/",), split="train"),
    "fr": replace(SOURCES["fr"], split="all (documents not in the dev set)"),
    "de": replace(SOURCES["de"], paths=("corpora/germaner/NER-de-test.tsv",), split="test"),
}

# Source label -> TAB category (data/tab/*.json and cloud_edge_privacy.vocabulary.TAB_CATEGORIES).
# A label mapped to None is not a mention here (see data/multilingual/README.md).
LABEL_MAPS: Dict[str, Dict[str, Optional[str]]] = {
    "zh": {"PER": "PERSON", "ORG": "ORG", "LOC": "LOC"},
    "ko": {"PS": "PERSON", "OG": "ORG", "LC": "LOC", "DT": "DATETIME", "TI": "DATETIME", "QT": "QUANTITY"},
    "ja": {"人名": "PERSON", "法人名": "ORG", "政治的組織名": "ORG", "その他の組織名": "ORG", "地名": "LOC",
           "施設名": "LOC", "製品名": "MISC", "イベント名": "MISC"},
    "ru": {"Person": "PERSON", "Org": "ORG", "LocOrg": "LOC", "Location": "LOC", "Project": "MISC"},
    "es": {"NOMBRE_SUJETO_ASISTENCIA": "PERSON", "NOMBRE_PERSONAL_SANITARIO": "PERSON",
           "FAMILIARES_SUJETO_ASISTENCIA": "MISC", "OTROS_SUJETO_ASISTENCIA": "MISC", "PROFESION": "MISC",
           "TERRITORIO": "LOC", "PAIS": "LOC", "CALLE": "LOC",
           "HOSPITAL": "ORG", "INSTITUCION": "ORG", "CENTRO_SALUD": "ORG",
           "FECHAS": "DATETIME", "EDAD_SUJETO_ASISTENCIA": "DEM", "SEXO_SUJETO_ASISTENCIA": "DEM",
           "ID_SUJETO_ASISTENCIA": "CODE", "ID_TITULACION_PERSONAL_SANITARIO": "CODE",
           "ID_ASEGURAMIENTO": "CODE", "ID_CONTACTO_ASISTENCIAL": "CODE", "ID_EMPLEO_PERSONAL_SANITARIO": "CODE",
           "CORREO_ELECTRONICO": "CODE", "NUMERO_TELEFONO": "CODE", "NUMERO_FAX": "CODE",
           "URL_WEB": "CODE", "DIREC_PROT_INTERNET": "CODE", "NUMERO_BENEF_PLAN_SALUD": "CODE",
           "IDENTIF_VEHICULOS_NRSERIE_PLACAS": "CODE", "IDENTIF_DISPOSITIVOS_NRSERIE": "CODE",
           "IDENTIF_BIOMETRICOS": "CODE", "OTRO_NUMERO_IDENTIF": "CODE"},
    "fr": {"Person": "PERSON", "Organization": "ORG", "Location": "LOC", "Event": "MISC", "Product": "MISC",
           "Date": "DATETIME", "Hour": "DATETIME"},
    # GermEval's *deriv (e.g. "deutschen") and *part (e.g. "EU-Staaten") are words derived from or
    # containing a name, not names: left out.
    "de": {"PER": "PERSON", "ORG": "ORG", "LOC": "LOC", "OTH": "MISC"},
}
DIRECT_CATEGORIES = frozenset({"PERSON", "CODE"})


@dataclass
class Candidate:
    """One text that may be drawn, with its mentions (offsets into ``text``)."""

    text: str
    spans: List[Span]
    ref: str  # where it is in the source (file, sentence ids)


@dataclass
class Stats:
    documents_read: int = 0
    documents_skipped: int = 0  # a source annotation whose text does not match its offsets
    windows_skipped: int = 0  # a mention crossing a window boundary
    dropped_labels: Counter = field(default_factory=Counter)


class Mirror:
    """Reads files out of bare git directories at pinned commits."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def git_dir(self, repo: str) -> Path:
        base = self.root / repo.replace("/", "+") / "repo"
        for cand in (base / ".git", base):
            if (cand / "HEAD").exists():
                return cand
        raise SystemExit(f"no git directory for {repo} under {self.root} (expected {base})")

    def _git(self, repo: str, *args: str) -> bytes:
        proc = subprocess.run(["git", f"--git-dir={self.git_dir(repo)}", *args], capture_output=True)
        if proc.returncode != 0:
            raise SystemExit(f"git {' '.join(args)} failed for {repo}: {proc.stderr.decode(errors='replace')}")
        return proc.stdout

    def read(self, src: Source, path: str) -> str:
        return self._git(src.repo, "show", f"{src.commit}:{path}").decode("utf-8")

    def list_files(self, src: Source, folder: str) -> List[str]:
        out = self._git(src.repo, "ls-tree", "-r", "--name-only", src.commit, "--", folder).decode("utf-8")
        return sorted(line for line in out.splitlines() if line)


# --------------------------------------------------------------------------- helpers


def bio_spans(tags: Sequence[str]) -> List[Tuple[int, int, str]]:
    """Token-index spans ``[i, j)`` of a BIO (or IO) tag sequence."""
    spans: List[Tuple[int, int, str]] = []
    start, label = -1, ""
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, _, lab = tag.partition("-")
        if tag == "O" or prefix == "B" or (prefix == "I" and lab != label):
            if start >= 0:
                spans.append((start, i, label))
            start, label = (i, lab) if tag != "O" else (-1, "")
    return spans


def map_spans(raw: Iterable[Tuple[int, int, str]], lang: str, stats: Stats) -> List[Span]:
    out: List[Span] = []
    for s, e, label in raw:
        cat = LABEL_MAPS[lang].get(label)
        if cat is None:
            stats.dropped_labels[label] += 1
            continue
        out.append((s, e, cat, label))
    return sorted(out)


def outermost(spans: List[Span]) -> List[Span]:
    """Drop spans inside (or overlapping) an earlier, longer span: nested annotation keeps the outer one."""
    keep: List[Span] = []
    for sp in sorted(spans, key=lambda x: (x[0], -x[1], x[2], x[3])):
        if keep and sp[0] < keep[-1][1]:
            continue
        keep.append(sp)
    return keep


SENT_END = re.compile(r"(?<=[.!?…])[ \t]+(?=\S)|\n+")


def sentence_bounds(text: str) -> List[Tuple[int, int]]:
    """Character ranges of sentences: split at line breaks and after . ! ? … followed by a blank."""
    bounds: List[Tuple[int, int]] = []
    pos = 0
    for m in list(SENT_END.finditer(text)) + [None]:
        end = m.start() if m else len(text)
        seg = text[pos:end]
        if seg.strip():
            lead = len(seg) - len(seg.lstrip())
            bounds.append((pos + lead, pos + len(seg.rstrip())))
        if m:
            pos = m.end()
    return bounds


def windows(doc_text: str, sents: List[Tuple[int, int]], spans: List[Span], ref: str,
            stats: Stats) -> List[Candidate]:
    """Non-overlapping runs of up to MAX_SENTENCES_PER_TEXT consecutive sentences (<= MAX_CHARS)."""
    out: List[Candidate] = []
    i = 0
    while i < len(sents):
        j = i + 1
        while (j < len(sents) and j - i < MAX_SENTENCES_PER_TEXT
               and sents[j][1] - sents[i][0] <= MAX_CHARS):
            j += 1
        ws, we = sents[i][0], sents[j - 1][1]
        inside = [sp for sp in spans if ws <= sp[0] and sp[1] <= we]
        crossing = [sp for sp in spans if sp[0] < we and sp[1] > ws and sp not in inside]
        if crossing:
            stats.windows_skipped += 1
        else:
            out.append(Candidate(doc_text[ws:we], [(s - ws, e - ws, c, l) for s, e, c, l in inside],
                                 f"{ref}#s{i}-{j - 1}"))
        i = j
    return out


def brat_spans(ann: str, text: str) -> Optional[List[Tuple[int, int, str]]]:
    """Text-bound annotations of a BRAT .ann file; None if one does not match its text."""
    spans: List[Tuple[int, int, str]] = []
    for line in ann.splitlines():
        if not line.startswith("T"):
            continue
        _, mid, surface = line.split("\t", 2)
        label, _, offs = mid.partition(" ")
        if ";" in offs:  # discontinuous: not representable, and none occur in these sources
            return None
        s, e = (int(x) for x in offs.split())
        if text[s:e] != surface:
            return None
        spans.append((s, e, label))
    return spans


# --------------------------------------------------------------------------- loaders


def load_uner(src: Source, mirror: Mirror, stats: Stats) -> List[Candidate]:
    """UNER .iob2 (CoNLL-U-like: '# text = ...' then id, token, BIO tag, ...): one sentence each."""
    out: List[Candidate] = []
    for block in mirror.read(src, src.paths[0]).split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        text = next((ln[len("# text = "):] for ln in lines if ln.startswith("# text = ")), None)
        sent_id = next((ln[len("# sent_id = "):] for ln in lines if ln.startswith("# sent_id = ")), "?")
        if text is None:
            continue
        stats.documents_read += 1
        rows = [ln.split("\t") for ln in lines if not ln.startswith("#")]
        pos, offs, ok = 0, [], True
        for row in rows:
            tok = row[1]
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if not text.startswith(tok, pos):
                ok = False
                break
            offs.append((pos, pos + len(tok)))
            pos += len(tok)
        if not ok:
            stats.documents_skipped += 1
            continue
        raw = [(offs[i][0], offs[j - 1][1], lab) for i, j, lab in bio_spans([r[2] for r in rows])]
        out.append(Candidate(text, map_spans(raw, src.lang, stats), sent_id))
    return out


def load_klue(src: Source, mirror: Mirror, stats: Stats) -> List[Candidate]:
    """KLUE NER: '## <id>\\t<marked sentence>' then one 'character\\tBIO tag' line per character."""
    out: List[Candidate] = []
    cur_id, chars, tags = None, [], []

    def flush() -> None:
        if cur_id is None:
            return
        stats.documents_read += 1
        text = "".join(chars)
        raw = [(i, j, lab) for i, j, lab in bio_spans(tags)]
        out.append(Candidate(text, map_spans(raw, src.lang, stats), cur_id))

    for line in mirror.read(src, src.paths[0]).split("\n"):
        if line.startswith("## klue-ner"):
            flush()
            cur_id, chars, tags = line[3:].split("\t", 1)[0], [], []
        elif line.startswith("##") or cur_id is None or not line:
            continue
        else:
            ch, _, tag = line.rpartition("\t")
            chars.append(ch)
            tags.append(tag)
    flush()
    return out


def load_stockmark(src: Source, mirror: Mirror, stats: Stats) -> List[Candidate]:
    """Stockmark ner.json: [{curid, text, entities: [{name, span: [s, e], type}]}]: one sentence each."""
    out: List[Candidate] = []
    for i, item in enumerate(json.loads(mirror.read(src, src.paths[0]))):
        stats.documents_read += 1
        text = item["text"]
        raw = [(e["span"][0], e["span"][1], e["type"]) for e in item["entities"]]
        if any(text[s:e] != ent["name"] for (s, e, _), ent in zip(raw, item["entities"])):
            stats.documents_skipped += 1
            continue
        out.append(Candidate(text, outermost(map_spans(raw, src.lang, stats)), f"item{i}/curid{item['curid']}"))
    return out


_FACTRUEVAL_NAME_SPANS = frozenset({"name", "surname", "patronymic", "nickname", "org_name", "loc_name", "prj_name"})


def load_factrueval(src: Source, mirror: Mirror, stats: Stats) -> List[Candidate]:
    """factRuEval-2016 devset: book_N.txt/.tokens/.spans/.objects; sentences from .tokens."""
    out: List[Candidate] = []
    files = mirror.list_files(src, src.paths[0])
    for txt_path in [f for f in files if f.endswith(".txt")]:
        base = txt_path[: -len(".txt")]
        if base + ".tokens" not in files:  # testset/list.txt: a list of file names, not a document
            continue
        text = mirror.read(src, txt_path)
        stats.documents_read += 1
        sents: List[Tuple[int, int]] = []
        first: Optional[int] = None
        last = 0
        ok = True
        for line in mirror.read(src, base + ".tokens").splitlines() + [""]:
            if not line.strip():
                if first is not None:
                    sents.append((first, last))
                first = None
                continue
            _, s, ln, tok = line.split(" ", 3)
            s_i, e_i = int(s), int(s) + int(ln)
            ok = ok and text[s_i:e_i] == tok
            first = s_i if first is None else first
            last = e_i
        spans_by_id: Dict[str, Tuple[int, int, str]] = {}
        for line in mirror.read(src, base + ".spans").splitlines():
            if line.strip():
                sid, stype, s, ln = line.split(" ")[:4]
                spans_by_id[sid] = (int(s), int(s) + int(ln), stype)
        raw: List[Tuple[int, int, str]] = []
        for line in mirror.read(src, base + ".objects").splitlines():
            if not line.strip():
                continue
            head = line.split("#", 1)[0].split()
            label, parts = head[1], [spans_by_id[x] for x in head[2:]]
            if all(p[2] == "geo_adj" for p in parts):
                # an adjective ("подмосковного"), like GermEval's LOCderiv: not a name
                label = f"{label}(geo_adj)"
            elif not any(p[2] in _FACTRUEVAL_NAME_SPANS for p in parts):
                # a nominal mention only ("компания", "наблюдательного совета концерна"): not a name
                label = f"{label}(descriptor)"
            raw.append((min(p[0] for p in parts), max(p[1] for p in parts), label))
        if not ok:
            stats.documents_skipped += 1
            continue
        spans = outermost(map_spans(raw, src.lang, stats))
        out.extend(windows(text, sents, spans, base.rsplit("/", 1)[-1], stats))
    return out


def load_brat_folder(src: Source, mirror: Mirror, stats: Stats) -> List[Candidate]:
    """BRAT .txt/.ann pairs (MEDDOCAN, WiNER-fr); sentences from line breaks and end punctuation."""
    out: List[Candidate] = []
    for folder in src.paths:
        files = mirror.list_files(src, folder)
        for ann_path in [f for f in files if f.endswith(".ann")]:
            base = ann_path[: -len(".ann")]
            text = mirror.read(src, base + ".txt")
            stats.documents_read += 1
            raw = brat_spans(mirror.read(src, ann_path), text)
            if raw is None:
                stats.documents_skipped += 1
                continue
            spans = outermost(map_spans(raw, src.lang, stats))
            out.extend(windows(text, sentence_bounds(text), spans, base, stats))
    return out


_NO_SPACE_BEFORE = {",", ".", ";", ":", "!", "?", ")", "]", "}", "%", "…", "“", "»"}
_NO_SPACE_AFTER = {"(", "[", "{", "„", "«"}


def detokenize(tokens: Sequence[str]) -> Tuple[str, List[Tuple[int, int]]]:
    """Join GermEval tokens with blanks, except before closing and after opening punctuation.

    A straight double quote opens and closes in turn.  Returns the text and each token's offsets.
    """
    parts: List[str] = []
    offs: List[Tuple[int, int]] = []
    pos = 0
    quote_open = False
    glue_next = False
    for tok in tokens:
        glue = glue_next or not parts or tok in _NO_SPACE_BEFORE
        glue_next = tok in _NO_SPACE_AFTER
        if tok == '"':
            if quote_open:
                glue = True
            else:
                glue_next = True
            quote_open = not quote_open
        if not glue:
            parts.append(" ")
            pos += 1
        offs.append((pos, pos + len(tok)))
        parts.append(tok)
        pos += len(tok)
    return "".join(parts), offs


def load_germeval(src: Source, mirror: Mirror, stats: Stats) -> List[Candidate]:
    """GermEval 2014 TSV: '#\\t<source url> [date]' then 'n\\ttoken\\touter BIO\\tinner BIO' lines."""
    out: List[Candidate] = []
    for block in mirror.read(src, src.paths[0]).split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        stats.documents_read += 1
        ref = next((ln.split("\t")[1] for ln in lines if ln.startswith("#")), "?")
        rows = [ln.split("\t") for ln in lines if not ln.startswith("#")]
        text, offs = detokenize([r[1] for r in rows])
        raw = [(offs[i][0], offs[j - 1][1], lab) for i, j, lab in bio_spans([r[2] for r in rows])]
        out.append(Candidate(text, map_spans(raw, src.lang, stats), ref))
    return out


LOADERS: Dict[str, Callable[[Source, Mirror, Stats], List[Candidate]]] = {
    "zh": load_uner, "ko": load_klue, "ja": load_stockmark, "ru": load_factrueval,
    "es": load_brat_folder, "fr": load_brat_folder, "de": load_germeval,
}


# --------------------------------------------------------------------------- assembly


def draw(cands: List[Candidate], rng: random.Random, n_with_entities: int = N_WITH_ENTITIES,
         n_without_entities: int = N_WITHOUT_ENTITIES) -> List[Candidate]:
    usable = [c for c in cands if MIN_CHARS <= len(c.text) <= MAX_CHARS]
    with_ents = [c for c in usable if c.spans]
    without = [c for c in usable if not c.spans]
    n_without = min(n_without_entities, len(without))
    n_with = min(n_with_entities + n_without_entities - n_without, len(with_ents))
    picked = rng.sample(with_ents, n_with) + rng.sample(without, n_without)
    rng.shuffle(picked)
    return picked


def to_document(src: Source, idx: int, cand: Candidate, split: str = "dev") -> Dict[str, object]:
    doc_id = f"{'mlt' if split == 'train' else 'ml'}-{src.lang}-{idx}"
    mentions: List[Dict[str, object]] = []
    entity_ids: Dict[Tuple[str, str], str] = {}
    for k, (s, e, cat, label) in enumerate(cand.spans):
        surface = cand.text[s:e]
        assert surface and surface == cand.text[s:e], (doc_id, s, e)
        key = (cat, surface)
        if key not in entity_ids:
            entity_ids[key] = f"{doc_id}_e{len(entity_ids)}"
        mentions.append({
            "entity_type": cat,
            "entity_mention_id": f"{doc_id}_m{k}",
            "start_offset": s,
            "end_offset": e,
            "span_text": surface,
            "edit_type": "check",
            "identifier_type": "DIRECT" if cat in DIRECT_CATEGORIES else "QUASI",
            "entity_id": entity_ids[key],
            "confidential_status": "NOT_CONFIDENTIAL",
            "source_label": label,
        })
    return {
        "doc_id": doc_id,
        "text": cand.text,
        "task": "multilingual",
        "dataset_type": split,
        "meta": {"language": src.lang, "script": src.script, "source": src.name, "source_repo": src.repo,
                 "source_commit": src.commit, "source_split": src.split, "source_ref": cand.ref},
        "quality_checked": False,
        "annotations": {src.name: {"entity_mentions": mentions}},
    }


def to_compact(src: Source, idx: int, cand: Candidate) -> Dict[str, object]:
    """One line of the train-large JSONL: the text and its mentions as [start, end, TAB category]."""
    doc_id = f"mll-{src.lang}-{idx}"
    mentions: List[List[object]] = []
    for s, e, cat, _label in cand.spans:
        # The loaders asserted each span against the source (token, character or .ann surface); the
        # offsets must still select that surface, non-empty, inside the text.
        assert 0 <= s < e <= len(cand.text) and cand.text[s:e].strip(), (doc_id, s, e)
        mentions.append([s, e, cat])
    return {"doc_id": doc_id, "language": src.lang, "source": src.name, "source_ref": cand.ref,
            "text": cand.text, "mentions": mentions}


def compact_lines(docs: Sequence[Dict[str, object]]) -> str:
    return "".join(json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n" for d in docs)


def source_doc(lang: str, src: Source, ref: str) -> str:
    """The source document a text comes from, as a key that is equal for dev and train texts of one document.

    ja: the Wikipedia article (``curid``); fr: the Wikinews file; es, ru: the file name without its
    folder (a name in both folders counts as one document); de: the citation's source URL (one
    article in two GermEval splits counts as one); zh, ko: the sentence, with its file (UNER's
    sentence ids restart in every file).
    """
    doc = ref.split("#", 1)[0]
    if lang == "ja":
        return "curid" + doc.split("/curid", 1)[1]
    if lang in ("es", "ru"):
        return doc.rsplit("/", 1)[-1]
    if lang in ("zh", "ko"):
        return f"{src.paths[0]}:{doc}"
    return doc


def overlaps(text: str, dev_texts: Iterable[str]) -> bool:
    return any(text == d or text in d or d in text for d in dev_texts)


def dev_draw(mirror: Mirror, lang: str) -> List[Candidate]:
    """The dev set's texts of one language, drawn exactly as the dev build draws them."""
    return draw(LOADERS[lang](SOURCES[lang], mirror, Stats()), random.Random(SEED))


def check_dev_json(path: Path, lang: str, dev: List[Candidate]) -> bool:
    """Assert that the dev JSON on disk holds exactly the recomputed dev draw; False if there is none."""
    if not path.exists():
        return False
    on_disk = [(d["text"], d["meta"]["source_ref"]) for d in json.loads(path.read_text(encoding="utf-8"))
               if d["meta"]["language"] == lang]
    if not on_disk:  # a dev JSON built without this language
        return False
    assert on_disk == [(c.text, c.ref) for c in dev], f"{path} does not hold the {lang} dev draw: rebuild it"
    return True


def build(mirror: Mirror, langs: Sequence[str], split: str = "dev",
          dev_json: Optional[Path] = DEFAULT_OUT) -> Tuple[List[Dict[str, object]], List[str]]:
    docs: List[Dict[str, object]] = []
    report: List[str] = []
    for lang in langs:
        src = (TRAIN_SOURCES if split in TRAIN_SPLITS else SOURCES)[lang]
        stats = Stats()
        cands = LOADERS[lang](src, mirror, stats)
        excluded = ""
        if split in TRAIN_SPLITS:
            dev = dev_draw(mirror, lang)
            checked = dev_json is not None and check_dev_json(dev_json, lang, dev)
            dev_docs = {source_doc(lang, SOURCES[lang], c.ref) for c in dev}
            dev_texts = [c.text for c in dev]
            n_all, seen, kept = len(cands), set(), []
            for c in cands:
                if (source_doc(lang, src, c.ref) in dev_docs or c.text in seen
                        or overlaps(c.text, dev_texts)):
                    continue
                seen.add(c.text)
                kept.append(c)
            cands = kept
            if split == "train":
                n_want = (TRAIN_N_WITH_ENTITIES, TRAIN_N_WITHOUT_ENTITIES)
                picked = draw(cands, random.Random(TRAIN_SEED), *n_want)
            else:
                n_want = (TRAIN_LARGE_N_WITH_ENTITIES, TRAIN_LARGE_N_WITHOUT_ENTITIES)
                picked = draw(cands, random.Random(TRAIN_LARGE_SEED), *n_want)
            # Disjointness from the dev set, on what is written out.
            for c in picked:
                assert source_doc(lang, src, c.ref) not in dev_docs, (lang, c.ref)
                assert not overlaps(c.text, dev_texts), (lang, c.ref)
            assert len({c.text for c in picked}) == len(picked), lang
            n_with_got, short = sum(1 for c in picked if c.spans), ""
            if n_with_got != n_want[0] or len(picked) - n_with_got != n_want[1]:
                usable = [c for c in cands if MIN_CHARS <= len(c.text) <= MAX_CHARS]
                n_u_with = sum(1 for c in usable if c.spans)
                short = (f"; SHORT of {n_want[0]} with / {n_want[1]} without: got {n_with_got} with / "
                         f"{len(picked) - n_with_got} without, all there is ({n_u_with} usable with, "
                         f"{len(usable) - n_u_with} usable without entities)")
            excluded = (f"; {n_all - len(cands)} candidates left out (dev documents {len(dev_docs)}, "
                        f"overlapping or repeated texts), dev draw "
                        f"{'checked against ' + str(dev_json) if checked else 'recomputed (no dev JSON to check)'}"
                        f"{short}")
        else:
            picked = draw(cands, random.Random(SEED))
        if split == "train-large":
            lang_docs = [to_compact(src, i, c) for i, c in enumerate(picked)]
        else:
            lang_docs = [to_document(src, i, c, split) for i, c in enumerate(picked)]
        docs.extend(lang_docs)
        n_ment = sum(len(c.spans) for c in picked)
        n_empty = sum(1 for c in picked if not c.spans)
        cats = Counter(sp[2] for c in picked for sp in c.spans)
        dropped = ", ".join(f"{k} {v}" for k, v in sorted(stats.dropped_labels.items())) or "none"
        report.append(
            f"{lang}: {len(lang_docs)} texts ({n_empty} without entities), {n_ment} mentions "
            f"[{', '.join(f'{k} {v}' for k, v in sorted(cats.items()))}] from {len(cands)} candidates; "
            f"source docs read {stats.documents_read}, skipped {stats.documents_skipped}; "
            f"windows skipped {stats.windows_skipped}; labels left out: {dropped}{excluded}"
        )
    return docs, report


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror-dir", type=Path, required=True,
                    help="folder with one bare git dir per source repository, <owner>+<name>/repo")
    ap.add_argument("--split", choices=("dev",) + TRAIN_SPLITS, default="dev",
                    help="dev: the dev set (default); train: the training set, disjoint from the dev set; "
                         "train-large: the larger JSONL training set, disjoint from the dev set")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output file (default {DEFAULT_OUT}, with --split train {DEFAULT_TRAIN_OUT}, "
                         f"with --split train-large {DEFAULT_TRAIN_LARGE_OUT})")
    ap.add_argument("--dev-json", type=Path, default=DEFAULT_OUT,
                    help="with --split train or train-large: the dev JSON that the recomputed dev draw is "
                         "checked against")
    ap.add_argument("--languages", default=",".join(SOURCES),
                    help=f"comma-separated subset of {','.join(SOURCES)} (default: all)")
    args = ap.parse_args(argv)
    langs = [x.strip() for x in args.languages.split(",") if x.strip()]
    unknown = [x for x in langs if x not in SOURCES]
    if unknown:
        ap.error(f"unknown language(s): {', '.join(unknown)}")
    if args.out is None:
        args.out = {"train": DEFAULT_TRAIN_OUT, "train-large": DEFAULT_TRAIN_LARGE_OUT}.get(args.split, DEFAULT_OUT)
    if args.split in TRAIN_SPLITS:
        assert args.out.resolve() != DEFAULT_OUT.resolve(), f"--split {args.split} must not overwrite the dev JSON"
    if args.split == "train-large":
        assert args.out.resolve() != DEFAULT_TRAIN_OUT.resolve(), \
            "--split train-large must not overwrite the training JSON"
    docs, report = build(Mirror(args.mirror_dir), langs, args.split, args.dev_json)
    for line in report:
        print(line)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.split == "train-large":
        payload = compact_lines(docs).encode("utf-8")
        assert len(payload) < TRAIN_LARGE_MAX_BYTES, \
            f"{len(payload)} bytes: lower TRAIN_LARGE_N_WITH_ENTITIES / _WITHOUT_ uniformly"
        # Read it back as written: one object a line, keys in order, offsets selecting each mention.
        for line, doc in zip(payload.decode("utf-8").split("\n"), docs):
            back = json.loads(line)
            assert back == doc and list(back) == list(doc), doc["doc_id"]
            for s, e, _cat in back["mentions"]:
                assert back["text"][s:e] == doc["text"][s:e] and back["text"][s:e], (doc["doc_id"], s, e)
        args.out.write_bytes(payload)
        total = sum(len(d["mentions"]) for d in docs)  # type: ignore[arg-type]
    else:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(docs, fh, ensure_ascii=False)
            fh.write("\n")
        total = sum(len(d["annotations"][next(iter(d["annotations"]))]["entity_mentions"])  # type: ignore[index]
                    for d in docs)
    print(f"total: {len(docs)} texts, {total} mentions -> {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
