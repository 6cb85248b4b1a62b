"""Words of a trade and of a request's form identify nobody: software and languages, instruction verbs, greetings.
The default gateway sends them as written, and keeps masking the names and employers beside them."""
import os

import pytest

from cloud_edge_privacy.detection.trade_terms import trade_phrases, trade_trim, trade_word


@pytest.fixture(scope="module")
def gateway():
    os.environ.setdefault("CEP_SECRET_KEY", "ab" * 32)
    from cloud_edge_privacy import Gateway

    return Gateway("pseudonym")


def test_trade_words_leave_out_names_and_companies_people_work_at():
    assert trade_word("Python") and trade_word("sql") and trade_word("Dear")
    assert not trade_word("Julia") and not trade_word("Ruby")  # also first names
    assert not trade_word("Tableau") and not trade_word("Oracle")  # "I worked at Tableau" names an employer


def test_phrases_and_instruction_verbs_start_sentences_only():
    text = "Summarise this. Skills: C++, Power BI. Then summarise it."
    found = [text[a:b] for a, b in trade_phrases(text)]
    assert "Summarise" in found and "C++" in found and "Power BI" in found
    assert "summarise" not in found  # lower case, not at a sentence's start
    assert not trade_phrases("see researchgate.net")  # a domain's ".net" is no .NET
    titled = "Ask Dr. Write. Write to her."
    assert trade_phrases(titled) == [(0, 3), (15, 20)]  # "Ask" and the second "Write": the first is a surname
    # "Call Priya Nair at Acme" went out as "Michael Pasqual Nieto at Jakobsen ApS": the verb became a first name
    assert trade_phrases("Summarise it. Call Priya Nair at Acme.") == [(0, 9), (14, 18)]


def test_a_span_of_trade_terms_is_dropped_and_one_with_a_name_trimmed():
    text = "skilled in Python, SQL and Power BI; Dear Mr. Olsen"
    values = trade_phrases(text)
    at = lambda w: (text.index(w), text.index(w) + len(w))  # noqa: E731
    assert trade_trim(text, *at("Python, SQL and Power BI"), values) is None
    start, end = trade_trim(text, *at("Dear Mr. Olsen"), values)
    assert text[start:end] == "Mr. Olsen"


@pytest.mark.parametrize("text", [
    "Write a SQL query that returns the top 5 customers by revenue from the orders table.",
    "Summarise this meeting: the new laptop policy starts next month.",
])
def test_the_gateway_sends_requests_about_software_as_written(gateway, text):
    assert gateway.protect(text).text == text


def test_the_gateway_still_masks_the_people_and_employers_beside_them(gateway):
    text = "Rewrite my summary: analyst at Deloitte, skilled in Python and Power BI. Dear Mr. Olsen, thanks."
    sent = gateway.protect(text).text
    assert "skilled in Python and Power BI" in sent and "Dear Mr. " in sent, sent
    assert "Deloitte" not in sent and "Olsen" not in sent, sent
