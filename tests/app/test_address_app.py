"""The browser's address is never left behind: a write of the query parameters that a rerun cuts off (Streamlit
updates the session's parameters, then a pending rerun stops the run as the message is queued) is sent again
by the session's next run. Seen in the browser follow test: followers left on the heatmap page with the flip
page's parameters, because the next run found the parameters already set and sent nothing."""
from __future__ import annotations

import pytest
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.testing.v1 import AppTest


def writes_the_layer():
    from explorer.ui import params

    params.mend()
    params.put("layer", "3")


@pytest.fixture
def a_rerun_cuts_off_the_first_address_message(monkeypatch):
    """Every address message that reaches the browser, in order; the first one is cut off by a rerun requested
    just before it is queued (as a teacher's next change or the class watcher requests one)."""
    sent, cut = [], []
    real = ScriptRunner._enqueue_forward_msg

    def enqueue(self, msg):
        address = msg.WhichOneof("type") == "page_info_changed"
        if address and not cut:
            cut.append(msg.page_info_changed.query_string)
            ctx = get_script_run_ctx()
            self._requests.request_rerun(RerunData(query_string=ctx.query_string,
                                                   page_script_hash=ctx.page_script_hash))
        real(self, msg)   # raises the rerun before passing the message on
        if address:
            sent.append(msg.page_info_changed.query_string)
    monkeypatch.setattr(ScriptRunner, "_enqueue_forward_msg", enqueue)
    return sent, cut


def test_an_address_message_cut_off_by_a_rerun_is_sent_again(a_rerun_cuts_off_the_first_address_message):
    sent, cut = a_rerun_cuts_off_the_first_address_message
    at = AppTest.from_function(writes_the_layer).run()
    assert not at.exception
    assert cut == ["layer=3"]   # the first write never reached the browser
    assert at.query_params == {"layer": "3"}   # what the server believes after the rerun
    assert sent == ["layer=3"]   # and what the browser was told, once, by the rerun


def test_writes_that_change_nothing_send_nothing(a_rerun_cuts_off_the_first_address_message):
    sent, _ = a_rerun_cuts_off_the_first_address_message
    at = AppTest.from_function(writes_the_layer).run()
    before = len(sent)
    at.run()
    assert len(sent) == before and not at.exception
