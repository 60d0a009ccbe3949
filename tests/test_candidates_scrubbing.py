"""The personal-data masks: what each pattern catches and what its check lets through."""

from __future__ import annotations

import pytest

from assay.candidates.minhash import near_duplicates, normalise, signatures
from assay.candidates.scrubbing import Scrubber, iban_valid, luhn_valid, parse_patterns
from assay.errors import InvalidInput


@pytest.mark.parametrize(
    ("text", "masked", "kind"),
    [
        ("write to jane.doe+news@mail.example.co.uk today", "write to [EMAIL] today", "email"),
        ("call +49 (30) 123 45 67 now", "call [PHONE] now", "phone"),
        ("or 030-1234567.", "or [PHONE].", "phone"),
        ("pay to GB82 WEST 1234 5698 7654 32 please", "pay to [IBAN] please", "iban"),
        ("card 4111-1111-1111-1111 expired", "card [CARD] expired", "card"),
    ],
)
def test_each_kind_is_masked(text: str, masked: str, kind: str) -> None:
    scrubber = Scrubber()
    assert scrubber.scrub(text) == masked
    assert dict(scrubber.counts) == {kind: 1}


@pytest.mark.parametrize(
    "text",
    [
        "the meeting on 2024-11-14 at 10:30",  # a date is no phone
        "the board minutes 2024 09 12 say",
        "in 2025 we had 1200 trips",  # numbers too short
        "number 1234 5678 9012 3456 is not a card",  # fails Luhn (and is no phone: 16 digits)
    ],
)
def test_what_fails_a_check_is_left(text: str) -> None:
    scrubber = Scrubber()
    assert scrubber.scrub(text) == text
    assert not scrubber.counts


def test_checks() -> None:
    # an IBAN failing its check is not called one (its long digit run still reads as a phone:
    # masking too much is the safe side)
    assert "[IBAN]" not in Scrubber().scrub("account DE00 3704 0044 0532 0130 00")
    assert iban_valid("DE89 3704 0044 0532 0130 00") and not iban_valid("DE88370400440532013000")
    assert luhn_valid("4111 1111 1111 1111") and not luhn_valid("4111 1111 1111 1112")


def test_user_named_patterns_and_their_errors() -> None:
    scrubber = Scrubber(patterns=parse_patterns([r"ORDER=#\d{5}"]))
    assert scrubber.scrub("where is order #12345?") == "where is order [ORDER]?"
    with pytest.raises(InvalidInput, match="write NAME=REGEX"):
        parse_patterns(["no-equals-sign"])
    with pytest.raises(InvalidInput, match="'BAD': not a regular expression"):
        parse_patterns(["BAD=(unclosed"])


def test_near_duplicates_join_rewordings_and_keep_other_questions_apart() -> None:
    questions = [
        "How do I get a refund for my train ticket?",
        "how do i get a refund for my train tickets",
        "How do I get a refund for my train ticket please?",
        "Where is lost property from the ferry kept?",
        "How do I get a refund for my ferry pass?",
    ]
    roots = near_duplicates(signatures([normalise(q) for q in questions]))
    assert roots[0] == roots[1] == roots[2]
    assert len({roots[0], roots[3], roots[4]}) == 3
    assert normalise("What's the  REFUND policy?") == normalise("whats the refund policy")
