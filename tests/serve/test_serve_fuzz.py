"""Schemathesis, a third-party OpenAPI fuzzer, against a real read-only and a real writable server: whatever
it sends, the server never answers with a server error (5xx), every answer has a status and a body its
OpenAPI description declares, and a request the description calls valid is accepted (positive data: every
rule the server enforces is stated in the schema; refusing one is a 4xx other than 404 or 409). Bounded to
a few examples per endpoint so the pair runs in about two minutes here."""

from __future__ import annotations

import shutil

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import (not_a_server_error, positive_data_acceptance, response_schema_conformance,
                                 status_code_conformance)
from serve_helpers import TOKEN, Server

EXAMPLES = 100


@pytest.fixture(scope="module")
def read_only(metadata_index):
    running = Server(metadata_index.path, "--no-topics", token=None)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def writable(metadata_index, tmp_path_factory):
    target = tmp_path_factory.mktemp("fuzzed") / "idx"
    shutil.copytree(metadata_index.path, target)
    running = Server(target, "--writable", "--no-topics")
    yield running
    running.stop()


CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance, positive_data_acceptance]
# An uploaded batch is a file whose content (a corpus of records in one of four formats) no JSON Schema can
# describe: its name's suffix is stated, the rest is read as `build` reads a file (errors name its lines). So
# is a library sent to /recommend (a BibTeX, RIS, CSL-JSON or CSV file's text: one that matches no paper and
# holds no title is refused, 422); its other rules are stated (a liked id or a library).
NOT_DESCRIBABLE = {"POST /duplicates/check-file": [positive_data_acceptance],
                   "POST /recommend": [positive_data_acceptance]}

FUZZ = settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck), database=None)


def fuzz(server: Server, headers: dict[str, str] | None = None) -> list[str]:
    """Every operation of the server's OpenAPI description, ``EXAMPLES`` generated requests each; returns the
    requests answered with a server error or with what the description does not declare (Schemathesis's own
    checks), one line each."""
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    failures: list[str] = []
    sent: list[int] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= (12 if headers else 9), [o.label for o in operations]  # writes: only where possible
    for operation in operations:
        @given(case=operation.as_strategy())
        @FUZZ
        def run(case):
            sent.append(1)
            try:
                checks = [c for c in CHECKS if c not in NOT_DESCRIBABLE.get(operation.label, [])]
                case.call_and_validate(checks=checks, headers=headers, timeout=60)
            except Exception as exc:  # noqa: BLE001  (collected, so every operation is fuzzed)
                failures.append(f"{operation.label}: {str(exc).splitlines()[0]} ({case.path_parameters} "
                                f"{case.query} {str(case.body)[:200]})")
        run()
    assert len(sent) >= 5 * len(operations)  # every operation was fuzzed
    return failures


def test_a_read_only_server_never_answers_with_a_server_error(read_only):
    assert fuzz(read_only) == []


def test_a_writable_server_never_answers_with_a_server_error(writable):
    assert fuzz(writable, {"Authorization": f"Bearer {TOKEN}"}) == []
