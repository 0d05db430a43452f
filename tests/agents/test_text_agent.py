"""The text (LLM) agent against a local OpenAI-compatible stand-in: the check before a run, retries with bounded
backoff, and which failures stop the run, which are the endpoint's and which are the agent's."""

from __future__ import annotations

import socket
from datetime import datetime, timezone

import pytest

from tests.agents.openai_stand_in import Failure, StandIn
from vlui.agents import make_agent
from vlui.agents.text_agent import STOP_AFTER_FAILED_REQUESTS, EndpointError, TextAgent, retry_after_seconds
from vlui.errors import VluiError

OBS = {"instruction": "open the clock app", "xml": '<hierarchy rotation="0"><node index="0" text="Clock" '
       'resource-id="" class="android.widget.TextView" package="launcher" content-desc="" clickable="true" '
       'enabled="true" bounds="[0,0][100,100]" /></hierarchy>'}
INFO = {"screen_size": (1080, 2160)}


@pytest.fixture(autouse=True)
def no_key(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def agent(url: str, model: str = "stand-in", **kw) -> tuple[TextAgent, list[float]]:
    """A text agent whose waits are recorded instead of slept."""
    sleeps: list[float] = []
    kw.setdefault("retry_delay_s", 0.5)
    return TextAgent(url, model, sleep=sleeps.append, **kw), sleeps


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------------- before a run
def test_check_passes_for_a_working_endpoint_and_sends_the_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-right")
    with StandIn(key="sk-right") as llm:
        agent(llm.url)[0].check()
    assert llm.requests[0][:2] == ("GET", "/v1/models") and llm.requests[0][2]["Authorization"] == "Bearer sk-right"


def test_check_asks_a_server_without_a_model_list_for_one_token() -> None:
    with StandIn(list_models=False) as llm:
        agent(llm.url)[0].check()
    (body,) = llm.chat_requests()
    assert body["max_tokens"] == 1 and body["model"] == "stand-in"


@pytest.mark.parametrize("case, message", [
    ("unreachable", "does not work (GET http://127.0.0.1:{port}/v1/models: [Errno 111] Connection refused): start "
                    "the server or fix agent.url"),
    ("no key", "wants an API key (HTTP 401 to GET /models: Incorrect API key provided): put it in the environment "
               "variable OPENAI_API_KEY"),
    ("wrong key", "refused the API key in $OPENAI_API_KEY (HTTP 401 to GET /models: Incorrect API key provided): set "
                  "a valid key"),
    ("unknown model", "does not serve agent.model='gpt-nothing'; it serves: stand-in, other"),
    ("no /v1 in the URL", "http://127.0.0.1:{port} answered HTTP 404 to POST /chat/completions: no route "
                          "/chat/completions: agent.url must be the API's base URL (e.g. http://127.0.0.1:8000/v1)"),
    ("unknown model, no model list", "answered HTTP 404 to POST /chat/completions: The model `gpt-nothing` does not "
                                     "exist.: agent.url must be the API's base URL"),
    ("overloaded", "does not work (GET http://127.0.0.1:{port}/v1/models failed 3 time(s), last with HTTP 503: "
                   "loading the model)"),
])
def test_check_says_in_one_line_what_to_fix(monkeypatch, case: str, message: str) -> None:
    if case == "wrong key":
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with StandIn(key="sk-right" if "key" in case else None, models=("stand-in", "other"),
                 list_models="no model list" not in case and "URL" not in case) as llm:
        url = llm.url.removesuffix("/v1") if "URL" in case else llm.url
        if case == "unreachable":
            url = f"http://127.0.0.1:{closed_port()}/v1"
        llm.failures = [Failure(503, message="loading the model")] * 3 if case == "overloaded" else []
        a, sleeps = agent(url, "gpt-nothing" if "model" in case else "stand-in", max_retries=2)
        with pytest.raises(VluiError) as err:
            a.check()
    text = str(err.value)
    port = url.split(":")[2].split("/")[0]
    assert message.format(port=port) in text and "\n" not in text
    assert sleeps == ([0.5, 1.0] if case == "overloaded" else [])  # a server that is not there is not waited for


def test_a_url_that_is_not_http_and_a_key_with_a_line_break_are_refused_at_once(monkeypatch) -> None:
    with pytest.raises(VluiError, match=r"agent.url must be an http:// or https:// URL .* not '127.0.0.1:8000/v1'"):
        make_agent({"name": "text", "url": "127.0.0.1:8000/v1", "model": "m"})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc\n")  # trailing newline from a file: fine
    assert make_agent({"name": "text", "url": "http://h/v1", "model": "m"}).api_key == "sk-abc"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc def")
    with pytest.raises(VluiError, match=r"the API key in \$OPENAI_API_KEY contains spaces"):
        make_agent({"name": "text", "url": "http://h/v1", "model": "m"})
    with pytest.raises(VluiError, match="agent.max_retries must be at least 0, not -1"):
        make_agent({"name": "text", "url": "http://h/v1", "model": "m", "max_retries": -1})


# ---------------------------------------------------------------------------------------------------- during a run
def test_rate_limits_and_server_errors_are_retried_honouring_retry_after() -> None:
    with StandIn() as llm:
        llm.failures = [Failure(429, {"Retry-After": "7"}), Failure(503), Failure(502)]
        a, sleeps = agent(llm.url)
        a.reset(None)
        action = a.act(OBS, INFO)
    assert action is not None  # the fourth request's answer
    assert len(llm.chat_requests()) == 4
    assert sleeps == [7.0, 1.0, 2.0]  # the server's Retry-After, then retry_delay_s doubled each time


def test_backoff_is_bounded_and_the_failure_is_the_endpoints() -> None:
    with StandIn() as llm:
        llm.fail = lambda prompt: Failure(503, message="overloaded")
        a, sleeps = agent(llm.url, max_retries=4, retry_delay_s=1.0, retry_max_delay_s=3.0)
        with pytest.raises(EndpointError, match=r"failed 5 time\(s\), last with HTTP 503: overloaded"):
            a.act(OBS, INFO)
    assert sleeps == [1.0, 2.0, 3.0, 3.0] and len(llm.chat_requests()) == 5
    assert issubclass(EndpointError, ConnectionError)  # what the evaluation runner records as infrastructure


def test_a_retry_after_longer_than_allowed_fails_the_request_without_waiting() -> None:
    with StandIn() as llm:
        llm.failures = [Failure(429, {"Retry-After": "3600"}, "daily quota")]
        a, sleeps = agent(llm.url, retry_max_delay_s=60)
        with pytest.raises(EndpointError, match=r"HTTP 429: daily quota and asked to wait 3600 s \(Retry-After\), "
                                                r"more than agent.retry_max_delay_s=60"):
            a.act(OBS, INFO)
    assert sleeps == []


def test_retry_after_as_an_http_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now) == 30.0
    assert retry_after_seconds("Thu, 01 Jan 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None) is None


def test_a_bad_request_is_not_retried() -> None:
    with StandIn() as llm:
        llm.failures = [Failure(400, message="prompt too long")]
        a, sleeps = agent(llm.url)
        with pytest.raises(EndpointError, match="HTTP 400: prompt too long"):
            a.act(OBS, INFO)
    assert sleeps == [] and len(llm.chat_requests()) == 1


def test_a_key_refused_during_the_run_stops_it() -> None:
    with StandIn() as llm:
        llm.failures = [Failure(401, message="key revoked")]
        a, _ = agent(llm.url)
        with pytest.raises(VluiError, match="refused|wants an API key") as err:
            a.act(OBS, INFO)
    assert not isinstance(err.value, ConnectionError) and "run the same command again" in str(err.value)


def test_an_endpoint_that_is_down_stops_the_run_after_a_few_failed_requests() -> None:
    with StandIn() as llm:
        llm.fail = lambda prompt: Failure(503)
        a, _ = agent(llm.url, max_retries=0)
        for _ in range(STOP_AFTER_FAILED_REQUESTS - 1):
            with pytest.raises(EndpointError):
                a.act(OBS, INFO)
        with pytest.raises(VluiError, match=f"failed {STOP_AFTER_FAILED_REQUESTS} requests in a row") as err:
            a.act(OBS, INFO)
    assert not isinstance(err.value, ConnectionError)


def test_requests_the_endpoint_refuses_one_by_one_do_not_stop_the_run() -> None:
    with StandIn() as llm:  # e.g. a screen too long for the model's context: that episode's failure, not an outage
        llm.fail = lambda prompt: Failure(400, message="prompt too long")
        a, _ = agent(llm.url, max_retries=0)
        for _ in range(2 * STOP_AFTER_FAILED_REQUESTS):
            with pytest.raises(EndpointError, match="HTTP 400: prompt too long"):
                a.act(OBS, INFO)


def test_a_working_request_resets_the_count_of_failures_in_a_row() -> None:
    with StandIn() as llm:
        a, _ = agent(llm.url, max_retries=0)
        for _ in range(3):
            llm.failures = [Failure(503)] * (STOP_AFTER_FAILED_REQUESTS - 1)
            for _ in range(STOP_AFTER_FAILED_REQUESTS - 1):
                with pytest.raises(EndpointError):
                    a.act(OBS, INFO)
            assert a.act(OBS, INFO) is not None
