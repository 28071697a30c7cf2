"""The API's description is the API: response models, the one real error body with every status a route gives,
a bearer scheme for the write endpoints, which are listed only where writes are possible; strict fields (``k``
is a number, not ``true``); ``HEAD /`` and a favicon answer without an error."""

from __future__ import annotations

import shutil

import pytest
from fastapi.testclient import TestClient
from serve_helpers import TOKEN

from embedsearch.serve import ServeSettings, create_app

WRITES = {("/documents", "post"), ("/documents/{doc_id}", "delete"), ("/compact", "post")}


@pytest.fixture(scope="module")
def read_only(metadata_index):
    with TestClient(create_app(metadata_index.path, ServeSettings(topics=False))) as client:
        yield client


@pytest.fixture(scope="module")
def writable(metadata_index, tmp_path_factory):
    target = tmp_path_factory.mktemp("contract") / "idx"
    shutil.copytree(metadata_index.path, target)
    with TestClient(create_app(target, ServeSettings(topics=False, writable=True), TOKEN)) as client:
        yield client


def operations(client: TestClient) -> dict[tuple[str, str], dict]:
    spec = client.get("/openapi.json").json()
    return {(path, method): op for path, item in spec["paths"].items() for method, op in item.items()}


def schema_of(op: dict, status: str) -> str:
    return op["responses"][status]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]


def test_write_endpoints_are_listed_only_where_writes_are_possible(read_only, writable):
    assert WRITES.isdisjoint(operations(read_only)) and ("/search", "get") in operations(read_only)
    assert WRITES <= set(operations(writable))
    assert read_only.post("/compact").status_code == 403  # still refused, not missing


def test_the_methods_a_path_allows_are_those_this_server_serves(read_only, writable):
    """A read-only server does not offer the writes it refuses; a writable one names them."""
    def allowed(client, path):
        answer = client.request("OPTIONS", path)
        assert answer.status_code == 405
        return {m.strip() for m in answer.headers["allow"].split(",") if m.strip()}

    assert allowed(read_only, "/documents/x") == {"GET"} and allowed(read_only, "/compact") == set()
    assert allowed(writable, "/documents/x") == {"GET", "DELETE"} and allowed(writable, "/compact") == {"POST"}
    assert allowed(read_only, "/search") == {"GET", "POST"}


def test_writes_declare_the_bearer_scheme_and_every_status_they_give(writable):
    spec = writable.get("/openapi.json").json()
    assert spec["components"]["securitySchemes"]["HTTPBearer"] == {
        "type": "http", "scheme": "bearer", "description": "The token the server was started with (--writable)."}
    add = operations(writable)[("/documents", "post")]
    assert {"HTTPBearer": []} in add["security"]
    assert {"201", "400", "401", "403", "409", "413", "422", "503"} <= set(add["responses"])
    assert schema_of(add, "201") == "AddOut" and schema_of(add, "409") == "ErrorBody"


def test_reads_declare_their_response_models_and_the_real_error_body(read_only):
    ops = operations(read_only)
    expected = {("/search", "get"): "SearchOut", ("/search", "post"): "SearchBatchOut",
                ("/similar/{doc_id}", "get"): "SimilarOut", ("/documents/{doc_id}", "get"): "DocumentOut",
                ("/topics", "get"): "TopicsOut", ("/duplicates/check", "post"): "DuplicatesOut",
                ("/health", "get"): "HealthOut", ("/info", "get"): "InfoOut"}
    assert {key: schema_of(ops[key], "200") for key in expected} == expected
    assert {"414", "422"} <= set(ops[("/search", "get")]["responses"])
    assert "404" in ops[("/similar/{doc_id}", "get")]["responses"]
    for op in ops.values():
        assert schema_of(op, "422") == "ErrorBody"  # FastAPI's own HTTPValidationError is not what we send
    refused = read_only.get("/search", params={"q": "robots", "k": 0})
    assert refused.status_code == 422 and set(refused.json()) == {"error", "status"}


def test_fields_are_strict_and_text_may_not_be_blank(read_only):
    assert read_only.post("/search", json={"queries": ["robots"], "k": True}).status_code == 422
    assert read_only.post("/search", json={"queries": ["robots"], "k": 3}).status_code == 200
    blank = read_only.post("/similar", json={"text": "   "})
    assert blank.status_code == 422 and blank.json()["error"] == "text: must hold text (not blank, without NUL characters)"
    assert read_only.post("/duplicates/check", json={"text": "x", "threshold": True}).status_code == 422


def test_head_and_favicon_answer_without_an_error(read_only):
    assert read_only.head("/").status_code == 200
    assert read_only.get("/favicon.ico").status_code == 204
