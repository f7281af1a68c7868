"""Mutation fuzzing of every request kgroup serves (reliability issue, part 4).

Start from the valid requests real clients and an admin sent to a coordinator in a realistic
state (`badinput_world`: classic incl. static members, consumer, Streams, share groups with
open share sessions and Acquired records, committed offsets), take any version kio has for the
API, replace a few fields with values kio's types and nullability allow, and send it through
`Coordinator.handle`. Kafka answers a malformed request with an error code in a response of the
same API and version, never by dropping the connection on an exception, and whatever it wrote
must load again on failover. So:

- no exception escapes `handle` (a `PendingResponse` is an answer too);
- the response is the kio response class of that API and version and kio can write it
  (every field the version has, of the right type: what the client would read);
- `Coordinator.load` of the logs after the request rebuilds the same groups.
"""
from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kio.serial import entity_writer

from badinput_mutations import at_version, mutate
from badinput_world import profile_settings, world

from kgroup import Coordinator
from kgroup.protocol import api_name, response_class, supported_versions
from kgroup.runtime import HANDLERS, PendingResponse


def _wire_ok(entity) -> bool:
    """Whether kio can write the entity (a request a real client could put on the wire)."""
    try:
        entity_writer(type(entity))(io.BytesIO(), entity)
    except Exception:  # noqa: BLE001 - kio says "does not fit the wire" by any exception
        return False
    return True


def check_answer(c: Coordinator, req, response) -> None:
    """The checks every mutated request's answer must pass (see the module docstring)."""
    key, version = int(type(req).__api_key__), int(type(req).__version__)
    if isinstance(response, PendingResponse):
        # held back until the rebalance phase completes: an answer too. (Not advanced here: the
        # world's timers are closures over the coordinator it was copied from.)
        if not response.done:
            return
        response = response.response
    assert type(response) is response_class(key, version), type(response)
    entity_writer(type(response))(io.BytesIO(), response)  # raises if a field does not fit the version
    reloaded = Coordinator.load(c.log, share_state_log=c.share_state_log)
    assert sorted(reloaded.groups) == sorted(c.groups)


def _apis() -> list[int]:
    import kgroup.coordinator  # noqa: F401  (registers every handler)
    return sorted(HANDLERS)


def test_every_api_has_a_seed():
    """The world reaches every API the coordinator serves: nothing goes unfuzzed."""
    w = world()
    missing = [api_name(k) for k in _apis() if not w.seeds.get(k)]
    assert not missing


@pytest.mark.parametrize("api_key", _apis(), ids=api_name)
# three times the profile's examples per API: one example costs ~15 ms, and rarer mutations (a
# duplicated protocol reaching a rebalance) need that many to be met in a ci run
@settings(profile_settings(), max_examples=3 * profile_settings().max_examples,
          suppress_health_check=[*profile_settings().suppress_health_check,
                                 HealthCheck.function_scoped_fixture])  # a run total
@given(data=st.data())
def test_mutated_requests_get_an_error_code_never_an_exception(api_key, data, reliability):
    w = world()
    seed = data.draw(st.sampled_from(w.seeds[api_key]), label="seed")
    version = data.draw(st.sampled_from(supported_versions(api_key)), label="version")
    req = at_version(seed, version)
    n = data.draw(st.integers(1, 3), label="mutations")
    req, changes = mutate(data.draw, w, req, n)
    assume(_wire_ok(req))
    data.draw(st.just(changes), label="changes")  # shown in the falsifying example
    reliability["bad inputs tried"] += 1
    response = w.c.handle(req)
    check_answer(w.c, req, response)
