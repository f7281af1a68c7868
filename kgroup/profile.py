"""Behaviour profiles: where the seeds (KIPs) and Apache Kafka disagree.

`profile="kip"` (default) follows the seed text; `profile="kafka"` follows Apache Kafka
today. Every fork lives here as one named flag, consulted where behaviour differs, so
the differences stay in one visible place (see docs in README, "Profiles").
"""
from __future__ import annotations

from dataclasses import dataclass

#: The Apache Kafka that `profile="kafka"` follows, and both profiles where the seeds are silent:
#: trunk as its group-coordinator tests stood in mid-2026, split by group type, after PR #22245
#: (Streams static membership) and with KAFKA-20268 (groups start at epoch 1), KAFKA-20442 (an empty
#: group's assignment epoch catches up) and KAFKA-19233 (a fenced member rejoins with epoch 0).
KAFKA_REFERENCE = "Apache Kafka 4.4.0 (the running broker; its group-coordinator tests were ported from trunk after PR #22245)"
#: What `profile="kip"` follows.
SEEDS_REFERENCE = "the seeds: KIP-1071 with Kafka PR #22245, KIP-932, KIP-709, KIP-345"


@dataclass(frozen=True)
class Profile:
    name: str
    #: the text this profile follows (`KAFKA_REFERENCE` or `SEEDS_REFERENCE`)
    follows: str
    #: Streams: a join with topology epoch EG+1 updates the topology (kip) vs INVALID_REQUEST (kafka).
    streams_topology_updates: bool
    #: Streams: FENCED_MEMBER_EPOCH removes the member (kip) vs writes nothing (kafka).
    streams_fenced_member_removed: bool
    #: Streams: source topics given as regular expressions are resolved (kip) vs rejected (kafka).
    streams_source_topic_regex: bool
    #: Streams: a changelog topic that is also a source topic is invalid (kip) vs accepted (kafka).
    streams_changelog_may_be_source: bool
    #: Streams: ASSIGNMENT_DELAYED status while the initial rebalance delay runs (kafka only).
    streams_assignment_delayed_status: bool
    #: Streams: an empty MemberId is allowed when joining and RebalanceTimeoutMs must be > 0 then,
    #: task sets must be disjoint and valid for the topology (kip) vs Kafka's narrower checks.
    streams_kip_request_validation: bool
    #: Streams: with no assignor configured the coordinator picks highly_available for stateful
    #: topologies and sticky for stateless ones (kip) vs sticky always (kafka).
    streams_assignor_by_statefulness: bool
    #: Streams: any change of a dynamic member's metadata bumps the group epoch (kafka) vs only the
    #: KIP's list: topology epoch, rack, client tags, process id (kip; static members under both).
    streams_bump_on_any_member_change: bool
    #: Streams: AcceptableRecoveryLag is carried in v0's int32 field (kip) vs left 0 there (kafka).
    streams_acceptable_recovery_lag_in_v0: bool
    #: Streams: online migration (KIP-1071): a StreamsGroupHeartbeat converts a classic group with
    #: members and the Streams group serves their JoinGroup/SyncGroup/Heartbeat (kip) vs only an
    #: empty classic group converts and the other protocol is refused while members remain (kafka).
    streams_online_migration: bool
    #: Streams: a static member leaving with -2 while revoking has its pending revocations treated
    #: as revoked, UNREVOKED -> STABLE (kip: PR #22245's review) vs left pending (kafka: the merged
    #: PR took the fix-up out, KAFKA-20680, to change consumer groups at the same time).
    streams_static_leave_revokes_pending: bool
    #: Streams: a change of any of the KIP's three assignment configs bumps the group epoch (kip) vs
    #: of num.standby.replicas only, the one Kafka's group metadata record keeps (kafka).
    streams_bump_on_every_assignment_config: bool
    #: Streams: the MISSING_INTERNAL_TOPICS detail says how creating the topics stands (kip: KIP-1071
    #: "whether an attempt to create the topics was made") vs Kafka's "Internal topics are missing: ..." (kafka).
    streams_internal_topic_progress: bool
    #: Streams: a standby or warm-up task becoming active on the same member is revoked from its old
    #: role first (kip: KIP-1071's online-migration example, C drops warm-up 0_2 before epoch 25) vs
    #: kept in it until the active task is granted (kafka: CurrentAssignmentBuilder's promotions).
    streams_promotion_keeps_old_role: bool
    #: Streams: members reconcile towards the target assignment (kip) vs towards the refined
    #: assignment kept per assignment epoch once warm-up replicas are configured, from which a
    #: heartbeat naming a static member's instance id under another member id moves that member's
    #: share before it is validated, even when it is then refused (kafka 4.4.0:
    #: `refinedAssignmentForEpoch`, `relabelRefinedAssignment`; raised in the review of Kafka PR #23542).
    streams_kept_refined_assignment: bool
    #: Share: when the SPSO moves, Acquired records below it are archived (kip) vs keep their lock (kafka).
    share_archive_acquired_below_spso: bool
    #: Share: the durable-state write of an acknowledgement carries the SPSO it moves to (kip:
    #: KIP-932's table, "Acknowledge 100-109: SPSO=110") vs the SPSO before it, with the
    #: acknowledged batches; the move is written with the next change (kafka 4.4.0's records).
    share_ack_write_carries_new_spso: bool
    #: Share: a leader that finds no start offset writes the one share.auto.offset.reset gave at
    #: once (kip: KIP-932's table starts from a durable "SPSO=100") vs with the first change (kafka
    #: 4.4.0's records: a leader that moves before then computes it again).
    share_reset_spso_written_at_load: bool
    #: Share: the simple assignor gives every member all partitions of its subscribed topics (kip)
    #: vs Kafka's SimpleAssignor, which hashes members onto partitions and spreads the rest (kafka).
    share_assign_all_partitions_to_all_members: bool
    #: Share: only share-partitions whose durable state is initialised are assigned, so a joining
    #: member gets its partitions on a later heartbeat (kafka) vs all subscribed ones at once (kip).
    share_assign_initialized_only: bool
    #: Share: a group EMPTY for offsets.retention.minutes goes DEAD and is deleted, share state
    #: included (kip) vs Kafka's ShareGroup.shouldExpire() == false: only DeleteGroups deletes it.
    share_empty_group_expires: bool
    #: Share: the SPEO is one past the last in-flight record, "SPEO=110" after fetching 100-109 (kip)
    #: vs Kafka's SharePartition.endOffset, the last in-flight offset (SPSO when none is in flight).
    share_speo_exclusive: bool
    #: Share: a consumer may ask for its own acquisition lock duration (the draft's
    #: record.lock.duration.ms, within group.share.record.lock.duration.max.ms) (kip) vs only the
    #: group's share.record.lock.duration.ms applies (kafka).
    share_consumer_lock_duration: bool
    #: Share: the draft's defaults where a setting is not given: 200 in-flight records per
    #: share-partition (group.share.record.lock.partition.limit) and 1000 share sessions
    #: (max.share.session.cache.slots) (kip) vs Kafka's 2000 and 2000 (kafka).
    share_draft_defaults: bool
    #: Authorization: StreamsGroupHeartbeat needs DESCRIBE_CONFIGS on every topic of the topology
    #: (kip: KIP-1071 "Required ACL") vs DESCRIBE (kafka: KafkaApis.handleStreamsGroupHeartbeat).
    streams_topic_acl_describe_configs: bool
    #: Authorization: StreamsGroupDescribe needs READ on the group (kip: KIP-1071 "Required ACL")
    #: vs DESCRIBE (kafka: KafkaApis.handleStreamsGroupDescribe, as for every other describe).
    streams_describe_needs_read: bool
    #: Streams groups: KIP-1263 assignment batching. A new target assignment is computed at every
    #: group epoch bump (kip: KIP-1071 "Every time the group epoch is bumped, a new task assignment is
    #: computed") vs at most once per group.streams.assignment.interval.ms, Kafka's default 1000 ms
    #: (kafka). Consumer and share groups batch under both (no seed says otherwise); a configured
    #: interval applies under both.
    assignment_batching: bool


