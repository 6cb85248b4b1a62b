"""README result tables are generated from the committed results/ (scripts/readme_tables.py)."""
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import readme_tables  # noqa: E402


def test_readme_tables_match_the_committed_results():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "readme_tables.py"), "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr


def test_every_table_spec_is_used_and_reads_its_source():
    used = "\n".join(p.read_text(encoding="utf-8") for p in readme_tables.readmes())
    for name, spec in readme_tables.TABLES.items():
        assert f"<!-- generated-table: {name} " in used, f"table {name} is in no README"
        rows = readme_tables.render(spec)
        assert len(rows) > 3 and rows[1].startswith("|---")


def test_a_hand_edited_cell_is_caught():
    """The issue's case: a README cell that says something else than results/ (e.g. SELS 0.074 for 0.030)."""
    readme = REPO / readme_tables.TAB_EXAMPLE / "README.md"
    text = readme.read_text(encoding="utf-8")
    lines = text.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("<!-- generated-table: tab_full_mti "))
    row = lines[start + 3]                      # marker, header, separator, first row
    cells = row.split(" | ")
    cells[3] = "0.074" if cells[3] != "0.074" else "0.075"
    edited = text.replace(row, " | ".join(cells), 1)
    assert edited != text
    assert readme_tables.regenerate(edited, "README") == text
