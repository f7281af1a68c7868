"""Properties of the share coordinator over random request sequences (hypothesis): every
request is answered with a Kafka error code, never an exception; a reload of
`__share_group_state` equals the live state after every step; a fencing error writes nothing;
the durable state never holds a batch below the SPSO."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgroup import Cluster, Coordinator, ErrorCode
from kgroup.groups.share.coordinator import share_coordinator
from kgroup.protocol import request

G = ("g1", "g2")
_batch = st.builds(lambda f, n, s, c: {"first_offset": f, "last_offset": f + n, "delivery_state": s,
                                       "delivery_count": c},
                   st.integers(0, 60), st.integers(0, 9), st.sampled_from([0, 2, 4]), st.integers(1, 4))
_common = {"group": st.sampled_from(G), "partition": st.integers(-1, 2)}
_ops = st.one_of(
    st.fixed_dictionaries({"api": st.just("InitializeShareGroupState"), **_common,
                           "state_epoch": st.integers(-1, 3), "start_offset": st.integers(-1, 40)}),
    st.fixed_dictionaries({"api": st.just("ReadShareGroupState"), **_common, "leader_epoch": st.integers(-1, 4)}),
    st.fixed_dictionaries({"api": st.just("WriteShareGroupState"), **_common, "state_epoch": st.integers(-1, 3),
                           "leader_epoch": st.integers(-1, 4), "start_offset": st.integers(-1, 50),
                           "state_batches": st.lists(_batch, max_size=4)}),
    st.fixed_dictionaries({"api": st.just("DeleteShareGroupState"), **_common}),
    st.fixed_dictionaries({"api": st.just("ReadShareGroupStateSummary"), **_common,
                           "leader_epoch": st.integers(-1, 4)}),
)


def _send(c: Coordinator, op: dict):
    op = dict(op)
    api, group = op.pop("api"), op.pop("group")
    version = 1 if api == "WriteShareGroupState" else 0
    if version:
        op["delivery_complete_count"] = -1
    return c.handle(request(api, version, group_id=group, topics=[
        {"topic_id": c.cluster.topic_id("orders"), "partitions": [op]}]))


@settings(max_examples=150, deadline=None)
@given(st.lists(_ops, min_size=1, max_size=25), st.integers(0, 3))
def test_random_requests_reload_equals_live(ops, per_snapshot):
    c = Coordinator(cluster=Cluster({"orders": 2}, seed=5),
                    config={"share.coordinator.snapshot.update.records.per.snapshot": per_snapshot})
    sc = share_coordinator(c)
    # g1's share-partitions start initialised, so most writes and reads get through
    init = [{"api": "InitializeShareGroupState", "group": "g1", "partition": p, "state_epoch": 0,
             "start_offset": 0} for p in (0, 1)]
    for op in init + ops:
        before = len(c.share_state_log)
        r = _send(c, op)
        (p,) = r.results[0].partitions
        assert isinstance(p.error_code, ErrorCode)
        if p.error_code != ErrorCode.none:
            assert len(c.share_state_log) == before  # a refused request writes nothing
        for state in sc.states.values():
            if state.start_offset >= 0:
                assert all(b.last_offset >= state.start_offset for b in state.state_batches)
            assert all(a.last_offset < b.first_offset for a, b in zip(state.state_batches, state.state_batches[1:]))
        d = share_coordinator(Coordinator.load(c.share_state_log, cluster=c.cluster, config=c.config))
        assert (d.states, d.leader_epochs, d.state_epochs, d.update_counts) == \
            (sc.states, sc.leader_epochs, sc.state_epochs, sc.update_counts)
