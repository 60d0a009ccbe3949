"""The OpenAI-compatible client against a scripted server on a loopback port."""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from assay.llm import (
    GeneratorError,
    GeneratorSettings,
    Message,
    generate_answer,
    make_generator,
    prompt_hash,
    stream_answer,
)
from assay.llm.openai_compat import OpenAICompatGenerator
from tests.fakes.openai_server import (
    Behaviour,
    EchoJson,
    FakeOpenAI,
    Raw,
    Reply,
    Slow,
    Status,
    Stream,
)

MESSAGES = [Message("system", "Be brief."), Message("user", "What is Assay?")]

Serve = Callable[..., FakeOpenAI]


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def serve(fake_server: FakeOpenAI) -> Serve:
    """Give the module's server a new script for this test."""

    def start(*script: Behaviour) -> FakeOpenAI:
        return fake_server.reset(script or (Reply(),))

    return start


class Sleeps(list[float]):
    """Records the waits the client asks for instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(fake: FakeOpenAI, **options: Any) -> OpenAICompatGenerator:
    options.setdefault("sleep", Sleeps())
    return OpenAICompatGenerator(base_url=fake.url, model="test-model", **options)


def stream_until_error(generator: OpenAICompatGenerator) -> tuple[list[str], GeneratorError]:
    received: list[str] = []
    with pytest.raises(GeneratorError) as caught:
        for delta in generator.stream(MESSAGES):
            received.append(delta)
    return received, caught.value


# --- normal replies -------------------------------------------------------------------------


def test_reply_becomes_a_generation_with_model_usage_and_hash(serve: Serve) -> None:
    fake = serve(Reply("Assay builds gold sets.", model="served-model"))
    generation = client(fake, api_key="sk-test", temperature=0.3, max_tokens=64).generate(MESSAGES)

    assert generation.text == "Assay builds gold sets."
    assert generation.model == "served-model"
    assert generation.finish_reason == "stop"
    assert generation.usage == {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
    assert generation.prompt_hash == prompt_hash(MESSAGES)
    assert generation.params == {
        "kind": "openai",
        "base_url": fake.url,
        "model": "test-model",
        "temperature": 0.3,
        "max_tokens": 64,
        "json_mode": False,
    }
    body = fake.requests[0]
    assert body["model"] == "test-model"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is Assay?"},
    ]
    assert body["stream"] is False
    assert body["temperature"] == 0.3
    assert body["max_tokens"] == 64
    assert "response_format" not in body
    assert fake.headers[0]["authorization"] == "Bearer sk-test"


def test_no_authorization_header_without_a_key(serve: Serve) -> None:
    fake = serve(Reply())
    client(fake).generate(MESSAGES)
    assert "authorization" not in fake.headers[0]


def test_trailing_slash_in_base_url_is_ignored(serve: Serve) -> None:
    fake = serve(Reply("ok"))
    generator = OpenAICompatGenerator(base_url=fake.url + "/", model="m")
    assert generator.generate(MESSAGES).text == "ok"


def test_stream_yields_the_text_deltas(serve: Serve) -> None:
    fake = serve(Stream(pieces=("Gold ", "sets ", "from ", "documents.")))
    deltas = list(client(fake).stream(MESSAGES))
    assert deltas == ["Gold ", "sets ", "from ", "documents."]
    assert fake.requests[0]["stream"] is True
    assert fake.headers[0]["accept"] == "text/event-stream"


def test_stream_ending_with_finish_reason_but_no_done_is_complete(serve: Serve) -> None:
    fake = serve(Stream(pieces=("a", "b"), done=False))
    assert "".join(client(fake).stream(MESSAGES)) == "ab"


def test_stream_answered_with_a_whole_reply_still_yields_the_text(serve: Serve) -> None:
    fake = serve(Reply("not streamed"))
    assert list(client(fake).stream(MESSAGES)) == ["not streamed"]


def test_json_mode_asks_for_a_json_object(serve: Serve) -> None:
    fake = serve(EchoJson())
    generation = client(fake, json_mode=True).generate(MESSAGES)
    assert json.loads(generation.text) == {
        "response_format": {"type": "json_object"},
        "messages": 2,
    }
    assert generation.params["json_mode"] is True


def test_json_mode_refuses_content_that_is_not_json(serve: Serve) -> None:
    fake = serve(Reply("certainly! here is your JSON"))
    with pytest.raises(GeneratorError, match="malformed reply: JSON mode was asked for"):
        client(fake, json_mode=True).generate(MESSAGES)


# --- errors that are not retried ------------------------------------------------------------


def test_401_names_the_key_variable_and_is_not_retried(serve: Serve) -> None:
    fake = serve(Status(401, "Incorrect API key provided"))
    with pytest.raises(GeneratorError) as caught:
        client(fake, api_key="sk-wrong").generate(MESSAGES)
    message = str(caught.value)
    assert f"LLM endpoint {fake.url}/chat/completions: 401 Unauthorized" in message
    assert "check ASSAY_LLM_API_KEY" in message
    assert "Incorrect API key provided" in message
    assert caught.value.status == 401
    assert fake.count == 1


def test_401_without_a_key_says_none_is_set(serve: Serve) -> None:
    fake = serve(Status(401))
    with pytest.raises(GeneratorError, match=r"check ASSAY_LLM_API_KEY \(no key is set\)"):
        client(fake).generate(MESSAGES)


def test_404_names_the_model_and_the_endpoint(serve: Serve) -> None:
    fake = serve(Status(404, "The model does not exist"))
    generator = OpenAICompatGenerator(base_url=fake.url, model="gpt-nope")
    with pytest.raises(GeneratorError) as caught:
        generator.generate(MESSAGES)
    assert f"404 — model 'gpt-nope' not found at {fake.url}" in str(caught.value)
    assert fake.count == 1


def test_400_passes_the_servers_explanation_on(serve: Serve) -> None:
    fake = serve(Status(400, "max_tokens is too large"))
    with pytest.raises(GeneratorError, match=r"400 Bad Request \(max_tokens is too large\)"):
        client(fake).generate(MESSAGES)
    assert fake.count == 1


def test_malformed_json_reply(serve: Serve) -> None:
    fake = serve(Raw("{not json at all"))
    with pytest.raises(GeneratorError, match="malformed reply: not JSON"):
        client(fake).generate(MESSAGES)
    assert fake.count == 1


@pytest.mark.parametrize(
    ("body", "missing"),
    [
        ("{}", "missing choices[0]"),
        ('{"choices": []}', "missing choices[0]"),
        ('{"choices": [{"message": {"role": "assistant"}}]}', "missing choices[0].message.content"),
        ('{"choices": [{"message": {"content": null}}]}', "missing choices[0].message.content"),
    ],
)
def test_reply_with_missing_fields(serve: Serve, body: str, missing: str) -> None:
    fake = serve(Raw(body))
    with pytest.raises(GeneratorError) as caught:
        client(fake).generate(MESSAGES)
    assert f"malformed reply: {missing}" in str(caught.value)


def test_error_object_in_a_200_reply(serve: Serve) -> None:
    fake = serve(Raw('{"error": {"message": "context length exceeded"}}'))
    with pytest.raises(GeneratorError, match=r"reported an error \(context length exceeded\)"):
        client(fake).generate(MESSAGES)


# --- retries --------------------------------------------------------------------------------


def test_429_then_success_waits_as_retry_after_says(serve: Serve) -> None:
    fake = serve(Status(429, headers={"Retry-After": "3"}), Reply("finally"))
    sleeps = Sleeps()
    assert client(fake, sleep=sleeps).generate(MESSAGES).text == "finally"
    assert fake.count == 2
    assert sleeps == [3.0]


def test_retry_after_is_capped(serve: Serve) -> None:
    fake = serve(Status(429, headers={"Retry-After": "86400"}), Reply("ok"))
    sleeps = Sleeps()
    # the endpoint's gate pauses for the capped time too (really waiting): a short cap
    client(fake, sleep=sleeps, max_wait_s=0.75).generate(MESSAGES)
    assert sleeps == [0.75]


def test_429_every_time_gives_up_after_all_tries(serve: Serve) -> None:
    fake = serve(Status(429, headers={"Retry-After": "0"}))
    with pytest.raises(GeneratorError) as caught:
        client(fake, retries=2).generate(MESSAGES)
    assert "429 rate limited after 3 tries" in str(caught.value)
    assert caught.value.tries == 3
    assert fake.count == 3


def test_500_every_time_gives_up_after_all_tries(serve: Serve) -> None:
    fake = serve(Status(500, "internal"))
    sleeps = Sleeps()
    with pytest.raises(GeneratorError) as caught:
        client(fake, retries=2, sleep=sleeps).generate(MESSAGES)
    assert "500 server error after 3 tries (internal)" in str(caught.value)
    assert fake.count == 3
    assert len(sleeps) == 2


def test_no_retries_means_one_try(serve: Serve) -> None:
    fake = serve(Status(503))
    with pytest.raises(GeneratorError, match="503 server error after 1 try"):
        client(fake, retries=0).generate(MESSAGES)
    assert fake.count == 1


def test_backoff_doubles_with_jitter(serve: Serve) -> None:
    fake = serve(Status(502), Status(503), Status(504), Reply("ok"))
    sleeps = Sleeps()
    client(fake, retries=3, backoff_s=1.0, max_wait_s=100, sleep=sleeps).generate(MESSAGES)
    assert fake.count == 4
    assert len(sleeps) == 3
    for wait, full in zip(sleeps, (1.0, 2.0, 4.0), strict=True):
        assert full / 2 <= wait <= full


def test_slow_reply_times_out_and_is_retried(serve: Serve) -> None:
    fake = serve(Slow(seconds=5))
    with pytest.raises(GeneratorError) as caught:
        client(fake, timeout_s=0.2, retries=1).generate(MESSAGES)
    assert "timed out after 0.2 s (2 tries)" in str(caught.value)
    assert caught.value.tries == 2
    assert fake.count == 2


def test_connection_refused_is_retried_then_explained() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps = Sleeps()
    generator = OpenAICompatGenerator(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", retries=2, sleep=sleeps
    )
    with pytest.raises(GeneratorError) as caught:
        generator.generate(MESSAGES)
    assert f"connection refused at 127.0.0.1:{port} after 3 tries" in str(caught.value)
    assert len(sleeps) == 2


def test_transport_can_be_injected() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        reply = {"choices": [{"message": {"content": "mocked"}, "finish_reason": "stop"}]}
        return httpx.Response(200, json=reply)

    generator = OpenAICompatGenerator(
        base_url="http://127.0.0.1:9/v1", model="m", transport=httpx.MockTransport(handler)
    )
    generation = generator.generate(MESSAGES)
    assert generation.text == "mocked"
    assert generation.model == "m"  # the reply named none
    assert str(seen[0].url) == "http://127.0.0.1:9/v1/chat/completions"


# --- streams that fail ------------------------------------------------------------------------


def test_stream_dropped_mid_way_keeps_the_partial_text(serve: Serve) -> None:
    fake = serve(Stream(pieces=("Hel", "lo", " wor", "ld"), break_after=2))
    received, error = stream_until_error(client(fake))
    assert received == ["Hel", "lo"]
    assert error.partial_text == "Hello"
    assert "stream interrupted after 5 characters" in str(error)
    assert fake.count == 1  # text was already handed out: no retry


def test_stream_with_a_garbage_line(serve: Serve) -> None:
    fake = serve(Stream(pieces=("One", " two"), garbage_after=1))
    received, error = stream_until_error(client(fake))
    assert received == ["One"]
    assert error.partial_text == "One"
    assert "stream interrupted after 3 characters: malformed event" in str(error)


def test_stream_that_just_stops_is_interrupted(serve: Serve) -> None:
    fake = serve(Stream(pieces=("half",), finish=False, done=False))
    received, error = stream_until_error(client(fake))
    assert received == ["half"]
    assert "stream interrupted after 4 characters: the stream ended without [DONE]" in str(error)


def test_stream_is_retried_before_any_text(serve: Serve) -> None:
    fake = serve(Status(429, headers={"Retry-After": "0"}), Stream(pieces=("ok",)))
    assert list(client(fake).stream(MESSAGES)) == ["ok"]
    assert fake.count == 2


def test_stream_refused_outright(serve: Serve) -> None:
    fake = serve(Status(401))
    received, error = stream_until_error(client(fake))
    assert received == []
    assert error.partial_text == ""
    assert "401 Unauthorized" in str(error)


def test_stream_times_out_before_the_first_byte(serve: Serve) -> None:
    fake = serve(Slow(seconds=5))
    _received, error = stream_until_error(client(fake, timeout_s=0.2, retries=0))
    assert "timed out after 0.2 s (1 try)" in str(error)


# --- through the package's entry points -------------------------------------------------------

PASSAGES = [
    ("travel-policy.md", "Private cars earn 0.30 EUR per kilometre."),
    ("leave.md", "Staff get 30 days of leave."),
]


def settings_for(fake: FakeOpenAI, **changes: Any) -> GeneratorSettings:
    return GeneratorSettings(kind="openai", base_url=fake.url, model="test-model", **changes)


def test_generate_answer_renders_the_prompt_and_reads_citations(serve: Serve) -> None:
    fake = serve(Reply("0.30 EUR per km [1]; see also [2], not [9]. Again [1]."))
    generator = make_generator(settings_for(fake), api_key="")
    generation = generate_answer(generator, "Mileage rate?", PASSAGES)

    prompt = fake.requests[0]["messages"][-1]["content"]
    assert "[1] travel-policy.md\nPrivate cars earn 0.30 EUR per kilometre." in prompt
    assert "Question: Mileage rate?" in prompt
    assert [(c.marker, c.label, c.passage) for c in generation.citations] == [
        (1, "travel-policy.md", 0),
        (2, "leave.md", 1),
    ]
    assert all(c.start is None for c in generation.citations)


def test_stream_answer_streams_from_the_endpoint(serve: Serve) -> None:
    fake = serve(Stream(pieces=("30 days", " [2]")))
    generator = make_generator(settings_for(fake), api_key="")
    assert "".join(stream_answer(generator, "How much leave?", PASSAGES)) == "30 days [2]"


def test_key_comes_from_the_environment(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = serve(Reply())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.delenv("ASSAY_LLM_API_KEY", raising=False)
    make_generator(settings_for(fake)).generate(MESSAGES)
    monkeypatch.setenv("ASSAY_LLM_API_KEY", "sk-assay")
    make_generator(settings_for(fake)).generate(MESSAGES)
    assert [h["authorization"] for h in fake.headers] == ["Bearer sk-openai", "Bearer sk-assay"]


def test_the_key_is_never_stored_or_shown(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = serve(Reply())
    monkeypatch.setenv("ASSAY_LLM_API_KEY", "sk-secret-123")
    settings = settings_for(fake)
    generator = make_generator(settings)
    generation = generator.generate(MESSAGES)

    assert "api_key" not in dataclasses.asdict(settings)
    assert "api_key" not in generation.params
    assert "sk-secret-123" not in json.dumps(dataclasses.asdict(settings))
    assert "sk-secret-123" not in json.dumps(generation.params)
    assert "sk-secret-123" not in repr(generator)
    assert fake.headers[0]["authorization"] == "Bearer sk-secret-123"