#: The seeds' side of every fork (each a `Profile` flag); Apache Kafka's is the other.
_KIP_FORKS = {
    "streams_topology_updates": True,
    "streams_fenced_member_removed": True,
    "streams_source_topic_regex": True,
    "streams_changelog_may_be_source": False,
    "streams_assignment_delayed_status": False,
    "streams_kip_request_validation": True,
    "streams_assignor_by_statefulness": True,
    "streams_bump_on_any_member_change": False,
    "streams_acceptable_recovery_lag_in_v0": True,
    "streams_online_migration": True,
    "streams_static_leave_revokes_pending": True,
    "streams_bump_on_every_assignment_config": True,
    "streams_internal_topic_progress": True,
    "streams_promotion_keeps_old_role": False,
    "streams_kept_refined_assignment": False,
    "share_archive_acquired_below_spso": True,
    "share_ack_write_carries_new_spso": True,
    "share_reset_spso_written_at_load": True,
    "share_assign_all_partitions_to_all_members": True,
    "share_assign_initialized_only": False,
    "share_empty_group_expires": True,
    "share_speo_exclusive": True,
    "share_consumer_lock_duration": True,
    "share_draft_defaults": True,
    "streams_topic_acl_describe_configs": True,
    "streams_describe_needs_read": True,
    "assignment_batching": False,
}

KIP = Profile(name="kip", follows=SEEDS_REFERENCE, **_KIP_FORKS)
KAFKA = Profile(name="kafka", follows=KAFKA_REFERENCE, **{flag: not kip for flag, kip in _KIP_FORKS.items()})

PROFILES = {p.name: p for p in (KIP, KAFKA)}


def get_profile(profile: "str | Profile") -> Profile:
    """The profile named `profile` ("kip" or "kafka")."""
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise ValueError(f"unknown profile {profile!r}; choose 'kip' (the seeds) or 'kafka' (Apache Kafka)") from None
