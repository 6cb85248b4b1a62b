import pytest

from cloud_edge_privacy.desensitization import get_operator
from cloud_edge_privacy.desensitization.generalization import (generalize_age, generalize_date, generalize_number,
                                                              generalize_org)
from cloud_edge_privacy.desensitization.pseudonyms import restore_answer
from cloud_edge_privacy.spans import Span

@pytest.mark.parametrize("fn, arg, expected", [
    (generalize_date, ("3 May 1961", "month"), "May 1961"),
    (generalize_date, ("3 May 1961", "year"), "1961"),
    (generalize_date, ("1961", "year"), "the 1960s"),
    (generalize_number, ("48,000 euros",), "between 10,000 and 100,000 euros"),
    (generalize_number, ("2.3 million kroner",), "between 1,000,000 and 10,000,000 kroner"),
    (generalize_age, ("aged 46",), "aged 40-49"),
    (generalize_org, ("Gdańsk Regional Court",), "a court"),
    (generalize_org, ("Baltic Fisheries Ltd",), "a company"),
    (generalize_org, ("Ministry of Education",), "a public authority"),
])
def test_generalizers(fn, arg, expected):
    assert fn(*arg) == expected

# The operator-level tests of generalization and adaptive live in test_dp_mechanisms.py and
# test_adaptive_policy.py (new operator protocol); the pseudonym tests in test_pseudonyms.py.
